// SPDX-License-Identifier: Apache-2.0
// fp8 e4m3fn weight storage (docs/design/dual-expert-training.md §10). Codes are bit-identical to
// float8_e4m3fn: 1 sign, 4 exponent bits (bias 7), 3 mantissa bits, max ±448, no infinities,
// 0x7f/0xff NaN. Encoding rounds to nearest, ties to even, and saturates at ±448.
// LibTorch ≥ 2.1 has the dtype: copies are stored as Float8_e4m3fn tensors (the same bytes),
// converted natively, and on CUDA GPUs with fp8 matmuls the forward is one scaled matmul. LibTorch
// 1.13 has no float8 dtype: there the copies are uint8 tensors and this file's own codec converts.
#pragma once
#include <torch/torch.h>
#include <torch/version.h>

#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 1)
#define WANSTUDIO_HAVE_FLOAT8 1
#else
#define WANSTUDIO_HAVE_FLOAT8 0
#endif

namespace ws::models {

// float tensor → uint8 codes (same shape).
torch::Tensor fp8_e4m3_encode(const torch::Tensor& x);
// uint8 codes → values in `dtype`.
torch::Tensor fp8_e4m3_decode(const torch::Tensor& codes, torch::ScalarType dtype = torch::kFloat);

// The dtype fp8 copies are stored in: Float8_e4m3fn where LibTorch has it, else uint8 codes.
torch::ScalarType fp8_storage_dtype();
// Stored copies (either dtype) → values in `dtype`.
torch::Tensor fp8_to(const torch::Tensor& stored, torch::ScalarType dtype);

// A Linear weight kept as e4m3 with one per-tensor scale: w ≈ fp8_to(codes) / scale,
// scale = 448 / amax|w| (absmax calibration).
struct Fp8Weight {
  torch::Tensor codes;  // fp8_storage_dtype(), the weight's shape
  double scale = 1.0;
  bool defined() const { return codes.defined(); }
  torch::Tensor dequantize(torch::ScalarType dtype) const { return fp8_to(codes, dtype) / scale; }
};
Fp8Weight fp8_quantize(const torch::Tensor& w);

// Whether fp8_linear may run its forward as a scaled fp8 matmul (activations quantised per tensor)
// on CUDA tensors: LibTorch ≥ 2.1, a GPU that has the kernel, WANSTUDIO_FP8_MATMUL not 0. The
// first refusal by the GPU turns it off for the process; the dequantised bf16 matmul stands in.
bool fp8_scaled_matmul_enabled();

// y = x·Wqᵀ + b with Wq the dequantised fp8 copy; the gradient of W is the straight-through one
// (∂y/∂W as if W itself had been used), so the optimizer updates the master weight. Only the
// codes are kept for backward, never a full-precision copy of the weight.
torch::Tensor fp8_linear(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias,
                         const Fp8Weight& q);

}  // namespace ws::models
