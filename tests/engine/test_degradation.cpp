// SPDX-License-Identifier: Apache-2.0
// The degradation ops (docs/design/upsampler-training.md §5): determinism per key, the op choice, what each
// op does to a picture, the reference's uint8 round trip, odd sizes, and bad parameters.
#include <QtTest/QtTest>

#include <chrono>
#include <cmath>
#include <set>

#include "core/error.h"
#include "data/degradation.h"
#include "dataset/row_check.h"
#include "test_util.h"

#ifdef WANSTUDIO_HAVE_VIDEO
#include "video/video_jpeg.h"
#endif

using namespace ws::data;
using namespace ws::dataset;
using ws::test::error_of;

namespace {

// [3, T, H, W] in [-1, 1]: a smooth colour ramp, a mid-frequency pattern and a one-pixel
// checker, so blurs and resizes have something to remove. Varies per frame and channel.
torch::Tensor test_clip(int64_t t, int64_t h, int64_t w, double checker = 0.25) {
  auto c = torch::arange(3, torch::kFloat64).view({3, 1, 1, 1});
  auto f = torch::arange(t, torch::kFloat64).view({1, t, 1, 1});
  auto y = torch::arange(h, torch::kFloat64).view({1, 1, h, 1});
  auto x = torch::arange(w, torch::kFloat64).view({1, 1, 1, w});
  auto ramp = (x / std::max<int64_t>(w - 1, 1) - 0.5) * 0.6 + (c - 1) * 0.1;
  auto wave = 0.3 * torch::sin(0.9 * x + 0.4 * c + 0.3 * f) * torch::cos(0.7 * y - 0.2 * f);
  auto check = checker * (1 - 2 * torch::remainder(x + y, 2));
  return (ramp + wave + check).clamp(-1, 1).to(torch::kFloat32).contiguous();
}

torch::Tensor mid_gray(int64_t t, int64_t h, int64_t w) { return torch::zeros({3, t, h, w}); }

// To the 0..255 scale of the ops: exact whole numbers for degraded clips.
torch::Tensor to255(const torch::Tensor& x) { return (x.to(torch::kFloat64) * 0.5 + 0.5) * 255.0; }

// The reference's quantisation, written with torch ops: what zero ops must return.
torch::Tensor reference_quantise(const torch::Tensor& x) {
  auto u8 = (x * 0.5 + 0.5).mul(255).clamp(0, 255).to(torch::kUInt8);
  return (u8.to(torch::kFloat32) / 255 - 0.5) / 0.5;
}

// Mean squared first difference along rows and columns, on the 0..255 scale.
double hf_energy(const torch::Tensor& x) {
  auto p = to255(x);
  auto dx = p.narrow(3, 1, p.size(3) - 1) - p.narrow(3, 0, p.size(3) - 1);
  auto dy = p.narrow(2, 1, p.size(2) - 1) - p.narrow(2, 0, p.size(2) - 1);
  return dx.pow(2).mean().item<double>() + dy.pow(2).mean().item<double>();
}
double dx_energy(const torch::Tensor& x) {
  auto p = to255(x);
  return (p.narrow(3, 1, p.size(3) - 1) - p.narrow(3, 0, p.size(3) - 1)).pow(2).mean().item<double>();
}
double dy_energy(const torch::Tensor& x) {
  auto p = to255(x);
  return (p.narrow(2, 1, p.size(2) - 1) - p.narrow(2, 0, p.size(2) - 1)).pow(2).mean().item<double>();
}

double mse255(const torch::Tensor& a, const torch::Tensor& b) {
  return (to255(a) - to255(b)).pow(2).mean().item<double>();
}

bool runnable(const std::vector<DegradationOp>& ops) {
  if (video_support_built()) return true;
  for (const auto& op : ops)
    if (op.name == "jpeg") return false;
  return true;
}

// The ops degrade_clip will draw for this Rng state (the Rng is copied, not advanced).
std::vector<DegradationOp> peek_ops(Rng rng, int64_t lo, int64_t hi) { return draw_degradation_ops(lo, hi, rng); }

size_t op_index(const std::string& name) {
  for (size_t i = 0; i < kDegradationOps.size(); ++i)
    if (name == kDegradationOps[i]) return i;
  return kDegradationOps.size();
}

void check_valid_clip(const torch::Tensor& out, const torch::Tensor& in) {
  QCOMPARE(out.sizes(), in.sizes());
  QCOMPARE(out.scalar_type(), torch::kFloat32);
  QVERIFY(out.min().item<float>() >= -1.0f);
  QVERIFY(out.max().item<float>() <= 1.0f);
  // Every value is one of the 256 uint8 levels.
  auto p = to255(out);
  QVERIFY((p - p.round()).abs().max().item<double>() < 1e-3);
}

DegradationOp op(const std::string& name, nlohmann::json params) { return DegradationOp{name, std::move(params)}; }

}  // namespace

class TestDegradation : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void same_key_same_bytes() {
    const auto x = test_clip(5, 37, 53);
    int checked = 0;
    // (Without video support, keys that draw the jpeg op are passed over.)
    for (int64_t k = 0; k < 300 && checked < 6; ++k) {
      Rng a = Rng::keyed(42, "clip", 0, k, 0), b = a;
      if (!runnable(peek_ops(a, 1, 5))) continue;
      auto da = degrade_clip(x, 1, 5, a);
      auto db = degrade_clip(x, 1, 5, b);
      QVERIFY(torch::equal(da.clip, db.clip));
      QCOMPARE(degradation_ops_json(da.ops), degradation_ops_json(db.ops));
      ++checked;
    }
    QCOMPARE(checked, 6);
  }

  void different_key_differs() {
    const auto x = test_clip(3, 40, 48);
    int checked = 0;
    for (int64_t k = 0; k < 300 && checked < 4; ++k) {
      Rng a = Rng::keyed(42, "clip", 0, k, 0), b = Rng::keyed(42, "clip", 0, k, 1);
      if (!runnable(peek_ops(a, 4, 4)) || !runnable(peek_ops(b, 4, 4))) continue;
      QVERIFY(!torch::equal(degrade_clip(x, 4, 4, a).clip, degrade_clip(x, 4, 4, b).clip));
      ++checked;
    }
    QCOMPARE(checked, 4);
    // Same op and parameters, different stream: different noise.
    const auto gn = op("gaussian_noise", {{"sigma", 10.0}, {"gray", false}});
    Rng a(1), b(2);
    QVERIFY(!torch::equal(apply_degradation_op(x, gn, a), apply_degradation_op(x, gn, b)));
  }

  void thread_count_does_not_matter() {
    const auto x = test_clip(6, 33, 41);
    const int before = at::get_num_threads();
    std::vector<torch::Tensor> outs;
    for (int threads : {1, 2}) {
      at::set_num_threads(threads);
      Rng r(77);
      torch::Tensor y = reference_quantise(x);
      for (const auto& o :
           {op("blur", {{"kernel_size", 9}, {"isotropic", false}, {"sigma_x", 2.0}, {"sigma_y", 0.7}, {"theta", 0.5}}),
            op("gaussian_noise", {{"sigma", 12.0}, {"gray", false}}),
            op("poisson_noise", {{"strength", 1.0}, {"gray", true}})})
        y = apply_degradation_op(y, o, r);
      outs.push_back(y);
    }
    at::set_num_threads(before);
    QVERIFY(torch::equal(outs[0], outs[1]));
  }

  void op_choice() {
    std::vector<int> count_n(6, 0), count_op(5, 0);
    int blur = 0, iso = 0, noise = 0, gray = 0;
    for (int64_t k = 0; k < 2000; ++k) {
      Rng r = Rng::keyed(7, "clip", 0, k, 0);
      auto ops = draw_degradation_ops(1, 4, r);
      QVERIFY(ops.size() >= 1 && ops.size() <= 4);
      ++count_n[ops.size()];
      for (size_t i = 0; i < ops.size(); ++i) {
        const size_t idx = op_index(ops[i].name);
        QVERIFY(idx < 5);
        if (i > 0) QVERIFY(op_index(ops[i - 1].name) < idx);  // distinct, canonical order
        ++count_op[idx];
        const auto& p = ops[i].params;
        if (ops[i].name == "blur") {
          const int ks = p.at("kernel_size").get<int>();
          QVERIFY(ks >= 7 && ks <= 21 && ks % 2 == 1);
          ++blur;
          if (p.at("isotropic").get<bool>()) {
            ++iso;
            QVERIFY(p.at("sigma").get<double>() >= 0.2 && p.at("sigma").get<double>() < 3.0);
          } else {
            QVERIFY(p.at("sigma_x").get<double>() >= 0.2 && p.at("sigma_x").get<double>() < 3.0);
            QVERIFY(p.at("sigma_y").get<double>() >= 0.2 && p.at("sigma_y").get<double>() < 3.0);
            QVERIFY(std::abs(p.at("theta").get<double>()) <= M_PI);
          }
        } else if (ops[i].name == "resize") {
          QVERIFY(p.at("scale").get<double>() >= 0.3 && p.at("scale").get<double>() < 1.0);
          const auto d = p.at("down").get<std::string>(), u = p.at("up").get<std::string>();
          QVERIFY(d == "area" || d == "bilinear" || d == "bicubic");
          QVERIFY(u == "bilinear" || u == "bicubic");
        } else if (ops[i].name == "gaussian_noise") {
          QVERIFY(p.at("sigma").get<double>() >= 1.0 && p.at("sigma").get<double>() < 30.0);
          ++noise;
          gray += p.at("gray").get<bool>();
        } else if (ops[i].name == "poisson_noise") {
          QVERIFY(p.at("strength").get<double>() >= 0.05 && p.at("strength").get<double>() < 3.0);
          ++noise;
          gray += p.at("gray").get<bool>();
        } else {
          const int q = p.at("quality").get<int>();
          QVERIFY(q >= 30 && q <= 95);
          QCOMPARE(p.at("qscale").get<int>(), jpeg_qscale(q));
        }
      }
    }
    for (int n = 1; n <= 4; ++n) QVERIFY2(count_n[n] > 400, qPrintable(QString("n=%1: %2").arg(n).arg(count_n[n])));
    // Each op is in a random subset of 2.5 ops on average: p = 0.5, so about 1000 each.
    for (int i = 0; i < 5; ++i)
      QVERIFY2(count_op[i] > 850 && count_op[i] < 1150, qPrintable(QString::number(count_op[i])));
    QVERIFY(std::abs(double(iso) / blur - 0.7) < 0.06);
    QVERIFY(std::abs(double(gray) / noise - 0.4) < 0.05);

    Rng r(3);
    QVERIFY(draw_degradation_ops(0, 0, r).empty());
    const auto all = draw_degradation_ops(6, 9, r);  // more than the pool: every op once
    QCOMPARE(all.size(), size_t{5});
    for (size_t i = 0; i < 5; ++i) QCOMPARE(all[i].name, std::string(kDegradationOps[i]));
    QVERIFY(error_of([&] { draw_degradation_ops(3, 1, r); }).contains("degradation_ops_range"));
    QVERIFY(!error_of([&] { draw_degradation_ops(-1, 2, r); }).isEmpty());

    // degrade_clip applies exactly the ops it draws.
    const auto x = test_clip(2, 20, 24);
    int compared = 0;
    for (int64_t k = 0; k < 300 && compared < 6; ++k) {
      Rng a = Rng::keyed(9, "clip", 0, k, 0);
      const auto drawn = peek_ops(a, 1, 4);
      if (!runnable(drawn)) continue;
      QCOMPARE(degradation_ops_json(degrade_clip(x, 1, 4, a).ops), degradation_ops_json(drawn));
      ++compared;
    }
    QCOMPARE(compared, 6);
  }

  void jpeg_qscale_mapping() {
    QCOMPARE(jpeg_qscale(95), 2);
    QCOMPARE(jpeg_qscale(30), 20);
    QCOMPARE(jpeg_qscale(62), 11);  // 2 + 33 * 18 / 65 = 11.14
    QCOMPARE(jpeg_qscale(50), 14);  // 2 + 45 * 18 / 65 = 14.46
    for (int q = 31; q <= 95; ++q) QVERIFY(jpeg_qscale(q) <= jpeg_qscale(q - 1));
  }

  void zero_ops_is_the_reference_quantisation() {
    auto x = test_clip(3, 17, 19);
    // Values on and next to the uint8 level boundaries, and the ends of the range.
    x.select(1, 0).select(1, 0).copy_(torch::linspace(-1.0, 1.0, 19));
    x.select(1, 1).select(1, 1).fill_(-1.0f);
    x.select(1, 1).select(1, 2).fill_(1.0f);
    x.select(1, 2).select(1, 0).copy_(torch::linspace(-1.2, 1.2, 19));  // out of range: clamped
    Rng r(5);
    const auto out = degrade_clip(x, 0, 0, r);
    QVERIFY(out.ops.empty());
    QVERIFY(torch::equal(out.clip, reference_quantise(x)));
    // Truncation, not rounding: 0 -> 127.5 -> 127.
    QVERIFY(std::abs(to255(degrade_clip(mid_gray(1, 2, 2), 0, 0, r).clip).max().item<double>() - 127.0) < 1e-4);
  }

  void input_untouched_and_t1() {
    for (int64_t t : {1, 4}) {
      const auto x = test_clip(t, 24, 30);
      const auto copy = x.clone();
      Rng r(11);
      for (const char* name : {"blur", "resize", "gaussian_noise", "poisson_noise"}) {
        Rng pr(12);
        const auto y = apply_degradation_op(x, draw_degradation_op(name, pr), r);
        check_valid_clip(y, x);
      }
      QVERIFY(torch::equal(x, copy));
    }
  }

  void blur() {
    const auto x = test_clip(2, 48, 64);
    const auto q = reference_quantise(x);
    const double e0 = hf_energy(q), m0 = to255(q).mean().item<double>();
    Rng r(1);
    for (const auto& b :
         {op("blur", {{"kernel_size", 9}, {"isotropic", true}, {"sigma", 2.0}}),
          op("blur", {{"kernel_size", 21}, {"isotropic", true}, {"sigma", 3.0}}),
          op("blur",
             {{"kernel_size", 15}, {"isotropic", false}, {"sigma_x", 2.5}, {"sigma_y", 1.0}, {"theta", 0.6}})}) {
      const auto y = apply_degradation_op(x, b, r);
      check_valid_clip(y, x);
      QVERIFY2(hf_energy(y) < 0.2 * e0, qPrintable(QString("%1 vs %2").arg(hf_energy(y)).arg(e0)));
      QVERIFY(std::abs(to255(y).mean().item<double>() - m0) < 1.0);
    }
    // A tiny sigma is (nearly) the identity.
    const auto sharp =
        apply_degradation_op(x, op("blur", {{"kernel_size", 7}, {"isotropic", true}, {"sigma", 0.2}}), r);
    QVERIFY(torch::equal(sharp, q));
    // A flat picture stays flat, and at the same level (normalized kernel, reflect padding).
    const auto flat = torch::full({3, 2, 20, 30}, 0.3f);
    const auto fb = apply_degradation_op(
        flat,
        op("blur", {{"kernel_size", 21}, {"isotropic", false}, {"sigma_x", 3.0}, {"sigma_y", 0.3}, {"theta", 1.0}}), r);
    QVERIFY(torch::equal(fb, reference_quantise(flat)));
  }

  void blur_matches_direct_convolution() {
    // Independent reference: Real-ESRGAN's kernel built here with torch ops, reflect padding
    // with F::pad, a plain conv2d. Both code paths (separable and FFT) must agree with it up
    // to float rounding (at most one level, rarely).
    namespace F = torch::nn::functional;
    const auto x = test_clip(2, 24, 30);
    const auto q = to255(reference_quantise(x)).to(torch::kFloat64);  // [3, T, H, W]
    struct Case {
      int64_t k;
      double sx, sy, theta;
      bool iso;
    };
    for (const Case c : {Case{9, 1.5, 1.5, 0.0, true}, Case{21, 3.0, 3.0, 0.0, true}, Case{11, 2.5, 0.6, 0.9, false},
                         Case{21, 0.4, 2.8, -2.5, false}}) {
      const auto ax = torch::arange(-(c.k / 2), c.k / 2 + 1, torch::kFloat64);
      const auto xx = ax.view({1, c.k}).expand({c.k, c.k}), yy = ax.view({c.k, 1}).expand({c.k, c.k});
      const double ct = std::cos(c.theta), st = std::sin(c.theta);
      auto rot = torch::tensor({ct, -st, st, ct}, torch::kFloat64).view({2, 2});
      auto cov = rot.matmul(torch::diag(torch::tensor({c.sx * c.sx, c.sy * c.sy}, torch::kFloat64))).matmul(rot.t());
      auto inv = torch::inverse(cov);
      auto kern = torch::exp(-0.5 * (inv[0][0] * xx * xx + 2 * inv[0][1] * xx * yy + inv[1][1] * yy * yy));
      kern = kern / kern.sum();
      auto planes = q.permute({1, 0, 2, 3}).reshape({-1, 1, 24, 30});
      auto padded = F::pad(planes, F::PadFuncOptions({c.k / 2, c.k / 2, c.k / 2, c.k / 2}).mode(torch::kReflect));
      auto ref = F::conv2d(padded, kern.view({1, 1, c.k, c.k}))
                     .clamp(0, 255)
                     .round()
                     .view({2, 3, 24, 30})
                     .permute({1, 0, 2, 3});
      nlohmann::json params = {{"kernel_size", c.k}, {"isotropic", c.iso}};
      if (c.iso) {
        params["sigma"] = c.sx;
      } else {
        params.update({{"sigma_x", c.sx}, {"sigma_y", c.sy}, {"theta", c.theta}});
      }
      Rng r(1);
      const auto got = to255(apply_degradation_op(x, op("blur", params), r));
      const auto diff = (got - ref).abs();
      const QString what = QString::fromStdString(params.dump());
      QVERIFY2(diff.max().item<double>() <= 1.0 + 1e-6, qPrintable(what));
      QVERIFY2(diff.gt(0.5).to(torch::kFloat64).mean().item<double>() < 0.01, qPrintable(what));
    }
  }

  void anisotropic_blur_orientation() {
    // Vertical stripes vary along x only, horizontal stripes along y only. A kernel stretched
    // along x (theta = 0, sigma_x large, sigma_y tiny) must smear the first and keep the second;
    // rotated by 90 degrees it must do the opposite.
    auto xs = torch::arange(40, torch::kFloat32);
    auto vertical = (0.6 * torch::sin(1.3 * xs)).view({1, 1, 1, 40}).expand({3, 1, 40, 40}).contiguous();
    auto horizontal = vertical.transpose(2, 3).contiguous();
    Rng r(2);
    auto along_x =
        op("blur", {{"kernel_size", 11}, {"isotropic", false}, {"sigma_x", 3.0}, {"sigma_y", 0.2}, {"theta", 0.0}});
    auto along_y = along_x;
    along_y.params["theta"] = M_PI / 2;
    const double v0 = dx_energy(reference_quantise(vertical)), h0 = dy_energy(reference_quantise(horizontal));
    QVERIFY(dx_energy(apply_degradation_op(vertical, along_x, r)) < 0.05 * v0);
    QVERIFY(dy_energy(apply_degradation_op(horizontal, along_x, r)) > 0.95 * h0);
    QVERIFY(dy_energy(apply_degradation_op(horizontal, along_y, r)) < 0.05 * h0);
    QVERIFY(dx_energy(apply_degradation_op(vertical, along_y, r)) > 0.95 * v0);
  }

  void resize_down_up() {
    const auto x = test_clip(2, 48, 64);
    const auto q = reference_quantise(x);
    const double e0 = hf_energy(q), m0 = to255(q).mean().item<double>();
    Rng r(1);
    for (const char* down : {"area", "bilinear", "bicubic"})
      for (const char* up : {"bilinear", "bicubic"}) {
        const auto strong = apply_degradation_op(x, op("resize", {{"scale", 0.3}, {"down", down}, {"up", up}}), r);
        const auto mild = apply_degradation_op(x, op("resize", {{"scale", 0.9}, {"down", down}, {"up", up}}), r);
        check_valid_clip(strong, x);
        check_valid_clip(mild, x);
        const QString what = QString("%1/%2").arg(down, up);
        QVERIFY2(hf_energy(strong) < 0.5 * e0, qPrintable(what));
        QVERIFY2(hf_energy(strong) < hf_energy(mild), qPrintable(what));
        QVERIFY2(mse255(strong, q) > mse255(mild, q), qPrintable(what));
        QVERIFY2(std::abs(to255(strong).mean().item<double>() - m0) < 3.0, qPrintable(what));
      }
    QVERIFY(error_of([&] {
              apply_degradation_op(x, op("resize", {{"scale", 0.5}, {"down", "area"}, {"up", "area"}}), r);
            }).contains("'up'"));
  }

  void gaussian_noise() {
    const auto x = mid_gray(4, 64, 64);
    const auto base = to255(reference_quantise(x));  // 127 everywhere
    for (double sigma : {3.0, 10.0, 25.0}) {
      Rng r(static_cast<uint64_t>(sigma));
      const auto y = apply_degradation_op(x, op("gaussian_noise", {{"sigma", sigma}, {"gray", false}}), r);
      check_valid_clip(y, x);
      const auto d = to255(y) - base;
      // Rounding adds 1/12 to the variance; 4 sigma stays inside 0..255 for sigma <= 25.
      const double sd = std::sqrt(d.var().item<double>() - 1.0 / 12.0);
      QVERIFY2(std::abs(sd - sigma) < 0.03 * sigma, qPrintable(QString("sigma %1 measured %2").arg(sigma).arg(sd)));
      QVERIFY(std::abs(d.mean().item<double>()) < 0.05 * sigma);
      // Colour noise: channels independent. Fresh noise in every frame.
      QVERIFY(std::abs(torch::corrcoef(torch::stack({d[0].flatten(), d[1].flatten()})).index({0, 1}).item<double>()) <
              0.05);
      QVERIFY(!torch::equal(d.select(1, 0), d.select(1, 1)));
    }
    Rng r(9);
    const auto g = to255(apply_degradation_op(x, op("gaussian_noise", {{"sigma", 15.0}, {"gray", true}}), r));
    QVERIFY(torch::equal(g[0], g[1]));
    QVERIFY(torch::equal(g[0], g[2]));
    QVERIFY(std::abs(std::sqrt((g - base).var().item<double>()) - 15.0) < 0.5);
    QVERIFY(!torch::equal(g.select(1, 0), g.select(1, 1)));
  }

  void poisson_noise() {
    const auto x = mid_gray(4, 64, 64);
    const auto base = to255(reference_quantise(x));
    // Std on the 0..255 scale: 255 * strength * sqrt(256 u) / 256 with u = 127 / 255.
    const double unit = 255.0 * std::sqrt(256.0 * 127.0 / 255.0) / 256.0;
    double last = 0;
    for (double strength : {0.3, 1.0, 2.5}) {
      Rng r(3);
      const auto y = apply_degradation_op(x, op("poisson_noise", {{"strength", strength}, {"gray", false}}), r);
      check_valid_clip(y, x);
      const auto d = to255(y) - base;
      const double sd = std::sqrt(d.var().item<double>() - 1.0 / 12.0);
      QVERIFY2(std::abs(sd - unit * strength) < 0.04 * unit * strength,
               qPrintable(QString("strength %1: std %2, expected %3").arg(strength).arg(sd).arg(unit * strength)));
      QVERIFY(std::abs(d.mean().item<double>()) < 0.05 * unit * strength);  // Poisson(256u)/256 has mean u
      QVERIFY(sd > last);
      last = sd;
    }
    // Gray: one luma noise for all channels, so a gray picture stays gray.
    Rng r(4);
    const auto g = to255(apply_degradation_op(x, op("poisson_noise", {{"strength", 1.0}, {"gray", true}}), r));
    QVERIFY(torch::equal(g[0], g[1]));
    QVERIFY(torch::equal(g[0], g[2]));
    QVERIFY(!torch::equal(g[0], base[0]));
    // On a coloured picture the gray noise is (up to rounding) the same in every channel.
    const auto cx = test_clip(2, 32, 32, 0.0);
    const auto cq = to255(reference_quantise(cx));
    // (Strength 0.5 keeps every value far from the clamp at 0 and 255.)
    const auto cg = to255(apply_degradation_op(cx, op("poisson_noise", {{"strength", 0.5}, {"gray", true}}), r)) - cq;
    QVERIFY((cg[0] - cg[1]).abs().max().item<double>() <= 1.0);
    QVERIFY((cg[0] - cg[2]).abs().max().item<double>() <= 1.0);
    QVERIFY(cg.abs().mean().item<double>() > 2.0);
    // Black has no photons: Poisson(0) = 0.
    const auto black = torch::full({3, 1, 16, 16}, -1.0f);
    QVERIFY(
        torch::equal(apply_degradation_op(black, op("poisson_noise", {{"strength", 3.0}, {"gray", false}}), r), black));
  }

  void jpeg() {
    const auto x = test_clip(3, 48, 64, 0.1);
    Rng r(1);
    const auto j = [&](int quality) { return apply_degradation_op(x, op("jpeg", {{"quality", quality}}), r); };
    if (!video_support_built()) {
      QVERIFY(error_of([&] { j(50); }).contains("video support"));
      Rng a(0);
      QVERIFY(error_of([&] { degrade_clip(x, 5, 5, a); }).contains("video support"));
      QSKIP("built without video support");
    }
    const auto q = reference_quantise(x);
    const auto lo = j(30), hi = j(95);
    check_valid_clip(lo, x);
    check_valid_clip(hi, x);
    const double e_lo = mse255(lo, q), e_mid = mse255(j(60), q), e_hi = mse255(hi, q);
    QVERIFY2(e_lo > e_mid && e_mid > e_hi, qPrintable(QString("%1 %2 %3").arg(e_lo).arg(e_mid).arg(e_hi)));
    QVERIFY(e_hi > 0);
    QVERIFY2(10 * std::log10(255.0 * 255.0 / e_hi) > 30, qPrintable(QString::number(e_hi)));  // q95 is close
    QVERIFY(torch::equal(j(70), j(70)));                                                      // no state, no noise
    // Odd sizes and a single frame.
    const auto odd = test_clip(1, 37, 53);
    check_valid_clip(apply_degradation_op(odd, op("jpeg", {{"quality", 40}}), r), odd);
    const auto tiny = test_clip(2, 3, 5);
    check_valid_clip(apply_degradation_op(tiny, op("jpeg", {{"quality", 40}}), r), tiny);
#ifdef WANSTUDIO_HAVE_VIDEO
    // The quality reaches the encoder: a lower quality gives a smaller file.
    ws::video::RgbFrame f(64, 48);
    for (size_t i = 0; i < f.data.size(); ++i) f.data[i] = static_cast<uint8_t>((i * 37 + (i / 192) * 11) % 256);
    ws::video::JpegRoundTrip fine(64, 48, jpeg_qscale(95)), coarse(64, 48, jpeg_qscale(30));
    std::vector<uint8_t> out(f.data.size());
    fine.run(f.data.data(), out.data());
    coarse.run(f.data.data(), out.data());
    QVERIFY(coarse.last_jpeg_bytes() < fine.last_jpeg_bytes());
    QVERIFY(error_of([] { ws::video::JpegRoundTrip bad(8, 8, 40); }).contains("qscale"));
#endif
  }

  void all_ops_odd_sizes() {
    for (auto sz : {std::vector<int64_t>{5, 37, 53}, std::vector<int64_t>{1, 16, 24}, std::vector<int64_t>{2, 5, 7},
                    std::vector<int64_t>{1, 1, 1}}) {
      const auto x = test_clip(sz[0], sz[1], sz[2]);
      // Every op at its largest kernel / smallest scale, then the whole chain.
      Rng r(21);
      for (const auto& o :
           {op("blur", {{"kernel_size", 21}, {"isotropic", true}, {"sigma", 3.0}}),
            op("blur",
               {{"kernel_size", 21}, {"isotropic", false}, {"sigma_x", 3.0}, {"sigma_y", 0.4}, {"theta", -2.0}}),
            op("resize", {{"scale", 0.3}, {"down", "bicubic"}, {"up", "bicubic"}}),
            op("resize", {{"scale", 0.3}, {"down", "area"}, {"up", "bilinear"}}),
            op("gaussian_noise", {{"sigma", 30.0}, {"gray", false}}),
            op("poisson_noise", {{"strength", 3.0}, {"gray", true}})})
        check_valid_clip(apply_degradation_op(x, o, r), x);
      // Every op, in one chain (four without video support).
      const int64_t n = video_support_built() ? 5 : 4;
      int chains = 0;
      for (int64_t k = 0; k < 300 && chains < 3; ++k) {
        Rng a = Rng::keyed(1, "clip", 0, k, 0);
        if (!runnable(peek_ops(a, n, n))) continue;
        const auto d = degrade_clip(x, n, n, a);
        QCOMPARE(d.ops.size(), size_t(n));
        check_valid_clip(d.clip, x);
        ++chains;
      }
      QCOMPARE(chains, 3);
    }
  }

  void bad_ops() {
    const auto x = test_clip(1, 8, 8);
    Rng r(1);
    QVERIFY(error_of([&] {
              apply_degradation_op(x, op("sharpen", nlohmann::json::object()), r);
            }).contains("unknown degradation op"));
    QVERIFY(error_of([&] { draw_degradation_op("sharpen", r); }).contains("unknown degradation op"));
    QVERIFY(error_of([&] {
              apply_degradation_op(x, op("blur", {{"isotropic", true}, {"sigma", 1.0}}), r);
            }).contains("kernel_size"));
    QVERIFY(error_of([&] {
              apply_degradation_op(x, op("blur", {{"kernel_size", 8}, {"isotropic", true}, {"sigma", 1.0}}), r);
            }).contains("odd"));
    QVERIFY(error_of([&] {
              apply_degradation_op(x, op("gaussian_noise", {{"sigma", "big"}, {"gray", false}}), r);
            }).contains("sigma"));
    QVERIFY(error_of([&] {
              apply_degradation_op(x, op("resize", {{"scale", 1.5}, {"down", "area"}, {"up", "bilinear"}}), r);
            }).contains("scale"));
    QVERIFY(error_of([&] {
              apply_degradation_op(x, op("resize", {{"scale", 0.5}, {"down", "nearest"}, {"up", "bilinear"}}), r);
            }).contains("nearest"));
  }

  void fullChainOnALargerClip() {
    // Every op of one draw applied to a 17x256x256 clip: the shape holds, values stay in range
    // and finite, each drawn op is recorded, and the clip changed. (The time is printed for the
    // record only; `bench` measures speed.)
    const auto x = test_clip(17, 256, 256);
    const int64_t n = video_support_built() ? 5 : 4;
    Rng r = Rng::keyed(3, "clip", 0, 0, 0);
    for (int64_t k = 1; !runnable(peek_ops(r, n, n)); ++k) r = Rng::keyed(3, "clip", 0, k, 0);
    const auto t0 = std::chrono::steady_clock::now();
    const auto d = degrade_clip(x, n, n, r);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    qInfo("degrade_clip 17x256x256, %d ops: %.3f s (%s)", int(n), s, degradation_ops_json(d.ops).dump().c_str());
    QCOMPARE(int64_t(d.ops.size()), n);
    QCOMPARE(d.clip.sizes().vec(), x.sizes().vec());
    QVERIFY(torch::isfinite(d.clip).all().item<bool>());
    QVERIFY(d.clip.min().item<float>() >= -1.0f - 1e-5f && d.clip.max().item<float>() <= 1.0f + 1e-5f);
    QVERIFY(!torch::equal(d.clip, x));
  }
};

QTEST_APPLESS_MAIN(TestDegradation)
#include "test_degradation.moc"
