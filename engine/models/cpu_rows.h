// SPDX-License-Identifier: Apache-2.0
// Row kernels of the CPU attention (models/cpu_attention.h): max, exp with its sum, and the
// softmax's gradient over one row of fp32 scores, in AVX-512, AVX2 or scalar code as cpu_isa()
// says (models/cpu_isa.h), so one binary runs everywhere.
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

}  // namespace ws::models::rows
