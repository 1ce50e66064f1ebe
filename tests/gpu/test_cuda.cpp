// SPDX-License-Identifier: Apache-2.0
// What only a CUDA build on a GPU can show, registered only in builds with CUDA paths: LibTorch's
// fused attention against the engine's own, bf16 on the device, and an NCCL group of one. Without a
// CUDA device every check is a skip that says so (never a pass).
#include <QtTest/QtTest>
#include <torch/torch.h>

#include <algorithm>
#include <cstdlib>

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
