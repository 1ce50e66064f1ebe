// SPDX-License-Identifier: Apache-2.0
#include "data/degradation_kernels.h"

#include <algorithm>
#include <cmath>

namespace ws::data::degradation_kernels {

CdfTable::CdfTable(double lambda) {
  if (lambda <= 0) {
    cdf = {1.0};
    guide = {0};
    return;
  }
  // Beyond lambda + 12 sqrt(lambda) + 20 the tail is far below double resolution.
  const int kmax = static_cast<int>(std::ceil(lambda + 12.0 * std::sqrt(lambda))) + 20;
  cdf.resize(static_cast<size_t>(kmax) + 1);
  double sum = 0;
  for (int k = 0; k <= kmax; ++k) {
    sum += std::exp(k * std::log(lambda) - lambda - std::lgamma(k + 1.0));
    cdf[static_cast<size_t>(k)] = sum;
  }
  guide.resize(cdf.size());
  size_t k = 0;
  for (size_t j = 0; j < guide.size(); ++j) {
    const double level = static_cast<double>(j) / static_cast<double>(guide.size());
    while (k + 1 < cdf.size() && cdf[k] <= level) ++k;
    guide[j] = static_cast<int32_t>(k);
  }
}

int64_t CdfTable::sample(double u) const {
  size_t k = static_cast<size_t>(guide[static_cast<size_t>(u * static_cast<double>(guide.size()))]);
  while (k + 1 < cdf.size() && cdf[k] <= u) ++k;
  return static_cast<int64_t>(k);
}

PoissonSampler::PoissonSampler() {
  for (int v = 0; v < 256; ++v) by_value_.emplace_back(v * 256.0 / 255.0);
  for (int a = 0; a <= 256; ++a) by_int_.emplace_back(static_cast<double>(a));
}

int64_t PoissonSampler::sample(double lambda, Rng& r) const {
  lambda = std::min(std::max(lambda, 0.0), 256.0);
  const int a = static_cast<int>(lambda);
  const double b = lambda - a;
  int64_t x = by_int_[static_cast<size_t>(a)].sample(r.uniform());
  if (b > 0) {
    const double u = r.uniform();
    double pk = std::exp(-b), cdf = pk;
    int64_t j = 0;
    while (u >= cdf && j < 40) {
      ++j;
      pk *= b / static_cast<double>(j);
      cdf += pk;
    }
    x += j;
  }
  return x;
}

const PoissonSampler& poisson_sampler() {
  static const PoissonSampler s;
  return s;
}

// Mirror index without repeating the edge (torch/numpy "reflect"), valid for any offset, so
// a 21-tap kernel also works on pictures smaller than its radius.
int64_t reflect_index(int64_t i, int64_t n) {
  if (n == 1) return 0;
  const int64_t period = 2 * (n - 1);
  i %= period;
  if (i < 0) i += period;
  return i < n ? i : period - i;
}

std::vector<int64_t> reflect_indices(int64_t n, int64_t pad) {
  std::vector<int64_t> idx(static_cast<size_t>(n + 2 * pad));
  for (int64_t i = 0; i < n + 2 * pad; ++i) idx[static_cast<size_t>(i)] = reflect_index(i - pad, n);
  return idx;
}

// Isotropic Gaussian: the normalized 2-D kernel is the outer product of this normalized 1-D
// one, so it runs as two 1-D passes (2k taps per pixel instead of k^2).
std::vector<float> gaussian_1d(int64_t k, double sigma) {
  std::vector<double> g(static_cast<size_t>(k));
  double sum = 0;
  for (int64_t i = 0; i < k; ++i) {
    const double d = static_cast<double>(i - k / 2);
    g[static_cast<size_t>(i)] = std::exp(-0.5 * d * d / (sigma * sigma));
    sum += g[static_cast<size_t>(i)];
  }
  std::vector<float> out(g.size());
  for (size_t i = 0; i < g.size(); ++i) out[i] = static_cast<float>(g[i] / sum);
  return out;
}

// Anisotropic Gaussian, Real-ESRGAN's bivariate_Gaussian: covariance R diag(sx^2, sy^2) R^T
// with R the rotation by theta; x is the column offset, y the row offset. Row-major k x k.
std::vector<double> bivariate_gaussian(int64_t k, double sx, double sy, double theta) {
  const double c = std::cos(theta), s = std::sin(theta), sx2 = sx * sx, sy2 = sy * sy;
  const double a = c * c * sx2 + s * s * sy2, b = c * s * (sx2 - sy2), d = s * s * sx2 + c * c * sy2;
  const double det = a * d - b * b;
  const double i00 = d / det, i01 = -b / det, i11 = a / det;
  std::vector<double> kern(static_cast<size_t>(k * k));
  double sum = 0;
  for (int64_t j = 0; j < k; ++j)
    for (int64_t i = 0; i < k; ++i) {
      const double x = static_cast<double>(i - k / 2), y = static_cast<double>(j - k / 2);
      const double v = std::exp(-0.5 * (i00 * x * x + 2 * i01 * x * y + i11 * y * y));
      kern[static_cast<size_t>(j * k + i)] = v;
      sum += v;
    }
  for (double& v : kern) v /= sum;
  return kern;
}

// The smallest m >= n with no prime factor above 7: sizes FFT libraries are fast at.
int64_t fft_size(int64_t n) {
  for (int64_t m = n;; ++m) {
    int64_t v = m;
    for (int64_t p : {2, 3, 5, 7})
      while (v % p == 0) v /= p;
    if (v == 1) return m;
  }
}

}  // namespace ws::data::degradation_kernels
