// SPDX-License-Identifier: Apache-2.0
// fp32 matrix products on the CPU through oneDNN's own GEMM where LibTorch's BLAS would run a
// lesser kernel. Debian's OpenBLAS 0.3.21 picks its kernels by CPU model and, on a model newer
// than itself (Emerald Rapids), falls back to its SSE3 "Prescott" kernels: 70 GF/s on 2 cores
// where oneDNN's AVX-512 GEMM, which picks by instruction set, gives 380. Every product here
// falls back to LibTorch's own op when the backend is LibTorch or the operands are not fp32 CPU
// tensors, so callers need no second path.
#pragma once
#include <ATen/core/Tensor.h>

#include <string>

namespace ws::models {

enum class GemmBackend { LibTorch, OneDnn };

// Chosen once per process: WANSTUDIO_GEMM=onednn or =libtorch when set; otherwise oneDNN when this
// build has it and LibTorch multiplies through a BLAS that is not MKL and either is not OpenBLAS
// (the reference BLAS behind Debian's alternatives) or is an OpenBLAS whose kernels use a narrower
// vector instruction set than the CPU has (an AVX2 OpenBLAS on an AVX-512 CPU too: it leaves half
// the width unused). MKL (PyPI's LibTorch) is kept: it picks by instruction set itself.
GemmBackend cpu_gemm_backend();
// One line for logs and bench reports: the backend and why ("onednn (OpenBLAS core Prescott: sse3;
// CPU avx512)").
std::string cpu_gemm_description();
// For tests and benches: use this backend from now on in this process (oneDNN only where built).
void set_cpu_gemm_backend(GemmBackend backend);
// Products oneDNN has run in this process (a test's proof that the backend was used).
int64_t cpu_gemm_onednn_calls();

// out = beta·out + alpha·a·b, 2-D [M, K]·[K, N] or batched 3-D. Transposed views are read in
// place; out must have unit stride in its last dim. beta is 0 or 1 (1: accumulate, as
// addmm_/baddbmm_); alpha scales the product inside the GEMM (no pass of its own over out).
void gemm_into(const at::Tensor& out, const at::Tensor& a, const at::Tensor& b, float beta = 0.f, float alpha = 1.f);
// 2-D or 3-D, a new contiguous result.
at::Tensor gemm(const at::Tensor& a, const at::Tensor& b, float alpha = 1.f);

// x·wᵀ + b over the last dim of x, with autograd: its backward runs the same products
// (dx = dy·w, dw = dyᵀ·x, db = Σ dy). b may be undefined.
at::Tensor gemm_linear(const at::Tensor& x, const at::Tensor& w, const at::Tensor& b);

}  // namespace ws::models
