// SPDX-License-Identifier: Apache-2.0
// The CPU GEMM switch (models/cpu_gemm.h): oneDNN's products equal LibTorch's (to rounding) for
// every operand layout the engine passes — transposed and sliced views, batches, accumulation,
// a scaled product, single rows and columns — the Linear's gradients equal at::linear's, the DiT's attention and
// training step run through it, and the LibTorch backend leaves oneDNN untouched.
#include <QtTest/QtTest>
#include <torch/torch.h>

#include <limits>

#include "models/cpu_attention.h"
#include "models/cpu_gemm.h"
#include "models/wan_dit_ops.h"

using namespace ws::models;

namespace {

double rel_diff(const torch::Tensor& a, const torch::Tensor& b) {
  const auto d = (a.to(torch::kDouble) - b.to(torch::kDouble)).abs().max().item<double>();
  return d / std::max(1e-12, b.to(torch::kDouble).abs().max().item<double>());
}

// Restores the process's backend after each test function.
struct BackendScope {
  GemmBackend before = cpu_gemm_backend();
  explicit BackendScope(GemmBackend b) { set_cpu_gemm_backend(b); }
  ~BackendScope() { set_cpu_gemm_backend(before); }
};

bool have_onednn() {
  BackendScope s(GemmBackend::OneDnn);
  return cpu_gemm_backend() == GemmBackend::OneDnn;
}

}  // namespace

class TestCpuGemm : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void init() {
    if (!have_onednn()) QSKIP("this build has no oneDNN API: every product is LibTorch's");
    torch::manual_seed(7);
  }

  void productsEqualLibTorchForEveryLayout() {
    BackendScope s(GemmBackend::OneDnn);
    struct Case {
      const char* name;
      torch::Tensor a, b;
    };
    auto r = [](std::vector<int64_t> s) { return torch::randn(s); };
    std::vector<Case> cases = {
        {"plain", r({37, 53}), r({53, 29})},
        {"a transposed", r({53, 37}).t(), r({53, 29})},
        {"b transposed", r({37, 53}), r({29, 53}).t()},
        {"both transposed", r({53, 37}).t(), r({29, 53}).t()},
        {"row slices", r({80, 53}).slice(0, 5, 42), r({53, 70}).slice(1, 3, 32)},
        {"one row", r({1, 53}), r({53, 29})},
        {"one column", r({37, 53}), r({53, 1})},
        {"k = 1", r({37, 1}), r({1, 29})},
        {"a column-strided", r({37, 106}).slice(1, 0, 106, 2), r({53, 29})},  // neither stride 1: copied
        {"batched", r({3, 37, 53}), r({3, 53, 29})},
        {"batched, b transposed", r({3, 37, 53}), r({3, 29, 53}).transpose(1, 2)},
        {"batched head slice", r({6, 64, 16}).slice(0, 2, 5).slice(1, 8, 40),
         r({6, 64, 16}).slice(0, 2, 5).transpose(1, 2)},
    };
    for (const auto& c : cases) {
      const int64_t before = cpu_gemm_onednn_calls();
      const auto got = gemm(c.a, c.b);
      const auto want = c.a.dim() == 2 ? torch::mm(c.a.to(torch::kDouble), c.b.to(torch::kDouble))
                                       : torch::bmm(c.a.to(torch::kDouble), c.b.to(torch::kDouble));
      QVERIFY2(rel_diff(got, want) < 1e-5, c.name);
      QVERIFY2(cpu_gemm_onednn_calls() > before, c.name);
      // Accumulating into a slice of a wider buffer (the attention's dk and dv per head block).
      auto wide = torch::randn(c.a.dim() == 2 ? std::vector<int64_t>{got.size(0), got.size(1) + 5}
                                              : std::vector<int64_t>{got.size(0), got.size(1), got.size(2) + 5});
      auto into = wide.narrow(-1, 2, got.size(-1));
      const auto start = into.clone();
      gemm_into(into, c.a, c.b, 1.f);
      QVERIFY2(rel_diff(into, start.to(torch::kDouble) + want) < 1e-5, c.name);
    }
  }

  void alphaScalesTheProductOnBothBackends() {
    for (auto backend : {GemmBackend::OneDnn, GemmBackend::LibTorch}) {
      BackendScope s(backend);
      auto a = torch::randn({2, 9, 6}), b = torch::randn({2, 11, 6}).transpose(1, 2);
      const auto want = torch::bmm(a.to(torch::kDouble), b.to(torch::kDouble));
      QVERIFY(rel_diff(gemm(a, b, 0.125f), want * 0.125) < 1e-5);
      QVERIFY(rel_diff(gemm(a[0], b[0], -2.f), want[0] * -2.0) < 1e-5);
      // Accumulating: out + alpha·a·b, even over a NaN-free start; beta 0 ignores a NaN start.
      auto out = torch::ones({2, 9, 11});
      gemm_into(out, a, b, 1.f, 0.5f);
      QVERIFY(rel_diff(out, want * 0.5 + 1.0) < 1e-5);
      auto nan = torch::full({2, 9, 11}, std::numeric_limits<float>::quiet_NaN());
      gemm_into(nan, a, b, 0.f, 0.5f);
      QVERIFY(rel_diff(nan, want * 0.5) < 1e-5);
      // bf16 (LibTorch's product either way): a fresh result's garbage never leaks in.
      for (int i = 0; i < 20; ++i) {
        const auto h = gemm(a.to(torch::kBFloat16), b.to(torch::kBFloat16), 0.125f);
        QVERIFY(torch::isfinite(h).all().item<bool>());
        QVERIFY(rel_diff(h.to(torch::kFloat), want * 0.125) < 2e-2);
      }
    }
  }

  void accumulationLeavesTheRestOfTheBufferAlone() {
    BackendScope s(GemmBackend::OneDnn);
    auto wide = torch::randn({9, 20});
    const auto copy = wide.clone();
    auto into = wide.narrow(1, 4, 7);
    gemm_into(into, torch::randn({9, 5}), torch::randn({5, 7}), 1.f);
    QVERIFY(torch::equal(wide.narrow(1, 0, 4), copy.narrow(1, 0, 4)));
    QVERIFY(torch::equal(wide.narrow(1, 11, 9), copy.narrow(1, 11, 9)));
    QVERIFY(!torch::equal(wide.narrow(1, 4, 7), copy.narrow(1, 4, 7)));
  }

  void linearGradientsEqualAtLinear() {
    BackendScope s(GemmBackend::OneDnn);
    for (bool bias : {true, false}) {
      auto x = torch::randn({2, 13, 24}, torch::requires_grad());
      auto w = torch::randn({31, 24}, torch::requires_grad());
      auto b = bias ? torch::randn({31}, torch::requires_grad()) : torch::Tensor();
      auto gy = torch::randn({2, 13, 31});
      const int64_t before = cpu_gemm_onednn_calls();
      auto y = gemm_linear(x, w, b);
      QCOMPARE(y.sizes(), (c10::IntArrayRef{2, 13, 31}));
      y.backward(gy);
      QVERIFY(cpu_gemm_onednn_calls() >= before + 3);  // forward, dx, dw
      auto x2 = x.detach().clone().requires_grad_(true), w2 = w.detach().clone().requires_grad_(true);
      auto b2 = bias ? b.detach().clone().requires_grad_(true) : torch::Tensor();
      auto y2 = torch::nn::functional::linear(x2, w2, b2);
      y2.backward(gy);
      QVERIFY(rel_diff(y, y2) < 1e-5);
      QVERIFY(rel_diff(x.grad(), x2.grad()) < 1e-5);
      QVERIFY(rel_diff(w.grad(), w2.grad()) < 1e-5);
      if (bias) QVERIFY(rel_diff(b.grad(), b2.grad()) < 1e-6);
    }
    // A frozen weight gets no gradient (and none is computed).
    auto x = torch::randn({5, 8}, torch::requires_grad());
    auto w = torch::randn({3, 8});
    gemm_linear(x, w, torch::Tensor()).sum().backward();
    QVERIFY(x.grad().defined());
    QVERIFY(!w.grad().defined());
  }

  void attentionAndGeluLinearRunThroughIt() {
    // The composed attention's products (the tiled one, the CPU's default, calls oneDNN itself).
    const bool tiled = cpu_attention_choice() == "tiled";
    set_cpu_attention(false);
    struct Restore {
      bool on;
      ~Restore() { set_cpu_attention(on); }
    } restore{tiled};
    auto run = [](GemmBackend backend) {
      BackendScope s(backend);
      torch::manual_seed(3);
      auto q = torch::randn({4, 96, 16}, torch::requires_grad()), k = torch::randn({4, 80, 16}, torch::requires_grad());
      auto v = torch::randn({4, 80, 16}, torch::requires_grad());
      auto h = torch::randn({96, 40}, torch::requires_grad()), w = torch::randn({16, 40}, torch::requires_grad());
      auto bias = torch::randn({16}, torch::requires_grad());
      const int64_t before = cpu_gemm_onednn_calls();
      // A small score budget splits the attention into blocks of rows, as long sequences do.
      auto o = wan_attention(q, k, v, 0.25, 4 * 96 * 80 / 8);
      auto y = wan_gelu_linear(h, w, bias);
      ((o.square().sum() + (y * o.select(0, 0)).sum())).backward();
      return std::make_tuple(
          cpu_gemm_onednn_calls() - before,
          std::vector<torch::Tensor>{o, y, q.grad(), k.grad(), v.grad(), h.grad(), w.grad(), bias.grad()});
    };
    const auto [calls_dnnl, with_dnnl] = run(GemmBackend::OneDnn);
    const auto [calls_torch, with_torch] = run(GemmBackend::LibTorch);
    QVERIFY(calls_dnnl > 10);
    QCOMPARE(calls_torch, int64_t{0});
    for (size_t i = 0; i < with_dnnl.size(); ++i)
      QVERIFY2(rel_diff(with_dnnl[i], with_torch[i]) < 1e-4, std::to_string(i).c_str());
  }

  void otherDtypesFallBackToLibTorch() {
    BackendScope s(GemmBackend::OneDnn);
    const int64_t before = cpu_gemm_onednn_calls();
    auto a = torch::randn({8, 8}, torch::kDouble), b = torch::randn({8, 8}, torch::kDouble);
    QVERIFY(torch::allclose(gemm(a, b), torch::mm(a, b)));
    auto x = torch::randn({4, 8}).to(torch::kBFloat16), w = torch::randn({3, 8}).to(torch::kBFloat16);
    QVERIFY(torch::equal(gemm_linear(x, w, torch::Tensor()), torch::nn::functional::linear(x, w)));
    QCOMPARE(cpu_gemm_onednn_calls(), before);
  }

  void theDescriptionSaysWhichAndWhy() {
    {
      BackendScope s(GemmBackend::OneDnn);
      QVERIFY(QString::fromStdString(cpu_gemm_description()).startsWith("onednn"));
    }
    BackendScope s(GemmBackend::LibTorch);
    QVERIFY(QString::fromStdString(cpu_gemm_description()).startsWith("libtorch"));
  }
};

QTEST_GUILESS_MAIN(TestCpuGemm)
#include "test_cpu_gemm.moc"
