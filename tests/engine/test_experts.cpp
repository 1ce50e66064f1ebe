// The dual-expert trainer's rules (dual-expert-training.md §2, §5–§7, §12): routing frequency
// and timestep ranges under a fixed seed, the idle expert left bit for bit, per-sample eval
// routing on a mixed batch, and the checkpoint round trip of both experts.
#include <QtTest/QtTest>

#include <cmath>

#include "core/error.h"
#include "core/fs.h"
#include "io/state_dict.h"
#include "test_paths.h"
#include "train/expert_routing.h"
#include "train/expert_step.h"
#include "train/experts_checkpoint.h"

using namespace ws;

namespace {
template <typename F>
bool throws_error(F&& f) {
  try {
    f();
  } catch (const ws::Error&) {
    return true;
  }
  return false;
}

models::WanConfig tiny() {
  models::WanConfig c;
  c.in_dim = c.out_dim = 48;
  c.dim = 32;
  c.ffn_dim = 64;
  c.num_heads = 2;
  c.num_layers = 1;
  c.text_dim = 16;
  c.text_len = 8;
  return c;
}

std::unique_ptr<train::ExpertStep> make_expert(uint64_t seed) {
  torch::manual_seed(seed);
  train::ExpertStepOptions o;
  o.learning_rate = 1e-3;
  o.clip.max_grad_norm = 1.0;
  return std::make_unique<train::ExpertStep>(models::WanModel(tiny()), o);
}

train::ExpertStepInput sample(int64_t i, double t) {
  auto g = at::detail::createCPUGenerator(static_cast<uint64_t>(100 + i));
  train::ExpertStepInput in;
  in.x0 = torch::randn({48, 1, 4, 4}, g, torch::TensorOptions().dtype(torch::kFloat));
  in.noise = torch::randn({48, 1, 4, 4}, g, torch::TensorOptions().dtype(torch::kFloat));
  in.context = torch::randn({5, 16}, g, torch::TensorOptions().dtype(torch::kFloat));
  in.t = t;
  in.sigma = train::sigma_from_t(t);
  return in;
}

// Every parameter, Adam moment and the Adam count, cloned.
io::StateDict snapshot(train::ExpertStep& e) {
  io::StateDict s;
  for (auto& [k, v] : io::module_state_dict(*e.model())) s["p." + k] = v.detach().clone();
  for (auto& [k, v] : e.optimizer().state_dict()) s["o." + k] = v.clone();
  return s;
}

bool identical(const io::StateDict& a, const io::StateDict& b) {
  if (a.size() != b.size()) return false;
  for (auto& [k, v] : a) {
    auto it = b.find(k);
    if (it == b.end() || !torch::equal(v, it->second)) return false;
  }
  return true;
}
}  // namespace

class TestExperts : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void boundary_rounds_half_to_even_and_validates() {
    train::RoutingOptions o;
    QCOMPARE(o.boundary(), int64_t{875});
    o.boundary_ratio = 0.9;
    QCOMPARE(o.boundary(), int64_t{900});
    o.boundary_ratio = 0.8125;  // 812.5 → 812 (Python round), not 813
    QCOMPARE(o.boundary(), int64_t{812});
    for (double bad : {0.0, 1.0, -0.1, 0.0004, 0.9996}) {
      o.boundary_ratio = bad;
      QVERIFY2(throws_error([&] { o.boundary(); }), qPrintable(QString::number(bad)));
    }
  }

  void routing_frequency_within_bounds() {
    // P(high) = 1 − ratio; 5σ binomial bounds over 40000 steps, for T2V and I2V.
    for (double ratio : {0.875, 0.9}) {
      train::RoutingOptions o;
      o.boundary_ratio = ratio;
      const int64_t n = 40000;
      int64_t high = 0;
      for (int64_t s = 0; s < n; ++s) high += train::draw_route(o, 1234, s);
      const double p = 1 - ratio, sd = std::sqrt(n * p * (1 - p));
      QVERIFY2(std::fabs(static_cast<double>(high) - n * p) < 5 * sd,
               qPrintable(QString("ratio %1: %2 high of %3").arg(ratio).arg(high).arg(n)));
    }
    // Mode B at shift 12: P(high) = 1 − u_boundary ≈ 0.632 (T2V).
    train::RoutingOptions b;
    b.mode = "shift_consistent";
    b.shift = 12;
    QVERIFY(std::fabs(b.p_high() - (1 - 0.36842)) < 1e-3);
    int64_t high = 0;
    for (int64_t s = 0; s < 20000; ++s) high += train::draw_route(b, 5, s);
    QVERIFY(std::fabs(high / 20000.0 - b.p_high()) < 5 * std::sqrt(b.p_high() * (1 - b.p_high()) / 20000));
  }

  void routing_is_keyed_by_seed_and_step_only() {
    train::RoutingOptions o;
    for (int64_t s = 0; s < 200; ++s) {
      auto a = train::draw_step(o, 9, s, 0, 0, 2), b = train::draw_step(o, 9, s, 3, 1, 5);
      QCOMPARE(a.high, b.high);  // every micro-step and rank routes the same way
    }
  }

  void timestep_ranges() {
    for (double ratio : {0.875, 0.9}) {
      train::RoutingOptions o;
      o.boundary_ratio = ratio;
      const int64_t b = o.boundary();
      int64_t lo_min = 1000, lo_max = -1, hi_min = 1000, hi_max = -1;
      std::vector<int64_t> seen(1000, 0);
      for (int64_t s = 0; s < 20000; ++s) {
        auto d = train::draw_step(o, 77, s, 0, 0, 4);
        QCOMPARE(d.t.size(), size_t{4});
        for (size_t i = 0; i < d.t.size(); ++i) {
          const double t = d.t[i];
          QCOMPARE(t, std::floor(t));  // integers in Mode A
          const auto ti = static_cast<int64_t>(t);
          ++seen[static_cast<size_t>(ti)];
          if (d.high) {
            QVERIFY2(ti >= b && ti < 1000, qPrintable(QString::number(ti)));
            hi_min = std::min(hi_min, ti), hi_max = std::max(hi_max, ti);
          } else {
            QVERIFY2(ti >= 0 && ti < b, qPrintable(QString::number(ti)));
            lo_min = std::min(lo_min, ti), lo_max = std::max(lo_max, ti);
          }
          QCOMPARE(d.sigma[i], train::sigma_from_t(t));
        }
      }
      // Both ends of both ranges are reached.
      QCOMPARE(hi_min, b);
      QCOMPARE(hi_max, int64_t{999});
      QCOMPARE(lo_min, int64_t{0});
      QCOMPARE(lo_max, b - 1);
      // The marginal over t is uniform: 80000 draws, 80 per value expected.
      for (int64_t t = 0; t < 1000; ++t) QVERIFY2(seen[static_cast<size_t>(t)] > 30 && seen[static_cast<size_t>(t)] < 150, qPrintable(QString("t=%1: %2").arg(t).arg(seen[static_cast<size_t>(t)])));
    }
    // Mode B: float t on the routed side of the boundary, in shifted time.
    train::RoutingOptions m;
    m.mode = "shift_consistent";
    for (int64_t s = 0; s < 2000; ++s) {
      auto d = train::draw_step(m, 3, s, 0, 0, 3);
      for (double t : d.t) QVERIFY(d.high ? (t >= 875 && t < 1000) : (t >= 0 && t < 875));
    }
  }

  void sigma_and_weights() {
    QCOMPARE(train::sigma_from_t(0), static_cast<float>(0.003 / 1.002));
    QCOMPARE(train::sigma_from_t(1000), 1.0f);
    double sum = 0;
    for (int t = 0; t < 1000; ++t) sum += train::bsmntw_weight(t);
    QVERIFY(std::fabs(sum - 1000) < 1e-6);
  }

  void accumulate_matches_forward_backward_bitwise() {
    // The parity path (forward_backward) and the trainer's path (weight 1) are the same bits.
    auto a = make_expert(1), b = make_expert(1);
    auto in = sample(0, 600);
    auto ra = a->forward_backward(in);
    b->begin_accumulation();
    const double lb = b->accumulate(in, 1.0);
    auto cb = b->finish_gradients();
    QCOMPARE(ra.loss, lb);
    QCOMPARE(ra.clip.grad_norm, cb.grad_norm);
    a->update();
    b->update();
    QVERIFY(identical(snapshot(*a), snapshot(*b)));
  }

  void idle_expert_is_untouched() {
    auto high = make_expert(11), low = make_expert(12);
    train::RoutingOptions o;
    const auto low0 = snapshot(*low);
    // A few steps routed to high only (weights, moments and the count of low stay bit for bit).
    for (int64_t s = 0; s < 3; ++s) {
      high->begin_accumulation();
      high->accumulate(sample(s, 900 + s), 0.5);
      high->accumulate(sample(s + 10, 950 + s), 0.5);
      high->finish_gradients();
      high->update();
      high->release_gradients();
    }
    QVERIFY(identical(low0, snapshot(*low)));
    QCOMPARE(low->optimizer().step_count(), int64_t{0});
    QCOMPARE(low->global_step(), int64_t{0});
    QCOMPARE(high->global_step(), int64_t{3});
    for (const auto& p : low->parameters()) QVERIFY(!p.grad().defined());  // no gradient buffers
    for (const auto& p : high->parameters()) QVERIFY(!p.grad().defined());
    // And the other way round after low trains once.
    const auto high0 = snapshot(*high);
    low->begin_accumulation();
    const double loss = low->accumulate(sample(5, 100), 1.0);
    QVERIFY(std::isfinite(loss));
    low->finish_gradients();
    low->update();
    QVERIFY(identical(high0, snapshot(*high)));
    QVERIFY(!identical(low0, snapshot(*low)));
    QCOMPARE(low->optimizer().step_count(), int64_t{1});
  }

  void eval_routes_each_sample() {
    auto high = make_expert(21), low = make_expert(22);
    // Make the experts differ in their output (a fresh head is zero).
    for (auto* e : {high.get(), low.get()}) {
      e->begin_accumulation();
      e->accumulate(sample(e == high.get() ? 1 : 2, 500), 1.0);
      e->finish_gradients();
      e->update();
    }
    torch::NoGradGuard ng;
    const int64_t boundary = 875;
    // t[0] is on the other side of the boundary from most of the batch; 875 itself goes high.
    const std::vector<double> ts{950, 100, 874, 875, 300, 999};
    std::vector<torch::Tensor> xt, ctx;
    for (size_t i = 0; i < ts.size(); ++i) {
      auto s = sample(static_cast<int64_t>(30 + i), ts[i]);
      xt.push_back(train::ExpertStep::noisy_latent(s.x0, s.noise, s.sigma));
      ctx.push_back(s.context);
    }
    auto got = train::routed_predict(high->model(), low->model(), boundary, xt, ts, ctx);
    QCOMPARE(got.size(), ts.size());
    bool differs_from_batch_route = false;
    for (size_t i = 0; i < ts.size(); ++i) {
      auto tt = torch::tensor({static_cast<float>(ts[i])});
      auto ph = high->model()->forward(xt[i], tt, ctx[i]);
      auto pl = low->model()->forward(xt[i], tt, ctx[i]);
      // The `where(t ≥ boundary, v̂_high, v̂_low)` form, per sample.
      auto want = torch::where(torch::tensor(ts[i] >= boundary), ph, pl);
      QVERIFY2(torch::equal(got[i], want), qPrintable(QString("sample %1").arg(i)));
      QVERIFY(!torch::equal(ph, pl));
      // Routing the whole batch by t[0] (high) would be wrong for the low samples.
      if (!torch::equal(got[i], ph)) differs_from_batch_route = true;
    }
    QVERIFY(differs_from_batch_route);
    QVERIFY(train::routes_high(875, boundary));
    QVERIFY(!train::routes_high(874.999, boundary));
  }

  void checkpoint_round_trip() {
    auto high = make_expert(31), low = make_expert(32);
    for (int i = 0; i < 2; ++i) {
      high->begin_accumulation();
      high->accumulate(sample(i, 900), 1.0);
      high->finish_gradients();
      high->update();
    }
    low->begin_accumulation();
    low->accumulate(sample(7, 10), 1.0);
    low->finish_gradients();
    low->update();
    train::ExpertsState st;
    st.global_step = 3, st.steps_high = 2, st.steps_low = 1, st.epoch = 1, st.seed = 5, st.eval_seed = 6;
    st.boundary_ratio = 0.9, st.boundary = 900, st.routing_mode = "uniform", st.shift = 5;
    st.cursor.epoch = 1, st.cursor.pos = 4, st.cursor.batch_in_epoch = 2;
    st.cursor.buckets = {{"video:1.0", {data::SampleRef{3, 1, 2}}}};
    st.extra["fp8"] = "none";
    QTemporaryDir tmp;
    const std::string dir = tmp.path().toStdString() + "/checkpoint-3";
    train::write_experts_checkpoint(dir, *high, *low, st);
    for (const char* f : {"high_noise_transformer/config.json", "high_noise_transformer/diffusion_pytorch_model.safetensors",
                          "low_noise_transformer/config.json", "low_noise_transformer/diffusion_pytorch_model.safetensors",
                          "trainer_state/optimizer_high.safetensors", "trainer_state/optimizer_low.safetensors",
                          "trainer_state/state.json"})
      QVERIFY2(fs::exists(dir + "/" + f), f);
    auto ck = train::read_experts_checkpoint(dir);
    QCOMPARE(ck.state.global_step, int64_t{3});
    QCOMPARE(ck.state.steps_high, int64_t{2});
    QCOMPARE(ck.state.steps_low, int64_t{1});
    QCOMPARE(ck.state.boundary, int64_t{900});
    QCOMPARE(ck.state.eval_seed, int64_t{6});
    QVERIFY(ck.state.cursor == st.cursor);
    QCOMPARE(ck.state.to_json().dump(), st.to_json().dump());  // state.json round-trips
    QCOMPARE(ck.high_config.value("_class_name", ""), std::string("WanModel"));
    // Both experts and both optimizers restore bit for bit into fresh experts.
    auto high2 = make_expert(99), low2 = make_expert(98);
    for (auto [e, w, o, cj] : {std::make_tuple(high2.get(), &ck.high_weights, &ck.high_optimizer, &ck.high_config),
                               std::make_tuple(low2.get(), &ck.low_weights, &ck.low_optimizer, &ck.low_config)}) {
      QCOMPARE(models::WanConfig::from_json(*cj).to_json(), tiny().to_json());
      io::load_state_dict(*e->model(), *w, io::LoadMode::Strict, "ck");
      e->optimizer().load_state_dict(*o, "ck");
    }
    QVERIFY(identical(snapshot(*high), snapshot(*high2)));
    QVERIFY(identical(snapshot(*low), snapshot(*low2)));
    QCOMPARE(high2->optimizer().step_count(), int64_t{2});
    // A corrupt state.json is a one-line error naming the file.
    fs::write_file_atomic(dir + "/trainer_state/state.json", "{\"format_version\": 1}");
    QVERIFY(throws_error([&] { train::read_experts_checkpoint(dir); }));
  }
};

QTEST_APPLESS_MAIN(TestExperts)
#include "test_experts.moc"
