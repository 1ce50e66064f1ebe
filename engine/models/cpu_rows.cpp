// SPDX-License-Identifier: Apache-2.0
#include "models/cpu_rows.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "models/cpu_isa.h"

#if WS_CPU_X86
// GCC 12's AVX-512 headers pass _mm512_undefined_ps() to masked builtins and then warn about it
// wherever those intrinsics are inlined: for the whole file, since the warning comes at the end.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#endif

namespace ws::models::rows {
namespace {

// exp(x) = 2^k · e^r with k = round(x·log₂e) and r = x − k·ln2 (ln2 in two parts, so r keeps its
// low bits), e^r by Cephes' expf polynomial: within 2 ulp of std::exp over the scores' range.
constexpr float kLog2e = 1.44269504088896341f;
constexpr float kLn2Hi = 0.693359375f, kLn2Lo = -2.12194440e-4f;
constexpr float kP0 = 1.9875691500e-4f, kP1 = 1.3981999507e-3f, kP2 = 8.3334519073e-3f, kP3 = 4.1665795894e-2f,
                kP4 = 1.6666665459e-1f, kP5 = 5.0000001201e-1f;

float max_scalar(const float* x, int64_t n) {
  float m = -std::numeric_limits<float>::infinity();
  for (int64_t i = 0; i < n; ++i) m = x[i] > m ? x[i] : m;
  return m;
}

float exp_sum_scalar(float* x, int64_t n, float shift) {
  float s = 0.f;
  for (int64_t i = 0; i < n; ++i) s += x[i] = std::exp(x[i] - shift);
  return s;
}

void softmax_grad_scalar(float* ds, const float* p, int64_t n, float row) {
  for (int64_t i = 0; i < n; ++i) ds[i] = p[i] * (ds[i] - row);
}

void scale_scalar(float* x, int64_t n, float c) {
  for (int64_t i = 0; i < n; ++i) x[i] *= c;
}

float dot_scalar(const float* a, const float* b, int64_t n) {
  float s = 0.f;
  for (int64_t i = 0; i < n; ++i) s += a[i] * b[i];
  return s;
}

#if WS_CPU_X86

// ---- AVX-512: 16 lanes, masked tails, scalef for 2^k (exact down to the denormals) ----

WS_TARGET_AVX512 inline __m512 exp16(__m512 x) {
  // The clamp's constant comes first: MAXPS returns its second operand when one is NaN, so a NaN
  // score stays NaN. Below −104 e^x is 0 in fp32 either way.
  x = _mm512_max_ps(_mm512_set1_ps(-104.f), x);
  const __m512 k =
      _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(kLog2e)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(k, _mm512_set1_ps(kLn2Hi), x);
  r = _mm512_fnmadd_ps(k, _mm512_set1_ps(kLn2Lo), r);
  __m512 p = _mm512_set1_ps(kP0);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kP1));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kP2));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kP3));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kP4));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kP5));
  p = _mm512_fmadd_ps(p, _mm512_mul_ps(r, r), _mm512_add_ps(r, _mm512_set1_ps(1.f)));
  return _mm512_scalef_ps(p, k);
}

WS_TARGET_AVX512 inline __mmask16 tail_mask(int64_t left) { return static_cast<__mmask16>((1u << left) - 1u); }

WS_TARGET_AVX512 float max_512(const float* x, int64_t n) {
  __m512 m0 = _mm512_set1_ps(-std::numeric_limits<float>::infinity()), m1 = m0;
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    m0 = _mm512_max_ps(m0, _mm512_loadu_ps(x + i));
    m1 = _mm512_max_ps(m1, _mm512_loadu_ps(x + i + 16));
  }
  for (; i + 16 <= n; i += 16) m0 = _mm512_max_ps(m0, _mm512_loadu_ps(x + i));
  if (i < n) {
    const __mmask16 k = tail_mask(n - i);
    m1 = _mm512_mask_max_ps(m1, k, m1, _mm512_maskz_loadu_ps(k, x + i));
  }
  return _mm512_reduce_max_ps(_mm512_max_ps(m0, m1));
}

WS_TARGET_AVX512 float exp_sum_512(float* x, int64_t n, float shift) {
  const __m512 s = _mm512_set1_ps(shift);
  __m512 acc = _mm512_setzero_ps();
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512 e = exp16(_mm512_sub_ps(_mm512_loadu_ps(x + i), s));
    _mm512_storeu_ps(x + i, e);
    acc = _mm512_add_ps(acc, e);
  }
  if (i < n) {
    const __mmask16 k = tail_mask(n - i);
    const __m512 e = exp16(_mm512_sub_ps(_mm512_maskz_loadu_ps(k, x + i), s));
    _mm512_mask_storeu_ps(x + i, k, e);
    acc = _mm512_mask_add_ps(acc, k, acc, e);
  }
  return _mm512_reduce_add_ps(acc);
}

WS_TARGET_AVX512 void softmax_grad_512(float* ds, const float* p, int64_t n, float row) {
  const __m512 r = _mm512_set1_ps(row);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    _mm512_storeu_ps(ds + i, _mm512_mul_ps(_mm512_loadu_ps(p + i), _mm512_sub_ps(_mm512_loadu_ps(ds + i), r)));
  if (i < n) {
    const __mmask16 k = tail_mask(n - i);
    _mm512_mask_storeu_ps(
        ds + i, k, _mm512_mul_ps(_mm512_maskz_loadu_ps(k, p + i), _mm512_sub_ps(_mm512_maskz_loadu_ps(k, ds + i), r)));
  }
}

WS_TARGET_AVX512 void scale_512(float* x, int64_t n, float c) {
  const __m512 s = _mm512_set1_ps(c);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) _mm512_storeu_ps(x + i, _mm512_mul_ps(_mm512_loadu_ps(x + i), s));
  if (i < n) {
    const __mmask16 k = tail_mask(n - i);
    _mm512_mask_storeu_ps(x + i, k, _mm512_mul_ps(_mm512_maskz_loadu_ps(k, x + i), s));
  }
}

WS_TARGET_AVX512 float dot_512(const float* a, const float* b, int64_t n) {
  __m512 s0 = _mm512_setzero_ps(), s1 = s0;
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    s0 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i), s0);
    s1 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i + 16), _mm512_loadu_ps(b + i + 16), s1);
  }
  for (; i + 16 <= n; i += 16) s0 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i), s0);
  if (i < n) {
    const __mmask16 k = tail_mask(n - i);
    s1 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(k, a + i), _mm512_maskz_loadu_ps(k, b + i), s1);
  }
  return _mm512_reduce_add_ps(_mm512_add_ps(s0, s1));
}

// ---- AVX2: 8 lanes, scalar tails, 2^k built in the exponent bits (x clamped to normal range) ----

WS_TARGET_AVX2 inline __m256 exp8(__m256 x) {
  // Constants first, as above, so NaN passes; the clamp keeps 2^k a normal float, and what lies
  // below it is 0 (as e^x is there, to within the smallest normal float).
  const __m256 below = _mm256_cmp_ps(x, _mm256_set1_ps(-87.3f), _CMP_LT_OQ);
  x = _mm256_max_ps(_mm256_set1_ps(-87.3f), x);
  x = _mm256_min_ps(_mm256_set1_ps(88.3f), x);
  const __m256 k =
      _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(kLog2e)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(k, _mm256_set1_ps(kLn2Hi), x);
  r = _mm256_fnmadd_ps(k, _mm256_set1_ps(kLn2Lo), r);
  __m256 p = _mm256_set1_ps(kP0);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(kP1));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(kP2));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(kP3));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(kP4));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(kP5));
  p = _mm256_fmadd_ps(p, _mm256_mul_ps(r, r), _mm256_add_ps(r, _mm256_set1_ps(1.f)));
  const __m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(k), _mm256_set1_epi32(127)), 23);
  return _mm256_andnot_ps(below, _mm256_mul_ps(p, _mm256_castsi256_ps(e)));
}

WS_TARGET_AVX2 inline float hsum8(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  return _mm_cvtss_f32(_mm_add_ss(s, _mm_movehdup_ps(s)));
}

WS_TARGET_AVX2 float max_256(const float* x, int64_t n) {
  __m256 m = _mm256_set1_ps(-std::numeric_limits<float>::infinity());
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) m = _mm256_max_ps(m, _mm256_loadu_ps(x + i));
  __m128 h = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
  h = _mm_max_ps(h, _mm_movehl_ps(h, h));
  h = _mm_max_ss(h, _mm_movehdup_ps(h));
  return std::max(_mm_cvtss_f32(h), max_scalar(x + i, n - i));
}

WS_TARGET_AVX2 float exp_sum_256(float* x, int64_t n, float shift) {
  const __m256 s = _mm256_set1_ps(shift);
  __m256 acc = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 e = exp8(_mm256_sub_ps(_mm256_loadu_ps(x + i), s));
    _mm256_storeu_ps(x + i, e);
    acc = _mm256_add_ps(acc, e);
  }
  return hsum8(acc) + exp_sum_scalar(x + i, n - i, shift);
}

WS_TARGET_AVX2 void softmax_grad_256(float* ds, const float* p, int64_t n, float row) {
  const __m256 r = _mm256_set1_ps(row);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(ds + i, _mm256_mul_ps(_mm256_loadu_ps(p + i), _mm256_sub_ps(_mm256_loadu_ps(ds + i), r)));
  softmax_grad_scalar(ds + i, p + i, n - i, row);
}

WS_TARGET_AVX2 void scale_256(float* x, int64_t n, float c) {
  const __m256 s = _mm256_set1_ps(c);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(x + i, _mm256_mul_ps(_mm256_loadu_ps(x + i), s));
  scale_scalar(x + i, n - i, c);
}

WS_TARGET_AVX2 float dot_256(const float* a, const float* b, int64_t n) {
  __m256 s = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) s = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), s);
  return hsum8(s) + dot_scalar(a + i, b + i, n - i);
}
#endif

struct Kernels {
  float (*max)(const float*, int64_t);
  float (*exp_sum)(float*, int64_t, float);
  void (*softmax_grad)(float*, const float*, int64_t, float);
  void (*scale)(float*, int64_t, float);
  float (*dot)(const float*, const float*, int64_t);
};

const Kernels kScalar{max_scalar, exp_sum_scalar, softmax_grad_scalar, scale_scalar, dot_scalar};

#if WS_CPU_X86
const Kernels k512{max_512, exp_sum_512, softmax_grad_512, scale_512, dot_512};
const Kernels k256{max_256, exp_sum_256, softmax_grad_256, scale_256, dot_256};
#endif

const Kernels& row_kernels() {
  switch (cpu_isa()) {
#if WS_CPU_X86
    case CpuIsa::Avx512: return k512;
    case CpuIsa::Avx2: return k256;
#endif
    default: return kScalar;
  }
}

}  // namespace

float max(const float* x, int64_t n) { return row_kernels().max(x, n); }
float exp_sum(float* x, int64_t n, float shift) { return row_kernels().exp_sum(x, n, shift); }
void softmax_grad(float* ds, const float* p, int64_t n, float row) { row_kernels().softmax_grad(ds, p, n, row); }
void scale(float* x, int64_t n, float c) { row_kernels().scale(x, n, c); }
float dot(const float* a, const float* b, int64_t n) { return row_kernels().dot(a, b, n); }

}  // namespace ws::models::rows
