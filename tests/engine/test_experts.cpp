// SPDX-License-Identifier: Apache-2.0
// The dual-expert trainer's rules (docs/design/dual-expert-training.md §2, §5–§7, §12): routing frequency
// and timestep ranges under a fixed seed, the idle expert left bit for bit, per-sample eval
// routing on a mixed batch, the checkpoint round trip of both experts, the i2v/ti2v image
// conditioning, fp8 e4m3 weight storage, and training from latent files (16-channel experts).
#include <QtTest/QtTest>
#include <QProcess>

#include <cmath>

#include "core/error.h"
#include "core/fs.h"
#include "io/safetensors.h"
#include "io/state_dict.h"
#include "models/fp8.h"
#include "test_paths.h"
#include "train/experts/expert_conditioning.h"
#include "train/experts/expert_routing.h"
#include "train/experts/expert_step.h"
#include "train/experts/experts_checkpoint.h"

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
      for (int64_t t = 0; t < 1000; ++t)
        QVERIFY2(seen[static_cast<size_t>(t)] > 30 && seen[static_cast<size_t>(t)] < 150,
                 qPrintable(QString("t=%1: %2").arg(t).arg(seen[static_cast<size_t>(t)])));
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

  void fp8_codes_are_e4m3fn() {
    // Every finite code decodes and encodes back to itself; NaN codes stay NaN.
    auto codes = torch::arange(256, torch::kLong).to(torch::kUInt8);
    auto vals = models::fp8_e4m3_decode(codes);
    auto back = models::fp8_e4m3_encode(vals);
    for (int c = 0; c < 256; ++c) {
      const bool nan = (c & 0x7f) == 0x7f;
      QVERIFY2(nan ? std::isnan(vals[c].item<float>()) : back[c].item<uint8_t>() == c, qPrintable(QString::number(c)));
    }
    // Known values, round to nearest with ties to even, saturation, subnormals, signed zero.
    auto enc = [](float x) { return static_cast<int>(models::fp8_e4m3_encode(torch::tensor({x}))[0].item<uint8_t>()); };
    QCOMPARE(enc(1.0f), 0x38);
    QCOMPARE(enc(448.0f), 0x7e);
    QCOMPARE(enc(1000.0f), 0x7e);
    QCOMPARE(enc(-1000.0f), 0xfe);
    QCOMPARE(enc(std::ldexp(1.0f, -9)), 0x01);   // the smallest subnormal
    QCOMPARE(enc(std::ldexp(1.0f, -10)), 0x00);  // half of it: the tie goes to the even code 0
    QCOMPARE(enc(1.0625f), 0x38);                // between 1 (0x38) and 1.125 (0x39): even
    QCOMPARE(enc(1.1875f), 0x3a);                // between 1.125 and 1.25 (0x3a): even
    QCOMPARE(enc(1.07f), 0x39);
    QCOMPARE(enc(-0.0f), 0x80);
    QCOMPARE(enc(-2.0f), 0xc0);
    QCOMPARE(models::fp8_e4m3_decode(torch::tensor({0x7e}).to(torch::kUInt8))[0].item<float>(), 448.0f);
    // Relative error of a random tensor's round trip stays within e4m3's half-ulp (2^-4).
    auto x = torch::randn({1000}) * 10;
    auto q = models::fp8_quantize(x);
    // (values whose scaled magnitude is in the normal range, ≥ 2^-6).
    auto rel = ((q.dequantize(torch::kFloat) - x).abs() / x.abs())
                   .masked_select(x.abs() * q.scale >= 0.015625)
                   .max()
                   .item<double>();
    QVERIFY2(rel <= 0.0625 + 1e-6, qPrintable(QString::number(rel)));
  }

  // The stored copies: Float8_e4m3fn where LibTorch has the dtype (its cast, the very bytes of the
  // codec above, saturating), uint8 codes on LibTorch 1.13; either reads back through fp8_to.
  void fp8_copies_use_the_native_dtype_where_there_is_one() {
    torch::manual_seed(5);
    auto w = torch::randn({64, 48}) * 3;
    w[0][0] = 0;  // a zero, the largest magnitude and values in the subnormal range all round alike
    w[0][1] = -1e-6;
    auto q = models::fp8_quantize(w);
    QCOMPARE(q.codes.scalar_type(), models::fp8_storage_dtype());
#if WANSTUDIO_HAVE_FLOAT8
    QCOMPARE(models::fp8_storage_dtype(), torch::kFloat8_e4m3fn);
#else
    QCOMPARE(models::fp8_storage_dtype(), torch::kUInt8);
#endif
    auto bytes = q.codes.view(torch::kUInt8);
    QVERIFY(torch::equal(bytes, models::fp8_e4m3_encode(w * q.scale)));
    QVERIFY(torch::equal(models::fp8_to(q.codes, torch::kFloat), models::fp8_e4m3_decode(bytes)));
    QVERIFY(torch::equal(q.dequantize(torch::kFloat), models::fp8_e4m3_decode(bytes) / q.scale));
#if WANSTUDIO_HAVE_FLOAT8
    // Every finite value of the format, and the halfway points between neighbours (ties to even).
    auto all = models::fp8_e4m3_decode(torch::arange(256, torch::kLong).to(torch::kUInt8));
    all = all.masked_select(~all.isnan());
    auto sorted = std::get<0>(all.sort());
    auto mids = (sorted.slice(0, 0, -1) + sorted.slice(0, 1)) / 2;
    for (const auto& v : {all, mids, torch::tensor({500.0f, -1e4f, 448.1f})})
      QVERIFY(
          torch::equal(v.clamp(-448, 448).to(torch::kFloat8_e4m3fn).view(torch::kUInt8), models::fp8_e4m3_encode(v)));
#endif
  }

  void fp8_linear_reads_the_copy_and_passes_gradients_through() {
    torch::manual_seed(3);
    torch::nn::Linear lin(8, 5);
    auto q = models::fp8_quantize(lin->weight);
    auto wq = q.dequantize(torch::kFloat).detach();
    auto x = torch::randn({3, 8}, torch::requires_grad());
    auto y = models::fp8_linear(x, lin->weight, lin->bias, q);
    // The forward uses the fp8 copy, not the weight.
    QVERIFY(torch::allclose(y, torch::addmm(lin->bias, x, wq.t()), 1e-6, 1e-6));
    QVERIFY(!torch::allclose(y, lin(x), 1e-7, 1e-7));
    auto g = torch::randn({3, 5});
    y.backward(g);
    QVERIFY(torch::allclose(x.grad(), torch::matmul(g, wq), 1e-6, 1e-6));
    QVERIFY(torch::allclose(lin->weight.grad(), torch::matmul(g.t(), x.detach()), 1e-6, 1e-6));  // straight through
    QVERIFY(torch::allclose(lin->bias.grad(), g.sum(0), 1e-6, 1e-6));
  }

  void fp8_step_is_close_to_full_precision() {
    auto a = make_expert(41), b = make_expert(41);
    b->model()->set_fp8(true);
    QVERIFY(b->model()->fp8_bytes() > 0);
    QVERIFY(identical(snapshot(*a), snapshot(*b)));  // the fp8 copies are not parameters
    std::vector<double> la, lb;
    for (int i = 0; i < 3; ++i) {
      auto in = sample(i, 300 + 200 * i);
      for (auto [e, l] : {std::make_pair(a.get(), &la), std::make_pair(b.get(), &lb)}) {
        e->begin_accumulation();
        l->push_back(e->accumulate(in, 1.0));
        e->finish_gradients();
        e->update();
      }
    }
    for (size_t i = 0; i < la.size(); ++i) {
      QVERIFY(std::isfinite(lb[i]));
      QVERIFY2(std::fabs(la[i] - lb[i]) <= 0.03 * la[i],
               qPrintable(QString("step %1: %2 vs %3").arg(i).arg(la[i]).arg(lb[i])));
      if (i > 0) QVERIFY(la[i] != lb[i]);  // the fp8 path really ran
    }
    // The copies follow the master weights after each update.
    auto* blk = b->model()->blocks[0]->as<models::WanBlockImpl>();
    auto fresh = models::fp8_quantize(blk->self_attn->q->weight);
    QVERIFY(torch::equal(fresh.codes.view(torch::kUInt8), blk->self_attn->fp8[0].codes.view(torch::kUInt8)));
    b->model()->set_fp8(false);
    QCOMPARE(b->model()->fp8_bytes(), int64_t{0});
  }

  // mixed_precision bf16 on a GPU: bf16 matmuls and attention from fp32 master weights. The
  // plumbing runs on the CPU too: dtypes, accuracy and gradients are checked here.
  void bf16_compute_keeps_fp32_masters() {
    auto a = make_expert(51), b = make_expert(51);
    b->model()->set_compute_dtype(torch::kBFloat16);
    auto in = sample(3, 600);
    auto mi = train::expert_model_input(in);
    torch::NoGradGuard no_grad;
    // A fresh head is zero: perturb it so the output depends on the blocks.
    for (auto* e : {a.get(), b.get()}) {
      torch::manual_seed(8);
      e->model()->head->head->weight.normal_(0, 0.05);
    }
    auto ya = a->model()->forward(mi.x_t, mi.t, in.context), yb = b->model()->forward(mi.x_t, mi.t, in.context);
    QCOMPARE(yb.scalar_type(), torch::kFloat);
    const double rel = ((ya - yb).norm() / ya.norm()).item<double>();
    QVERIFY2(rel > 0 && rel < 0.02, qPrintable(QString::number(rel)));
  }

  void bf16_step_updates_fp32_weights() {
    auto a = make_expert(52), b = make_expert(52);
    b->model()->set_compute_dtype(torch::kBFloat16);
    b->model()->set_fp8(true);  // fp8 copies decode straight to bf16
    std::vector<double> la, lb;
    for (int i = 0; i < 2; ++i) {
      auto in = sample(i, 200 + 500 * i);
      for (auto [e, l] : {std::make_pair(a.get(), &la), std::make_pair(b.get(), &lb)}) {
        e->begin_accumulation();
        l->push_back(e->accumulate(in, 1.0));
        for (const auto& p : e->parameters())
          if (p.grad().defined()) QCOMPARE(p.grad().scalar_type(), torch::kFloat);
        e->finish_gradients();
        e->update();
      }
    }
    for (const auto& p : b->parameters()) QCOMPARE(p.scalar_type(), torch::kFloat);
    for (size_t i = 0; i < la.size(); ++i)
      QVERIFY2(std::fabs(la[i] - lb[i]) <= 0.05 * la[i], qPrintable(QString("%1 vs %2").arg(la[i]).arg(lb[i])));
    // Moving an expert to where it already is changes nothing.
    auto before = snapshot(*b);
    b->to(torch::kCPU);
    QVERIFY(identical(before, snapshot(*b)));
  }

  void i2v_conditioning() {
    auto img = torch::randn({48, 3, 4, 4});
    auto y = train::i2v_y(img);
    QCOMPARE(y.sizes().vec(), (std::vector<int64_t>{52, 3, 4, 4}));
    QVERIFY(torch::equal(y.narrow(0, 0, 4).select(1, 0), torch::ones({4, 4, 4})));  // frame 0: the image
    QVERIFY(torch::equal(y.narrow(0, 0, 4).narrow(1, 1, 2), torch::zeros({4, 2, 4, 4})));
    QVERIFY(torch::equal(y.narrow(0, 4, 48), img));
    QCOMPARE(train::expected_in_dim(train::image_conditioning("i2v"), 16), int64_t{36});
    QCOMPARE(train::expected_in_dim(train::image_conditioning("i2v"), 48), int64_t{100});
    QCOMPARE(train::expected_in_dim(train::image_conditioning("ti2v"), 48), int64_t{48});
    // The image clip keeps pixel frame 0 only.
    auto clip = torch::rand({1, 3, 5, 8, 8});
    auto f = train::first_frame_clip(clip);
    QVERIFY(torch::equal(f.select(2, 0), clip.select(2, 0)));
    QVERIFY(torch::equal(f.narrow(2, 1, 4), torch::zeros({1, 3, 4, 8, 8})));
    // An i2v expert trains with y; without y the model refuses the narrower input.
    auto cfg = tiny();
    cfg.model_type = "i2v";
    cfg.in_dim = 100;
    torch::manual_seed(5);
    train::ExpertStep e(models::WanModel(cfg), {});
    auto in = sample(0, 500);
    in.y = train::i2v_y(torch::randn({48, 1, 4, 4}));
    e.begin_accumulation();
    QVERIFY(std::isfinite(e.accumulate(in, 1.0)));
    in.y = torch::Tensor();
    QVERIFY(throws_error([&] { e.accumulate(in, 1.0); }));
  }

  void ti2v_first_frame_conditioning() {
    auto g = at::detail::createCPUGenerator(7);
    train::ExpertStepInput in;
    in.x0 = torch::randn({48, 3, 4, 4}, g, torch::TensorOptions().dtype(torch::kFloat));
    in.noise = torch::randn({48, 3, 4, 4}, g, torch::TensorOptions().dtype(torch::kFloat));
    in.context = torch::randn({5, 16}, g, torch::TensorOptions().dtype(torch::kFloat));
    in.t = 700;
    in.sigma = train::sigma_from_t(in.t);
    in.clean_first_frame = true;
    auto mi = train::expert_model_input(in);
    QVERIFY(torch::equal(mi.x_t.select(1, 0), in.x0.select(1, 0)));  // frame 0 is the clean image latent
    auto plain = train::ExpertStep::noisy_latent(in.x0, in.noise, in.sigma);
    QVERIFY(torch::equal(mi.x_t.narrow(1, 1, 2), plain.narrow(1, 1, 2)));
    QCOMPARE(mi.t.numel(), int64_t{3 * 2 * 2});
    QVERIFY(torch::equal(mi.t.narrow(0, 0, 4), torch::zeros({4})));  // frame 0's tokens at t = 0
    QVERIFY(torch::equal(mi.t.narrow(0, 4, 8), torch::full({8}, 700.0f)));
    // Frame 0 does not count in the loss.
    auto pred = torch::randn({48, 3, 4, 4});
    auto pred2 = pred.clone();
    pred2.select(1, 0).add_(5.0);
    QCOMPARE(train::expert_loss(pred, in).item<float>(), train::expert_loss(pred2, in).item<float>());
    in.clean_first_frame = false;
    QVERIFY(train::expert_loss(pred, in).item<float>() != train::expert_loss(pred2, in).item<float>());
    // About half the samples are image-conditioned; one latent frame never is.
    int n = 0;
    for (int64_t s = 0; s < 4000; ++s) n += train::draw_ti2v_image(9, s, 0, 0, 0, 3);
    QVERIFY2(std::abs(n - 2000) < 5 * std::sqrt(1000.0), qPrintable(QString::number(n)));
    QVERIFY(!train::draw_ti2v_image(9, 1, 0, 0, 0, 1));
    // A tiny ti2v expert takes the per-token timesteps.
    auto cfg = tiny();
    cfg.model_type = "ti2v";
    torch::manual_seed(5);
    train::ExpertStep e(models::WanModel(cfg), {});
    in.clean_first_frame = true;
    e.begin_accumulation();
    QVERIFY(std::isfinite(e.accumulate(in, 1.0)));
  }

  // 16-channel experts (the official A14B latent space) train from latent files that rows name
  // with latent_path; no VAE is loaded. i2v experts read their y from the same files.
  void trains_from_latent_files() {
    QTemporaryDir tmp;
    const std::string dir = tmp.path().toStdString();
    nlohmann::json rows = nlohmann::json::array();
    for (int i = 0; i < 4; ++i) {
      auto g = at::detail::createCPUGenerator(static_cast<uint64_t>(50 + i));
      const int64_t h = i < 2 ? 4 : 6;  // two buckets of latent sizes
      io::StateDict sd;
      sd["latents"] = torch::randn({16, 2, h, 4}, g, torch::TensorOptions().dtype(torch::kFloat));
      sd["y"] = torch::randn({20, 2, h, 4}, g, torch::TensorOptions().dtype(torch::kFloat));
      io::write_safetensors(dir + "/lat" + std::to_string(i) + ".safetensors", sd);
      io::StateDict te;
      te["context"] = torch::randn({3, 16}, g, torch::TensorOptions().dtype(torch::kFloat));
      io::write_safetensors(dir + "/text" + std::to_string(i) + ".safetensors", te);
      rows.push_back({{"file_path", "missing_video_" + std::to_string(i) + ".mp4"},
                      {"text", "row " + std::to_string(i)},
                      {"type", "video"},
                      {"latent_path", "lat" + std::to_string(i) + ".safetensors"},
                      {"text_embedding_path", "text" + std::to_string(i) + ".safetensors"}});
    }
    fs::write_file_atomic(dir + "/metadata.json", rows.dump(1));
    for (const char* type : {"t2v", "i2v"}) {
      const bool i2v = std::string(type) == "i2v";
      fs::write_file_atomic(dir + "/dit.yaml", std::string("model_type: ") + type + "\nin_dim: " + (i2v ? "36" : "16") +
                                                   "\nout_dim: 16\ndim: 32\nffn_dim: 64\nnum_heads: 2\nnum_layers: 1\n"
                                                   "text_dim: 16\ntext_len: 8\n");
      const std::string out = dir + "/run_" + type;
      QProcess p;
      p.setProcessChannelMode(QProcess::MergedChannels);
      p.start(WS_ENGINE_EXE, {"train-experts",
                              "--transformer_config",
                              QString::fromStdString(dir + "/dit.yaml"),
                              "--train_data_meta",
                              QString::fromStdString(dir + "/metadata.json"),
                              "--text_embeddings_dir",
                              QString::fromStdString(dir),
                              "--max_train_steps",
                              "4",
                              "--boundary_ratio",
                              "0.5",
                              "--learning_rate",
                              "1e-3",
                              "--lr_warmup_steps",
                              "0",
                              "--eval_data_meta",
                              QString::fromStdString(dir + "/metadata.json"),
                              "--eval_steps",
                              "4",
                              "--dataloader_num_workers",
                              "1",
                              "--output_dir",
                              QString::fromStdString(out)});
      QVERIFY(p.waitForFinished(300000));
      const QString log = QString::fromUtf8(p.readAll());
      QVERIFY2(p.exitCode() == 0, qPrintable(log.right(1500)));
      QVERIFY2(log.contains("\"latent_size\":[2,"), qPrintable(log.left(1500)));
      QVERIFY(log.contains("\"type\":\"eval\""));
      QVERIFY(fs::exists(out + "/checkpoint-4/low_noise_transformer/diffusion_pytorch_model.safetensors"));
      if (i2v) QVERIFY(log.contains("\"conditioning\":\"i2v\""));
    }
    // Latents with the wrong channel count are one clear error before training starts.
    fs::write_file_atomic(
        dir + "/dit.yaml",
        "in_dim: 48\nout_dim: 48\ndim: 32\nffn_dim: 64\nnum_heads: 2\nnum_layers: 1\ntext_dim: 16\ntext_len: 8\n");
    QProcess p;
    p.setProcessChannelMode(QProcess::MergedChannels);
    p.start(WS_ENGINE_EXE,
            {"train-experts", "--transformer_config", QString::fromStdString(dir + "/dit.yaml"), "--train_data_meta",
             QString::fromStdString(dir + "/metadata.json"), "--text_embeddings_dir", QString::fromStdString(dir),
             "--max_train_steps", "2", "--output_dir", QString::fromStdString(dir + "/bad")});
    QVERIFY(p.waitForFinished(300000));
    const QString log = QString::fromUtf8(p.readAll());
    QVERIFY(p.exitCode() != 0);
    QVERIFY2(log.contains("the experts need 48 channels"), qPrintable(log.right(1500)));
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
    for (const char* f :
         {"high_noise_transformer/config.json", "high_noise_transformer/diffusion_pytorch_model.safetensors",
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
