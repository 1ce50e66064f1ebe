// SPDX-License-Identifier: Apache-2.0
// The upsampler training loop's arithmetic: each test pins one rule users of the Python
// trainer rely on and would fail if the rule were changed (coupled weight decay, a non-zero
// first learning rate, accumulation without dividing the loss, the other EMA form, no
// abnormal-norm rule), plus the schedules' values and parity with the reference fixtures.
#include <QtTest/QtTest>

#include "core/error.h"
#include "data/clip_tensor.h"
#include "data/demo_data.h"
#include "dataset/row_check.h"
#include "io/safetensors.h"
#include "models/wan_vae.h"
#include "models/grad_checkpoint.h"
#include "models/latent_upsampler.h"
#include "models/packed_conv.h"
#include "models/train_conv3d.h"
#include "cli/parity/parity_upsampler.h"
#include "test_paths.h"
#include "test_util.h"
#include "models/cpu_isa.h"
#include "train/adamw.h"
#include "train/ema.h"
#include "train/grad_clip.h"
#include "train/nonfinite_guard.h"
#include "train/latent_cache.h"
#include "train/lr_schedule.h"
#include "train/upsampler/upsampler_update.h"
#include "train/upsampler/upsampler_validation.h"

using namespace ws;

namespace {
// True when `f` throws ws::Error (Qt 6.4's QVERIFY_THROWS_EXCEPTION trips over torch headers).
template <typename F>
bool throws_error(F&& f) {
  try {
    f();
  } catch (const ws::Error&) {
    return true;
  }
  return false;
}

models::LatentUpsamplerConfig tiny_config() {
  models::LatentUpsamplerConfig c;
  c.in_channels = 48;
  c.mid_channels = 32;
  c.num_blocks_per_stage = 1;
  return c;
}
}  // namespace

class TestTrainLoop : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  // Skips are counted in a row, a finite update starts the count over, the limit stops the run.
  void nonFiniteGuard() {
    ws::train::NonFiniteGuard g(3);
    QVERIFY(g.admit(1.5, 0.1, 1, "upsampler"));
    QVERIFY(!g.admit(std::nan(""), 0.1, 2, "upsampler"));
    QVERIFY(!g.admit(INFINITY, INFINITY, 2, "upsampler"));
    QCOMPARE(g.skipped_in_a_row(), int64_t(2));
    QVERIFY(g.admit(0.5, 0.1, 2, "upsampler"));
    QCOMPARE(g.skipped_in_a_row(), int64_t(0));
    QVERIFY(!g.admit(NAN, 0, 3, "high_noise"));
    QVERIFY(!g.admit(NAN, 0, 3, "high_noise"));
    const QString err = ws::test::error_of([&] { g.admit(NAN, 0, 3, "high_noise"); });
    QVERIFY2(err.contains("3 updates in a row") && err.contains("high_noise"), qPrintable(err));
    QCOMPARE(g.skipped_total(), int64_t(5));
  }

  // The updater applies nothing when its gradients are not finite, and does not count the step.
  void updaterSkipsNonFiniteGradients() {
    models::LatentUpsampler model(tiny_config());
    train::UpsamplerUpdateOptions o;
    o.learning_rate = 1e-3;
    o.schedule.name = "constant";
    o.schedule.training_steps = 10;
    train::UpsamplerUpdater up(model, o);
    // A bias is never packed: read it straight from the model.
    auto bias = [&] { return model->named_parameters()["final_conv.bias"].detach().clone(); };
    const auto before = bias();
    const auto z = torch::randn({1, 48, 1, 2, 2});
    std::optional<train::UpdateRecord> rec;
    up.micro_step(z, torch::full({1, 48, 1, 3, 3}, NAN), &rec);
    QVERIFY(rec && rec->skipped);
    QCOMPARE(up.global_step(), int64_t(0));
    QVERIFY(torch::equal(bias(), before));
    const auto m = up.optimizer().exp_avg("final_conv.bias");
    QVERIFY(!m.defined() || m.abs().sum().item<double>() == 0.0);  // no moment moved
    up.micro_step(z, torch::zeros({1, 48, 1, 3, 3}), &rec);
    QVERIFY(rec && !rec->skipped);
    QCOMPARE(up.global_step(), int64_t(1));
    QVERIFY(!torch::equal(bias(), before));
  }

  void initTestCase() { torch::manual_seed(0); }

  void adamw_weight_decay_is_decoupled() {
    // Zero gradient: Adam's step is 0/(0+eps) = 0, so only decoupled decay moves p.
    auto p = torch::full({4}, 2.0f).requires_grad_(true);
    p.mutable_grad() = torch::zeros({4});
    train::AdamW opt({{{"p"}, {p}}, {{}, {}}}, {0.9, 0.999, 1e-8, 0.5});
    opt.step({0.1, 0.05});
    // Coupled (L2) decay would put wd·p into the gradient and move p by about lr instead.
    QCOMPARE(p[0].item<float>(), 2.0f * (1.0f - 0.05f));
    QCOMPARE(opt.step_count(), int64_t{1});
  }

  void adamw_matches_the_torch_formula() {
    auto p = torch::tensor({1.0f, -2.0f, 0.5f}).requires_grad_(true);
    auto g = torch::tensor({0.3f, -0.1f, 2.0f});
    p.mutable_grad() = g.clone();
    train::AdamW opt({{{"p"}, {p}}, {{}, {}}}, {0.9, 0.99, 1e-8, 0.01});
    opt.step({1e-2, 5e-3});
    opt.step({1e-2, 5e-3});
    // Two steps by hand in double: m, v with bias corrections.
    for (int i = 0; i < 3; ++i) {
      double pv = i == 0 ? 1.0 : i == 1 ? -2.0 : 0.5, gv = g[i].item<double>(), m = 0, v = 0;
      for (int s = 1; s <= 2; ++s) {
        pv *= 1 - 1e-2 * 0.01;
        m = 0.9 * m + 0.1 * gv;
        v = 0.99 * v + 0.01 * gv * gv;
        pv -= (1e-2 / (1 - std::pow(0.9, s))) * m / (std::sqrt(v) / std::sqrt(1 - std::pow(0.99, s)) + 1e-8);
      }
      QVERIFY(std::fabs(p[i].item<double>() - pv) < 1e-6);
    }
  }

  void adamw_updates_every_slice_of_a_large_parameter() {
    // 2.3 slices of 2^17 elements (the CPU's): every element must get the formula, the tail too.
    const int64_t n = 300001;
    auto p0 = torch::randn({n}), g = torch::randn({n});
    auto p = p0.clone().requires_grad_(true);
    train::AdamW opt({{{"p"}, {p}}, {{}, {}}}, {0.9, 0.99, 1e-8, 0.01});
    for (int s = 0; s < 2; ++s) {
      p.mutable_grad() = g.clone();
      opt.step({1e-2, 5e-3});
    }
    auto pd = p0.to(torch::kDouble), gd = g.to(torch::kDouble), m = torch::zeros_like(pd), v = torch::zeros_like(pd);
    for (int s = 1; s <= 2; ++s) {
      pd = pd * (1 - 1e-2 * 0.01);
      m = 0.9 * m + 0.1 * gd;
      v = 0.99 * v + 0.01 * gd * gd;
      pd = pd - (1e-2 / (1 - std::pow(0.9, s))) * m / (v.sqrt() / std::sqrt(1 - std::pow(0.99, s)) + 1e-8);
    }
    const double err = (p.detach().to(torch::kDouble) - pd).abs().max().item<double>();
    QVERIFY2(err < 1e-5, qPrintable(QString("max error %1").arg(err)));
    QCOMPARE(opt.exp_avg("p").size(0), n);
  }

  void adamw_one_pass_equals_the_ops() {
    // fp32 CPU tensors take the one-pass kernel; a strided view of the same values takes the
    // LibTorch ops. Both must give the same update, with every kernel set this CPU runs, over
    // lengths that leave vector tails and span several of the kernel's slices.
    int sets = 0;
    for (const char* isa : {"avx512", "avx2", "scalar"}) {
      if (!models::use_cpu_isa(isa)) continue;
      ++sets;
      for (int64_t n : {int64_t{2}, int64_t{37}, int64_t{150001}}) {
        torch::manual_seed(5);
        auto base = torch::randn({n, 3}), g = torch::randn({n, 3});
        auto flat = base.clone().requires_grad_(true);
        auto strided = base.t().contiguous().t().requires_grad_(true);  // same values, column-major
        QVERIFY(!strided.is_contiguous());
        train::AdamW a({{{"p"}, {flat}}}, {0.9, 0.99, 1e-8, 0.01}), b({{{"p"}, {strided}}}, {0.9, 0.99, 1e-8, 0.01});
        for (int s = 0; s < 3; ++s) {
          flat.mutable_grad() = g * (s + 1);
          strided.mutable_grad() = (g * (s + 1)).t().contiguous().t();
          a.step({1e-2});
          b.step({1e-2});
        }
        const double dp = (flat - strided).abs().max().item<double>(), scale = flat.abs().max().item<double>();
        QVERIFY2(dp <= 2e-7 * scale, qPrintable(QString("%1, n %2: %3").arg(isa).arg(n).arg(dp)));
        QVERIFY((a.exp_avg_sq("p") - b.exp_avg_sq("p")).abs().max().item<double>() <=
                1e-6 * b.exp_avg_sq("p").abs().max().item<double>());
        // The update moved every element (a slice left out would stay put).
        QVERIFY((flat - base).abs().min().item<double>() > 0);
      }
    }
    models::use_cpu_isa("");
    QVERIFY(sets >= 1);
  }

  void warmup_schedules_start_at_zero() {
    for (const char* name : {"constant_with_warmup", "linear", "cosine", "cosine_with_restarts", "polynomial"}) {
      train::LrSchedule s;
      s.name = name;
      s.warmup_steps = 4;
      s.training_steps = 12;
      s.base_lr = 1e-3;
      QCOMPARE(s.factor(0), 0.0);
      QCOMPARE(s.factor(2), 0.5);
    }
    train::LrSchedule c;
    c.name = "constant";
    c.warmup_steps = 4;
    QCOMPARE(c.factor(0), 1.0);
    train::LrSchedule cos;
    cos.name = "cosine";
    cos.warmup_steps = 2;
    cos.training_steps = 8;
    QCOMPARE(cos.factor(5), 0.5);  // halfway through the decay
    QCOMPARE(cos.factor(8), 0.0);
    train::LrSchedule lin;
    lin.name = "linear";
    lin.warmup_steps = 0;
    lin.training_steps = 10;
    QCOMPARE(lin.factor(5), 0.5);
    train::LrSchedule bad;
    bad.name = "cosine_annealing";
    QVERIFY(throws_error([&] { bad.validate(); }));
  }

  void first_update_moves_only_the_moments() {
    // constant_with_warmup: update 1 uses lr 0, so the weights stay exactly where they were.
    models::LatentUpsampler model(tiny_config());
    io::StateDict before;
    for (auto& kv : model->named_parameters()) before[kv.key()] = kv.value().detach().clone();
    train::UpsamplerUpdateOptions o;
    o.learning_rate = 1e-3;
    o.schedule.name = "constant_with_warmup";
    o.schedule.warmup_steps = 4;
    o.schedule.training_steps = 10;
    train::UpsamplerUpdater up(model, o);
    std::optional<train::UpdateRecord> rec;
    up.micro_step(torch::randn({1, 48, 1, 2, 2}), torch::randn({1, 48, 1, 3, 3}), &rec);
    QVERIFY(rec.has_value());
    QCOMPARE(rec->lr, 0.0);
    const auto plain = up.plain_weights();  // read by position
    for (auto& kv : model->named_parameters()) QVERIFY(torch::equal(kv.value(), before[kv.key()]));
    QVERIFY(up.optimizer().exp_avg("final_conv.bias").abs().sum().item<double>() > 0);
  }

  void accumulation_divides_the_loss() {
    // The same micro-batch twice with A = 2 gives the same gradient norm as once with A = 1.
    auto z_lr = torch::randn({1, 48, 1, 2, 2}), z_hr = torch::randn({1, 48, 1, 3, 3});
    auto run = [&](int64_t A) {
      torch::manual_seed(7);
      models::LatentUpsampler model(tiny_config());
      train::UpsamplerUpdateOptions o;
      o.gradient_accumulation_steps = A;
      o.clip.max_grad_norm = 0;  // measure only
      train::UpsamplerUpdater up(model, o);
      std::optional<train::UpdateRecord> rec;
      for (int64_t i = 0; i < A; ++i) up.micro_step(z_lr, z_hr, &rec);
      return *rec;
    };
    auto one = run(1), two = run(2);
    QVERIFY(std::fabs(one.clip.grad_norm - two.clip.grad_norm) <= 1e-6 * one.clip.grad_norm);
    QVERIFY(std::fabs(one.loss - two.loss) <= 1e-7 * one.loss);
  }

  void ema_uses_the_subtract_form() {
    // shadow −= (1 − d)(shadow − p) and d·shadow + (1 − d)·p round differently in fp32.
    torch::nn::Linear lin(torch::nn::LinearOptions(64, 64));
    train::Ema ema(*lin);
    auto s0 = ema.shadow().at("weight").clone();
    torch::NoGradGuard ng;
    lin->weight.add_(torch::randn_like(lin->weight) * 0.37f);
    ema.update(*lin);  // d = 0: copy (up to rounding)
    lin->weight.add_(torch::randn_like(lin->weight) * 0.37f);
    auto before = ema.shadow().at("weight").clone();
    double d = ema.update(*lin);
    QCOMPARE(d, 2.0 / 11.0);
    auto sub_form = before - (1.0 - d) * (before - lin->weight);
    auto lerp_form = d * before + (1.0 - d) * lin->weight;
    QVERIFY(torch::equal(ema.shadow().at("weight"), sub_form));
    QVERIFY(!torch::equal(sub_form, lerp_form));  // the test can tell the two apart
    Q_UNUSED(s0);
  }

  void abnormal_norm_rule() {
    auto p = torch::zeros({1}).requires_grad_(true);
    train::ClipOptions o;
    o.max_grad_norm = 0.1;
    o.initial_grad_norm_ratio = 5;
    o.abnormal_norm_clip_start = 3;
    // g/m = 7 after the start: clip to m / 7.
    p.mutable_grad() = torch::full({1}, 0.7f);
    auto r = train::clip_gradients({p}, o, 4);
    QVERIFY(r.abnormal);
    QVERIFY(std::fabs(r.max_norm - 0.1 / 7.0) < 1e-7);
    QVERIFY(std::fabs(p.grad().item<double>() - 0.1 / 7.0) < 1e-6);
    // g/m = 20 saturates at m / 10.
    p.mutable_grad() = torch::full({1}, 2.0f);
    r = train::clip_gradients({p}, o, 5);
    QVERIFY(r.abnormal);
    QCOMPARE(r.max_norm, 0.1 / 10.0);
    // At global_step == start the rule does not apply (strict ">"); the threshold is still decaying.
    p.mutable_grad() = torch::full({1}, 2.0f);
    r = train::clip_gradients({p}, o, 3);
    QVERIFY(!r.abnormal);
    QCOMPARE(r.threshold, 0.1);
    r = train::clip_gradients({p}, o, 0);
    QCOMPARE(r.threshold, 0.5);
  }

  void parity_with_the_reference_loop() {
    // The whole loop against the fixtures (what `parity upsampler-train` runs).
    QCOMPARE(cli::parity_upsampler_train(std::string(WS_TEST_DATA "/train")), 0);
    QCOMPARE(cli::parity_upsampler(std::string(WS_TEST_DATA "/upsampler")), 0);
  }

  void gradient_checkpointing_gives_the_same_gradients() {
    auto z_lr = torch::randn({1, 48, 2, 2, 2});
    auto grads = [&](bool ckpt) {
      torch::manual_seed(3);
      models::LatentUpsampler m(tiny_config());
      m->train();
      m->set_gradient_checkpointing(ckpt);
      m->forward(z_lr).square().mean().backward();
      std::vector<torch::Tensor> g;
      for (auto& p : m->parameters()) g.push_back(p.grad().clone());
      return g;
    };
    const int64_t f0 = models::checkpointed_forwards(), r0 = models::checkpoint_recomputations();
    auto a = grads(false);
    // Off: nothing is checkpointed.
    QCOMPARE(models::checkpointed_forwards(), f0);
    QCOMPARE(models::checkpoint_recomputations(), r0);
    auto b = grads(true);
    // On: every checkpointed block ran once without a graph and once more in backward.
    const int64_t forwards = models::checkpointed_forwards() - f0;
    QVERIFY(forwards > 0);
    QCOMPARE(models::checkpoint_recomputations() - r0, forwards);
    QCOMPARE(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) QVERIFY(torch::allclose(a[i], b[i], 1e-5, 1e-7));
  }

  void onednn_training_conv_matches_libtorch() {
    torch::manual_seed(5);
    auto x = torch::randn({1, 32, 3, 7, 9}, torch::requires_grad());
    auto w = (torch::randn({32, 32, 3, 3, 3}) * 0.1).requires_grad_();
    auto b = torch::randn({32}).requires_grad_();
    QVERIFY(models::train_conv3d_applies(x, w));  // a shape LibTorch 1.13 sends to vol2col
    auto g_ref = torch::autograd::grad({torch::conv3d(x, w, b, 1, 1).square().sum()}, {x, w, b});
    auto y = models::train_conv3d(x, w, b);
    QVERIFY(torch::allclose(y, torch::conv3d(x, w, b, 1, 1), 1e-4, 1e-5));
    auto g = torch::autograd::grad({y.square().sum()}, {x, w, b});
    for (int i = 0; i < 3; ++i) {
      const double scale = g_ref[static_cast<size_t>(i)].abs().max().item<double>();
      QVERIFY2(
          (g[static_cast<size_t>(i)] - g_ref[static_cast<size_t>(i)]).abs().max().item<double>() < 1e-5 * scale + 1e-6,
          std::to_string(i).c_str());
    }
    // Not for frozen weights and inputs, batches or shapes oneDNN already gets.
    QVERIFY(!models::train_conv3d_applies(x.detach(), w.detach()));
    QVERIFY(!models::train_conv3d_applies(torch::randn({2, 32, 3, 7, 9}), w));
  }

  void packed_conv_matches_libtorch() {
    // 3-D as in the ResBlocks (Winograd temporal taps, and the direct kernels), 2-D as in the
    // resampler (a batch of frames, wider output: Winograd in chunks of ≤ 512 outputs, and direct).
    // The taps cases cover one frame (the outer taps see only padding), two, a batch of several
    // clips and unequal channel counts; the chunked one 3 × 384 outputs.
    torch::manual_seed(6);
    struct Case {
      torch::Tensor x, w;
      bool winograd;
    } cases[] = {{torch::randn({1, 32, 3, 7, 9}), torch::randn({32, 32, 3, 3, 3}) * 0.1, true},
                 {torch::randn({2, 32, 5, 7, 9}), torch::randn({32, 32, 3, 3, 3}) * 0.1, true},
                 {torch::randn({1, 48, 1, 6, 6}), torch::randn({32, 48, 3, 3, 3}) * 0.1, true},
                 {torch::randn({3, 32, 2, 8, 5}), torch::randn({48, 32, 3, 3, 3}) * 0.1, true},
                 {torch::randn({1, 32, 3, 7, 9}), torch::randn({32, 32, 3, 3, 3}) * 0.1, false},
                 {torch::randn({2, 32, 7, 9}), torch::randn({64, 32, 3, 3}) * 0.1, true},
                 {torch::randn({3, 16, 5, 6}), torch::randn({1152, 16, 3, 3}) * 0.1, true},
                 {torch::randn({2, 32, 7, 9}), torch::randn({64, 32, 3, 3}) * 0.1, false}};
    for (auto& c : cases) {
      const std::string what = std::to_string(c.x.dim()) + "-D input " + std::to_string(c.x.size(0)) + "x" +
                               std::to_string(c.x.size(2)) + (c.winograd ? ", winograd allowed" : ", direct");
      auto layout = models::choose_packed_layout(c.w, c.winograd);
      QVERIFY2(layout, ("oneDNN picks a blocked weight order on this CPU: " + what).c_str());
      // Winograd's kernels need AVX-512; on such a CPU a 3-D kernel must get them when allowed.
      const bool want_winograd = c.winograd && __builtin_cpu_supports("avx512f");
      QVERIFY2(models::layout_is_winograd(*layout) == want_winograd, what.c_str());
      auto x = c.x.clone().requires_grad_();
      auto b = torch::randn({c.w.size(0)}).requires_grad_();
      auto w = c.w.clone().requires_grad_();
      auto conv = [&](const torch::Tensor& xx, const torch::Tensor& ww) {
        return c.w.dim() == 5 ? torch::conv3d(xx, ww, b, 1, 1) : torch::conv2d(xx, ww, b, 1, 1);
      };
      auto y_ref = conv(x, w);
      auto g_ref = torch::autograd::grad({y_ref.square().sum()}, {x, w, b});

      auto wp = c.w.clone();
      models::pack_(wp, *layout);
      QVERIFY(!torch::equal(wp, c.w));  // the storage really holds another order
      wp.requires_grad_();
      auto y = models::packed_conv(x, wp, b, layout);
      QVERIFY2(torch::allclose(y, y_ref, 1e-4, 1e-5), what.c_str());
      auto g = torch::autograd::grad({y.square().sum()}, {x, wp, b});
      auto gw = g[1].clone();
      models::unpack_(gw, *layout);  // the weight's gradient comes out in the packed order
      g[1] = gw;
      for (size_t i = 0; i < 3; ++i) {
        const double scale = g_ref[i].abs().max().item<double>();
        QVERIFY2((g[i] - g_ref[i]).abs().max().item<double>() < 1e-5 * scale + 1e-6,
                 (what + ", grad " + std::to_string(i)).c_str());
      }
      auto back = wp.detach().clone();
      models::unpack_(back, *layout);
      QVERIFY(torch::equal(back, c.w));  // a permutation: the round trip is exact
    }
  }

  void packed_weights_train_as_plain_ones() {
    // The same three updates with the conv weights packed between steps and without: the
    // weights, moments and EMA agree once unpacked, and the packed run really was packed.
    auto run = [](bool pack) {
      torch::manual_seed(9);
      models::LatentUpsampler m(tiny_config());
      train::UpsamplerUpdateOptions o;
      // eps 1 makes each update about lr·g: Adam's g/|g| would blow rounding-level
      // differences of near-zero gradients up to whole steps.
      o.learning_rate = 1.0;
      o.adam.eps = 1.0;
      o.use_ema = true;
      o.schedule.name = "constant";
      o.pack_conv_weights = pack;
      auto up = std::make_unique<train::UpsamplerUpdater>(m, o);
      torch::manual_seed(10);
      for (int i = 0; i < 3; ++i) {
        std::optional<train::UpdateRecord> rec;
        up->micro_step(torch::randn({1, 48, 2, 4, 4}), torch::randn({1, 48, 2, 6, 6}), &rec);
      }
      return up;
    };
    auto plain = run(false);
    auto packed = run(true);
    QCOMPARE(plain->packed_convs(), size_t{0});
    QCOMPARE(packed->packed_convs(), size_t{7});  // initial, 2 per ResBlock, the resampler (2-D), final
    auto before = packed->model()->named_parameters()["res_blocks.0.conv1.weight"].detach().clone();
    {
      const auto scope = packed->plain_weights();
      QCOMPARE(packed->packed_convs(), size_t{0});
      const auto a = plain->model()->named_parameters();
      const auto b = packed->model()->named_parameters();
      auto close = [](const torch::Tensor& x, const torch::Tensor& y) { return torch::allclose(x, y, 1e-4, 1e-7); };
      for (const auto& kv : a) {
        const std::string& k = kv.key();
        QVERIFY2(close(kv.value(), b[k]), k.c_str());
        QVERIFY2(close(plain->optimizer().exp_avg(k), packed->optimizer().exp_avg(k)), k.c_str());
        QVERIFY2(close(plain->optimizer().exp_avg_sq(k), packed->optimizer().exp_avg_sq(k)), k.c_str());
        QVERIFY2(close(plain->ema()->shadow().at(k), packed->ema()->shadow().at(k)), k.c_str());
      }
      QVERIFY(!torch::equal(before, b["res_blocks.0.conv1.weight"]));
    }
    // Packed again when the scope ends, exactly as before.
    QCOMPARE(packed->packed_convs(), size_t{7});
    QVERIFY(torch::equal(before, packed->model()->named_parameters()["res_blocks.0.conv1.weight"]));
    // The model outlives its updater with plain weights.
    models::LatentUpsampler model = packed->model();
    packed.reset();
    QVERIFY(torch::allclose(model->named_parameters()["res_blocks.0.conv1.weight"],
                            plain->model()->named_parameters()["res_blocks.0.conv1.weight"], 1e-4, 1e-7));
  }

  void bf16_compute_keeps_fp32_master_weights() {
    // mixed_precision bf16 (GPU builds): convs in bf16, norms in fp32, fp32 output and gradients.
    auto z = torch::randn({1, 48, 2, 4, 4});
    torch::manual_seed(4);
    models::LatentUpsampler ref(tiny_config());
    torch::manual_seed(4);
    models::LatentUpsampler m(tiny_config());
    m->set_compute_dtype(torch::kBFloat16);
    auto y_ref = ref->forward(z);
    auto y = m->forward(z);
    QCOMPARE(y.scalar_type(), torch::kFloat);
    QVERIFY(!torch::equal(y, y_ref));  // the bf16 path really ran
    // bf16 keeps ~3 significant digits per op (and the CPU accumulates in bf16): a loose bound.
    const double rel = ((y - y_ref).norm() / y_ref.norm()).item<double>();
    QVERIFY2(rel < 0.15, std::to_string(rel).c_str());
    // The same plumbing in float64 must reproduce fp32 closely: nothing but the dtype changes.
    torch::manual_seed(4);
    models::LatentUpsampler m64(tiny_config());
    m64->set_compute_dtype(torch::kDouble);
    const double rel64 = ((m64->forward(z) - y_ref).norm() / y_ref.norm()).item<double>();
    QVERIFY2(rel64 < 1e-5, std::to_string(rel64).c_str());
    y.square().mean().backward();
    for (auto& p : m->parameters()) {
      QVERIFY(p.grad().defined());
      QCOMPARE(p.scalar_type(), torch::kFloat);
      QCOMPARE(p.grad().scalar_type(), torch::kFloat);
    }
  }

  // The latent cache is keyed by a clip's bytes, not its path: new bytes under the same name
  // miss, the same bytes under a new name hit.
  void latent_cache_is_keyed_by_content() {
    QTemporaryDir tmp;
    const std::string dir = tmp.path().toStdString();
    auto write = [](const std::string& path, const QByteArray& bytes) {
      QFile f(QString::fromStdString(path));
      QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
      QCOMPARE(f.write(bytes), qint64(bytes.size()));
    };
    const std::string a = dir + "/a.mp4", b = dir + "/b.mp4";
    write(a, QByteArray(4096, 'x'));
    train::LatentCache cache(dir + "/cache", "vae-sha");
    const std::vector<int64_t> frames{0, 2, 4};
    const std::string k1 = cache.key(a, frames, 64, 64, 32, 32);
    torch::Tensor z_hr = torch::randn({48, 2, 4, 4}), z_lr = torch::randn({48, 2, 2, 2}), got_hr, got_lr;
    cache.store(k1, z_hr, z_lr);
    // A copy under another name: the same entry.
    QVERIFY(QFile::copy(QString::fromStdString(a), QString::fromStdString(b)));
    QCOMPARE(cache.key(b, frames, 64, 64, 32, 32), k1);
    QVERIFY(cache.load(cache.key(b, frames, 64, 64, 32, 32), &got_hr, &got_lr));
    QVERIFY(torch::equal(got_hr, z_hr) && torch::equal(got_lr, z_lr));
    // Other bytes (same size, same name, written at once): another entry, a miss.
    write(a, QByteArray(4096, 'y'));
    const std::string k2 = cache.key(a, frames, 64, 64, 32, 32);
    QVERIFY(k2 != k1);
    QVERIFY(!cache.load(k2, &got_hr, &got_lr));
    // Other frames, sizes or VAE weights: other entries.
    QVERIFY(cache.key(b, {0, 2}, 64, 64, 32, 32) != k1);
    QVERIFY(cache.key(b, frames, 96, 64, 48, 32) != k1);
    train::LatentCache other_vae(dir + "/cache", "another-vae");
    QVERIFY(other_vae.key(b, frames, 64, 64, 32, 32) != k1);
    QCOMPARE(cache.hits(), int64_t{1});
    QCOMPARE(cache.misses(), int64_t{1});
  }

  // PSNR of a known pair: a uniform difference d in [-1, 1] is d/2 on [0, 1], so the PSNR is
  // 10·log10(1 / (d/2)²).
  void psnr_of_a_known_pair() {
    auto a = torch::zeros({3, 5, 8, 8});
    QCOMPARE(train::clip_psnr(a, a), 100.0);                     // identical: the cap
    const double want = 10.0 * std::log10(1.0 / (0.05 * 0.05));  // 26.0206 dB
    QVERIFY(std::abs(train::clip_psnr(a, a + 0.1) - want) < 1e-4);
    QVERIFY(std::abs(train::clip_psnr(a - 0.4, a + 0.4) - 10.0 * std::log10(1.0 / 0.16)) < 1e-4);
    // Values outside [-1, 1] are clamped first: 1 vs 3 is no difference.
    QCOMPARE(train::clip_psnr(a + 1, a + 3), 100.0);
  }

  // The validation numbers against an independent computation on a real clip: the same frames
  // and sizes done here by hand, MSE and PSNR summed in double element by element.
  void validation_scores_match_an_independent_computation() {
    if (!dataset::video_support_built()) QSKIP("no video support");
    QTemporaryDir tmp;
    const std::string dir = tmp.path().toStdString();
    const auto demo = data::write_demo_dataset(dir + "/demo");
    const dataset::Metadata meta = dataset::read_metadata(demo.metadata_path);
    std::string video;
    for (const auto& row : meta.rows)
      if (!row.is_image()) {
        video = meta.resolve(row);
        break;
      }
    QVERIFY(!video.empty());
    auto vae = models::WanVae::load(std::string(WS_TEST_DATA) + "/vae/vae_dev_weights.safetensors");
    torch::manual_seed(1);
    models::LatentUpsampler model(tiny_config());
    model->eval();
    train::ValidationSettings vs;
    vs.sample_size = 50;  // floored to the bucket alignment at scale 1.5, lcm(16, 24) = 48
    vs.n_frames = 6;      // floored to 4k+1 = 5
    const auto r = train::run_validation(video, 0, 10, *vae, model, vs, dir + "/run");
    QCOMPARE(r.frames, int64_t{5});
    QCOMPARE(r.size, int64_t{48});
    QCOMPARE(r.size_lr, int64_t{32});  // floor(48 / 1.5 / 16) · 16
    for (const auto& f : {r.lowres, r.upsampled, r.highres})
      QVERIFY2(QFile::exists(QString::fromStdString(dir + "/run/" + f)), f.c_str());

    // By hand: frames 0..4, bilinear to 48² and from there to 32², encode, upsample, decode.
    namespace F = torch::nn::functional;
    torch::NoGradGuard no_grad;
    auto square = [](const torch::Tensor& x, int64_t e) {
      return F::interpolate(x.transpose(0, 1), F::InterpolateFuncOptions()
                                                   .size(std::vector<int64_t>{e, e})
                                                   .mode(torch::kBilinear)
                                                   .align_corners(false))
          .transpose(0, 1)
          .contiguous();
    };
    torch::Tensor x = square(data::read_clip(video, {0, 1, 2, 3, 4}), 48), x_lr = square(x, 32);
    torch::Tensor z_hr = vae->encode(x.unsqueeze(0)), z_up = model->forward(vae->encode(x_lr.unsqueeze(0)));
    auto sum_sq = [](const torch::Tensor& a, const torch::Tensor& b) {
      auto d = (a.to(torch::kDouble) - b.to(torch::kDouble)).flatten();
      double s = 0;
      auto acc = d.accessor<double, 1>();
      for (int64_t i = 0; i < d.size(0); ++i) s += acc[i] * acc[i];
      return s / static_cast<double>(d.size(0));
    };
    const double latent_mse = sum_sq(z_up, z_hr);
    auto to01 = [](const torch::Tensor& t) { return (t.clamp(-1, 1) + 1) / 2; };
    const double mse = sum_sq(to01(vae->decode(z_up)[0]), to01(vae->decode(z_hr)[0]));
    const double psnr = 10.0 * std::log10(1.0 / mse);
    QVERIFY2(std::abs(r.latent_mse - latent_mse) <= 1e-5 * std::max(1.0, latent_mse),
             qPrintable(QString("latent MSE %1 vs %2").arg(r.latent_mse).arg(latent_mse)));
    QVERIFY2(std::abs(r.psnr - psnr) < 1e-3, qPrintable(QString("PSNR %1 vs %2").arg(r.psnr).arg(psnr)));
    QVERIFY(r.psnr > 0 && r.psnr < 100);
  }

  void upsampler_config_errors() {
    auto c = tiny_config();
    c.rational_spatial_scale = 3.0;
    QVERIFY(throws_error([&] { c.validate(); }));
    c = tiny_config();
    c.mid_channels = 48;
    QVERIFY(throws_error([&] { c.validate(); }));
    QCOMPARE(models::LatentUpsamplerConfig().parameter_count(), int64_t{135837744});
    QCOMPARE(tiny_config().parameter_count(), int64_t{277296});
  }
};

QTEST_APPLESS_MAIN(TestTrainLoop)
#include "test_train_loop.moc"
