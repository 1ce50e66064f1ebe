// SPDX-License-Identifier: Apache-2.0
// The tiled CPU attention (models/cpu_attention.h) and its row kernels (models/cpu_rows.h): exp and
// its sum within rounding of std::exp on every tail length, NaN carried through, and the attention
// and its three gradients equal to softmax attention computed in double — across tiles of keys
// whose maximum grows from tile to tile (the online softmax's rescaling), query blocks with a
// ragged end, value width ≠ key width, the DiT's [L, n, d] views, and heads split across threads.
#include <ATen/Parallel.h>
#include <QtTest/QtTest>
#include <torch/torch.h>

#include <cmath>
#include <limits>
#include <vector>

#include "models/cpu_attention.h"
#include "models/cpu_isa.h"
#include "models/cpu_rows.h"
#include "models/wan_dit_ops.h"

using namespace ws::models;

namespace {

double rel_diff(const torch::Tensor& a, const torch::Tensor& b) {
  const auto d = (a.to(torch::kDouble) - b.to(torch::kDouble)).abs().max().item<double>();
  return d / std::max(1e-12, b.to(torch::kDouble).abs().max().item<double>());
}

// Softmax attention in double: the reference both paths are held to.
torch::Tensor plain(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v, double scale) {
  return torch::matmul(torch::softmax(torch::matmul(q, k.transpose(1, 2)) * scale, -1), v);
}

struct ThreadsScope {
  int before = at::get_num_threads();
  explicit ThreadsScope(int n) { at::set_num_threads(n); }
  ~ThreadsScope() { at::set_num_threads(before); }
};

struct TiledScope {
  bool before = cpu_attention_choice() == "tiled";
  explicit TiledScope(bool on) { set_cpu_attention(on); }
  ~TiledScope() { set_cpu_attention(before); }
};

// [L, n, d] leaf viewed [n, L, d], as the DiT hands its heads over.
torch::Tensor token_major(int64_t n, int64_t L, int64_t d, double mul = 1.0) {
  return (torch::randn({L, n, d}, torch::kDouble) * mul).to(torch::kFloat).requires_grad_(true);
}

// The row kernels against std::exp in double and plain loops, on every tail length.
void check_row_kernels() {
  torch::manual_seed(1);
  for (int64_t n = 0; n <= 70; ++n) {
    auto x = (torch::rand({n}, torch::kDouble) * 110 - 100).to(torch::kFloat);
    std::vector<float> buf(x.data_ptr<float>(), x.data_ptr<float>() + n);
    const float top = n ? rows::max(buf.data(), n) : 0.f;
    if (n) QCOMPARE(top, x.max().item<float>());
    const float sum = rows::exp_sum(buf.data(), n, 3.f);
    double want_sum = 0;
    for (int64_t i = 0; i < n; ++i) {
      // The argument as the kernels form it (a float difference), so only exp's own error counts.
      const double want = std::exp(double(x[i].item<float>() - 3.f));
      want_sum += want;
      QVERIFY2(std::abs(buf[i] - want) <= 3e-7 * want + 1e-37, (std::to_string(n) + "/" + std::to_string(i)).c_str());
    }
    QVERIFY(std::abs(sum - want_sum) <= 1e-6 * want_sum + 1e-30);
    // The softmax gradient, a scale and a dot product over the same tails.
    std::vector<float> p(n), ds(n), a(n), b(n);
    for (int64_t i = 0; i < n; ++i) p[i] = 0.01f * i, ds[i] = 1.f - 0.03f * i, a[i] = 0.5f * i, b[i] = 2.f - 0.1f * i;
    rows::softmax_grad(ds.data(), p.data(), n, 0.25f);
    rows::scale(a.data(), n, 3.f);
    double dot = 0;
    for (int64_t i = 0; i < n; ++i) {
      QCOMPARE(ds[i], 0.01f * i * ((1.f - 0.03f * i) - 0.25f));
      QCOMPARE(a[i], 0.5f * i * 3.f);
      dot += double(a[i]) * b[i];
    }
    QVERIFY(std::abs(rows::dot(a.data(), b.data(), n) - dot) <= 1e-5 * (1 + std::abs(dot)));
  }
  // A NaN score stays NaN (a broken step must show, not turn into a probability of 0).
  std::vector<float> nan(37, -1.f);
  nan[35] = std::numeric_limits<float>::quiet_NaN();
  QVERIFY(std::isnan(rows::exp_sum(nan.data(), 37, 0.f)));
  QVERIFY(std::isnan(nan[35]));
  // Far below the range: 0, not garbage.
  std::vector<float> low(20, -1000.f);
  QCOMPARE(rows::exp_sum(low.data(), 20, 0.f), 0.f);
}

}  // namespace

class TestCpuAttention : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void initTestCase() {
    set_cpu_attention(true);
    QCOMPARE(QString::fromStdString(cpu_attention_choice()), QString("tiled"));  // the default build has it
  }

  void rowKernels() {
    // Every kernel set this CPU runs (an AVX-512 CPU runs all three), the widest at least.
    const std::string widest = cpu_isa_name(cpu_isa());
    int sets = 0;
    for (const char* isa : {"avx512", "avx2", "scalar"}) {
      if (!use_cpu_isa(isa)) continue;
      QCOMPARE(QString(cpu_isa_name(cpu_isa())), QString(isa));
      check_row_kernels();
      if (QTest::currentTestFailed()) return;
      ++sets;
      if (isa == widest) QVERIFY(sets == 1);
    }
    use_cpu_isa("");
    QCOMPARE(QString(cpu_isa_name(cpu_isa())), QString::fromStdString(widest));
    QVERIFY(sets >= 1);
    QVERIFY(!use_cpu_isa("avx1024"));
  }

  void forwardAndGradients_data() {
    QTest::addColumn<int>("threads");
    QTest::addColumn<int>("heads");
    QTest::newRow("2 threads, 3 heads") << 2 << 3;
    QTest::newRow("4 threads, 1 head: rows split, dk/dv summed") << 4 << 1;
    QTest::newRow("1 thread") << 1 << 2;
  }

  void forwardAndGradients() {
    QFETCH(int, threads);
    QFETCH(int, heads);
    ThreadsScope t(threads);
    torch::manual_seed(7);
    // 300 query rows: blocks of 256 and 44; 1100 keys: tiles of 512, 512 and 76, the later
    // ones with larger scores, so every row's maximum moves up twice.
    const int64_t n = heads, Lq = 300, Lk = 1100, d = 16, dv = 24;
    auto q = token_major(n, Lq, d), v = token_major(n, Lk, dv);
    auto kd = torch::randn({Lk, n, d}, torch::kDouble);
    kd.slice(0, 512, 1024).mul_(2.0);
    kd.slice(0, 1024).mul_(3.0);
    auto k = kd.to(torch::kFloat).requires_grad_(true);
    const auto qh = q.transpose(0, 1), kh = k.transpose(0, 1), vh = v.transpose(0, 1);
    const double scale = 0.6;
    auto go = torch::randn({n, Lq, dv});

    auto out = cpu_attention(qh, kh, vh, scale);
    QCOMPARE(out.sizes(), (std::vector<int64_t>{n, Lq, dv}));
    auto g = torch::autograd::grad({out}, {q, k, v}, {go});

    auto qd = q.detach().to(torch::kDouble).requires_grad_(true),
         kdd = k.detach().to(torch::kDouble).requires_grad_(true),
         vd = v.detach().to(torch::kDouble).requires_grad_(true);
    auto ref = plain(qd.transpose(0, 1), kdd.transpose(0, 1), vd.transpose(0, 1), scale);
    auto g_ref = torch::autograd::grad({ref}, {qd, kdd, vd}, {go.to(torch::kDouble)});
    QVERIFY2(rel_diff(out, ref) < 2e-6, std::to_string(rel_diff(out, ref)).c_str());
    for (int i = 0; i < 3; ++i) {
      QCOMPARE(g[i].sizes(), g_ref[i].sizes());
      QVERIFY2(rel_diff(g[i], g_ref[i]) < 2e-5,
               (std::to_string(i) + ": " + std::to_string(rel_diff(g[i], g_ref[i]))).c_str());
    }
    // Without grad: the same forward, no row statistics kept.
    torch::NoGradGuard no_grad;
    QCOMPARE(rel_diff(cpu_attention(qh, kh, vh, scale), out), 0.0);
  }

  void contiguousOperandsAndOneKey() {
    torch::manual_seed(2);
    auto q = torch::randn({2, 5, 8}), k = torch::randn({2, 1, 8}), v = torch::randn({2, 1, 3});
    // One key: every probability is 1, the output is that value.
    QCOMPARE(rel_diff(cpu_attention(q, k, v, 1.0), v.expand({2, 5, 3})), 0.0);
    auto k2 = torch::randn({2, 9, 8}), v2 = torch::randn({2, 9, 3});
    QVERIFY(rel_diff(cpu_attention(q, k2, v2, 0.3), plain(q, k2, v2, 0.3)) < 2e-6);
    // A single query whose length-1 axis has a stride of 1 (legal for a size-1 axis).
    auto q1 = torch::randn({2, 8}).as_strided({2, 1, 8}, {8, 1, 1});
    QVERIFY(rel_diff(cpu_attention(q1, k2, v2, 0.3), plain(q1, k2, v2, 0.3)) < 2e-6);
    // Columns not of unit stride are copied, not misread.
    auto qt = torch::randn({2, 8, 5}).transpose(1, 2);
    QVERIFY(rel_diff(cpu_attention(qt, k2, v2, 0.3), plain(qt, k2, v2, 0.3)) < 2e-6);
  }

  void wanAttentionRoutesByChoice() {
    torch::manual_seed(4);
    auto q = torch::randn({3, 40, 8}), k = torch::randn({3, 30, 8}), v = torch::randn({3, 30, 8});
    const auto ref = plain(q, k, v, 0.35);
    {
      TiledScope on(true);
      QVERIFY(cpu_attention_applies(q, k, v));
      // The tiled result is a view of [Lq, n, d]; the composed one is head-major and contiguous.
      auto o = wan_attention(q, k, v, 0.35);
      QVERIFY(o.transpose(0, 1).is_contiguous());
      QVERIFY(rel_diff(o, ref) < 2e-6);
      QVERIFY(!cpu_attention_applies(q.to(torch::kBFloat16), k.to(torch::kBFloat16), v.to(torch::kBFloat16)));
      QVERIFY(!cpu_attention_applies(q, k.slice(1, 0, 0), v.slice(1, 0, 0)));
    }
    {
      TiledScope off(false);
      QVERIFY(!cpu_attention_applies(q, k, v));
      auto o = wan_attention(q, k, v, 0.35);
      QVERIFY(o.is_contiguous());
      QVERIFY(rel_diff(o, ref) < 2e-6);
    }
  }
};

QTEST_APPLESS_MAIN(TestCpuAttention)
#include "test_cpu_attention.moc"
