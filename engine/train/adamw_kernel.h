// SPDX-License-Identifier: Apache-2.0
// AdamW's whole update of fp32 CPU tensors in one pass: p, grad, m and v are read once and p, m,
// v written once, where the update as LibTorch ops takes seven passes (and, on 2 threads, seven
// wake-ups of the other thread for every slice). AVX-512, AVX2 or scalar code as cpu_isa() says
// (models/cpu_isa.h); the arithmetic is the ops' own, in their order.
#pragma once
#include <cstdint>

namespace ws::train {

// The step's constants, as the ops would see them (LibTorch turns a double scalar into the
// tensor's float).
struct AdamWScalars {
  float decay;  // 1 − lr·weight_decay
  float beta1, one_minus_beta1, beta2, one_minus_beta2;
  float bc2_sqrt;  // √(1 − β₂^step)
  float eps;
  float neg_step;  // −lr / (1 − β₁^step)
};

// p = p·decay; m = β₁m + (1−β₁)g; v = β₂v + (1−β₂)g²; p += neg_step · m / (√v / bc2_sqrt + eps).
void adamw_update(float* p, const float* g, float* m, float* v, int64_t n, const AdamWScalars& s);

}  // namespace ws::train
