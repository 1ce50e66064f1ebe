// SPDX-License-Identifier: Apache-2.0
// What only a CUDA build on a GPU can show, registered only in builds with CUDA paths: LibTorch's
// fused attention against the engine's own, bf16 on the device, and an NCCL group of one. Without a
// CUDA device every check is a skip that says so (never a pass).
#include <QtTest/QtTest>
#include <torch/torch.h>

#include <algorithm>
#include <cstdlib>

#include "models/fp8.h"
#include "models/wan_dit_ops.h"
#include "parallel/data_parallel.h"

class TestCuda : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void initTestCase() {
    if (!torch::cuda::is_available()) QSKIP("no CUDA device");
  }

  // The fused kernel (LibTorch ≥ 2.1) and the chunked attention compute the same softmax(q kᵀ s) v.
  void fusedAttentionMatchesChunked() {
    if (!ws::models::fused_attention_available()) QSKIP("this build has no fused attention");
    torch::manual_seed(0);
    const auto opts = torch::TensorOptions().dtype(torch::kBFloat16).device(torch::kCUDA);
    auto q = torch::randn({4, 300, 64}, opts), k = torch::randn({4, 200, 64}, opts),
         v = torch::randn({4, 200, 64}, opts);
    const double s = 1.0 / 8.0;
    const auto fused = ws::models::wan_attention(q, k, v, s).to(torch::kFloat).cpu();
    const auto plain =
        ws::models::wan_attention(q.cpu().to(torch::kFloat), k.cpu().to(torch::kFloat), v.cpu().to(torch::kFloat), s);
    const double diff = (fused - plain).abs().max().item<double>();
    QVERIFY2(diff < 3e-2, qPrintable(QString::number(diff)));
  }

  // fp8 block Linears on the GPU: Float8_e4m3fn copies; where the GPU has fp8 matmuls the forward is
  // one scaled matmul (activations quantised per tensor), close to the dequantised bf16 product, and
  // gradients still reach x (dequantised) and the master weight (straight through).
  void fp8LinearOnTheGpu() {
    torch::manual_seed(1);
    const auto dev = torch::Device(torch::kCUDA);
    auto w = (torch::randn({256, 128}) * 0.05).to(dev).requires_grad_();
    auto b = torch::randn({256}).to(dev).requires_grad_();
    auto q = ws::models::fp8_quantize(w);
    QCOMPARE(q.codes.scalar_type(), ws::models::fp8_storage_dtype());
    QVERIFY(q.codes.is_cuda());
    auto x = torch::randn({64, 128}, torch::TensorOptions().dtype(torch::kBFloat16).device(dev)).requires_grad_();
    auto y = ws::models::fp8_linear(x, w, b, q);
    QCOMPARE(y.scalar_type(), torch::kBFloat16);
    auto ref =
        torch::addmm(b.detach().to(torch::kFloat), x.detach().to(torch::kFloat), q.dequantize(torch::kFloat).t());
    const double rel = ((y.to(torch::kFloat) - ref).norm() / ref.norm()).item<double>();
    // Activations in e4m3 add about 2^-5 relative error per element; the sums average it down.
    QVERIFY2(rel < 0.03, qPrintable(QString::number(rel)));
    y.to(torch::kFloat).sum().backward();
    QVERIFY(x.grad().defined() && w.grad().defined() && b.grad().defined());
    qInfo("fp8 scaled matmul: %s, relative error %.4f",
          ws::models::fp8_scaled_matmul_enabled() ? "used" : "refused by this GPU (dequantised)", rel);
  }

  // WANSTUDIO_DP_BACKEND=nccl makes a group even of one process; its collectives run on the GPU.
  void ncclGroupOfOne() {
    const auto backends = ws::parallel::DataParallel::backends();
    if (std::find(backends.begin(), backends.end(), "nccl") == backends.end()) QSKIP("this build has no NCCL");
    qputenv("WANSTUDIO_DP_BACKEND", "nccl");
    ws::parallel::DistEnv env;
    env.master_port = 29000 + std::rand() % 500;
    auto dp = ws::parallel::DataParallel::connect(env, torch::Device(torch::kCUDA, 0), 60);
    qunsetenv("WANSTUDIO_DP_BACKEND");
    QVERIFY(dp);
    QCOMPARE(QString::fromStdString(dp->backend()), QStringLiteral("nccl"));
    auto g = torch::ones({1000}, torch::TensorOptions().device(torch::kCUDA)).requires_grad_();
    g.mutable_grad() = torch::full({1000}, 3.0, g.options());
    dp->average_gradients({g});
    QCOMPARE(g.grad().sum().item<double>(), 3000.0);  // the mean over one rank
    QVERIFY(dp->any(true));
    dp->barrier();
  }
};

QTEST_GUILESS_MAIN(TestCuda)
#include "test_cuda.moc"
