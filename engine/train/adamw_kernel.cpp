// SPDX-License-Identifier: Apache-2.0
#include "train/adamw_kernel.h"

#include <cmath>

#include "models/cpu_isa.h"

#if WS_CPU_X86
// GCC 12's AVX-512 headers pass _mm512_undefined_ps() to masked builtins and then warn about it
// wherever those intrinsics are inlined: for the whole file, since the warning comes at the end.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#endif

namespace ws::train {
namespace {

using models::CpuIsa;

void adamw_scalar(float* p, const float* g, float* m, float* v, int64_t n, const AdamWScalars& s) {
  for (int64_t i = 0; i < n; ++i) {
    const float pi = p[i] * s.decay;
    const float mi = m[i] * s.beta1 + g[i] * s.one_minus_beta1;
    const float vi = v[i] * s.beta2 + g[i] * g[i] * s.one_minus_beta2;
    m[i] = mi;
    v[i] = vi;
    p[i] = pi + s.neg_step * (mi / (std::sqrt(vi) / s.bc2_sqrt + s.eps));
  }
}

#if WS_CPU_X86
struct Consts512 {
  __m512 decay, b1, c1, b2, c2, bc, eps, step;
};

// 16 elements from i, the lanes in k.
WS_TARGET_AVX512 inline void adamw16(float* p, const float* g, float* m, float* v, int64_t i, __mmask16 k,
                                     const Consts512& c) {
  const __m512 gi = _mm512_maskz_loadu_ps(k, g + i);
  const __m512 pi = _mm512_mul_ps(_mm512_maskz_loadu_ps(k, p + i), c.decay);
  const __m512 mi = _mm512_add_ps(_mm512_mul_ps(_mm512_maskz_loadu_ps(k, m + i), c.b1), _mm512_mul_ps(gi, c.c1));
  const __m512 vi =
      _mm512_add_ps(_mm512_mul_ps(_mm512_maskz_loadu_ps(k, v + i), c.b2), _mm512_mul_ps(_mm512_mul_ps(gi, gi), c.c2));
  const __m512 denom = _mm512_add_ps(_mm512_div_ps(_mm512_sqrt_ps(vi), c.bc), c.eps);
  _mm512_mask_storeu_ps(m + i, k, mi);
  _mm512_mask_storeu_ps(v + i, k, vi);
  _mm512_mask_storeu_ps(p + i, k, _mm512_add_ps(pi, _mm512_mul_ps(c.step, _mm512_div_ps(mi, denom))));
}

WS_TARGET_AVX512 void adamw_512(float* p, const float* g, float* m, float* v, int64_t n, const AdamWScalars& s) {
  const Consts512 c{_mm512_set1_ps(s.decay), _mm512_set1_ps(s.beta1),           _mm512_set1_ps(s.one_minus_beta1),
                    _mm512_set1_ps(s.beta2), _mm512_set1_ps(s.one_minus_beta2), _mm512_set1_ps(s.bc2_sqrt),
                    _mm512_set1_ps(s.eps),   _mm512_set1_ps(s.neg_step)};
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) adamw16(p, g, m, v, i, 0xFFFF, c);
  if (i < n) adamw16(p, g, m, v, i, static_cast<__mmask16>((1u << (n - i)) - 1u), c);
}

WS_TARGET_AVX2 void adamw_256(float* p, const float* g, float* m, float* v, int64_t n, const AdamWScalars& s) {
  const __m256 decay = _mm256_set1_ps(s.decay), b1 = _mm256_set1_ps(s.beta1), c1 = _mm256_set1_ps(s.one_minus_beta1);
  const __m256 b2 = _mm256_set1_ps(s.beta2), c2 = _mm256_set1_ps(s.one_minus_beta2);
  const __m256 bc = _mm256_set1_ps(s.bc2_sqrt), eps = _mm256_set1_ps(s.eps), step = _mm256_set1_ps(s.neg_step);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 gi = _mm256_loadu_ps(g + i);
    const __m256 pi = _mm256_mul_ps(_mm256_loadu_ps(p + i), decay);
    const __m256 mi = _mm256_add_ps(_mm256_mul_ps(_mm256_loadu_ps(m + i), b1), _mm256_mul_ps(gi, c1));
    const __m256 vi =
        _mm256_add_ps(_mm256_mul_ps(_mm256_loadu_ps(v + i), b2), _mm256_mul_ps(_mm256_mul_ps(gi, gi), c2));
    const __m256 denom = _mm256_add_ps(_mm256_div_ps(_mm256_sqrt_ps(vi), bc), eps);
    _mm256_storeu_ps(m + i, mi);
    _mm256_storeu_ps(v + i, vi);
    _mm256_storeu_ps(p + i, _mm256_add_ps(pi, _mm256_mul_ps(step, _mm256_div_ps(mi, denom))));
  }
  adamw_scalar(p + i, g + i, m + i, v + i, n - i, s);
}
#endif

}  // namespace

void adamw_update(float* p, const float* g, float* m, float* v, int64_t n, const AdamWScalars& s) {
  switch (models::cpu_isa()) {
#if WS_CPU_X86
    case CpuIsa::Avx512: return adamw_512(p, g, m, v, n, s);
    case CpuIsa::Avx2: return adamw_256(p, g, m, v, n, s);
#endif
    default: return adamw_scalar(p, g, m, v, n, s);
  }
}

}  // namespace ws::train
