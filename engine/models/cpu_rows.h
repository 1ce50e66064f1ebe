// SPDX-License-Identifier: Apache-2.0
// Row kernels of the CPU attention (models/cpu_attention.h): max, exp with its sum, and the
// softmax's gradient over one row of fp32 scores. The build targets the baseline x86-64, where
// LibTorch's vector headers fall back to scalar code; these pick AVX-512 or AVX2 at run time
// (checked once per process) and a scalar loop elsewhere, so one binary runs everywhere.
#pragma once
#include <cstdint>

namespace ws::models::rows {

// max_i x[i]; −∞ for an empty row.
float max(const float* x, int64_t n);
// x[i] = exp(x[i] − shift) in place; returns Σ of the new x. NaN stays NaN.
float exp_sum(float* x, int64_t n, float shift);
// ds[i] = p[i] · (ds[i] − row): the softmax's backward with dO·O as the row term.
void softmax_grad(float* ds, const float* p, int64_t n, float row);
// x[i] *= c
void scale(float* x, int64_t n, float c);
// Σ_i a[i]·b[i]
float dot(const float* a, const float* b, int64_t n);

// "avx512", "avx2" or "scalar": which kernels run here (for bench reports and tests).
const char* isa();
// For tests: run the named kernels from now on ("" for the CPU's widest again). False, and no
// change, when this CPU cannot run them.
bool use_isa(const char* name);

}  // namespace ws::models::rows
