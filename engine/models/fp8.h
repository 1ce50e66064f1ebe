// SPDX-License-Identifier: Apache-2.0
// fp8 e4m3fn weight storage (docs/design/dual-expert-training.md §10) in plain uint8 tensors, so it works on
// every LibTorch (1.13 has no float8 dtype) and device. Codes are bit-identical to
// float8_e4m3fn: 1 sign, 4 exponent bits (bias 7), 3 mantissa bits, max ±448, no infinities,
// 0x7f/0xff NaN. Encoding rounds to nearest, ties to even, and saturates at ±448.
#pragma once
#include <torch/torch.h>

namespace ws::models {

// float tensor → uint8 codes (same shape).
torch::Tensor fp8_e4m3_encode(const torch::Tensor& x);
// uint8 codes → values in `dtype`.
torch::Tensor fp8_e4m3_decode(const torch::Tensor& codes, torch::ScalarType dtype = torch::kFloat);

// A Linear weight kept as e4m3 codes with one per-tensor scale: w ≈ decode(codes) / scale,
// scale = 448 / amax|w| (absmax calibration).
struct Fp8Weight {
  torch::Tensor codes;  // uint8, the weight's shape
  double scale = 1.0;
  bool defined() const { return codes.defined(); }
  torch::Tensor dequantize(torch::ScalarType dtype) const { return fp8_e4m3_decode(codes, dtype) / scale; }
};
Fp8Weight fp8_quantize(const torch::Tensor& w);

// y = x·Wqᵀ + b with Wq the dequantised fp8 copy; the gradient of W is the straight-through one
// (∂y/∂W as if W itself had been used), so the optimizer updates the master weight. Only the
// codes are kept for backward, never a full-precision copy of the weight.
torch::Tensor fp8_linear(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias,
                         const Fp8Weight& q);

}  // namespace ws::models
