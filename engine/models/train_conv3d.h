// SPDX-License-Identifier: Apache-2.0
// A 3×3×3, stride-1, padding-1 conv3d for CPU training that stays on oneDNN in forward and
// backward. LibTorch 1.13 sends batch-1 conv3d with N·C·D·H ≤ 20480 to its slow vol2col path,
// which dominates small upsampler steps; this one is 2–3× faster there and matches it to fp32
// rounding (tests/engine/test_train_loop.cpp).
#pragma once
#include <torch/torch.h>

namespace ws::models {

// On by default; benchmarks switch it off to measure LibTorch's own path.
void set_train_conv3d_enabled(bool on);

// True when LibTorch itself would take the slow path for this training conv on the CPU.
bool train_conv3d_applies(const torch::Tensor& x, const torch::Tensor& weight);

// y = conv3d(x, weight, bias, stride 1, padding 1) with oneDNN gradients for x, weight, bias.
torch::Tensor train_conv3d(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias);

}  // namespace ws::models
