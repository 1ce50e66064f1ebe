// SPDX-License-Identifier: Apache-2.0
// The numerical kernels of the degradation ops (data/degradation.h): exact Poisson draws and
// the blur filters. Internal to data/degradation.cpp; tested through the ops.
#pragma once
#include <cstdint>
#include <vector>

#include "data/random_streams.h"

namespace ws::data::degradation_kernels {

// Inversion through a CDF table with a guide table (Chen & Asau): the guide entry for u is a
// lower bound of the answer, so a sample costs one uniform and about one comparison.
struct CdfTable {
  std::vector<double> cdf;
  std::vector<int32_t> guide;

  explicit CdfTable(double lambda);
  // The smallest k with cdf[k] > u, for u in [0, 1).
  int64_t sample(double u) const;
};

// Exact Poisson draws for the two cases the op needs:
//  * a pixel value v in 0..255: lambda = 256 v / 255 takes 256 values, one table each;
//  * any lambda in [0, 256] (luma): Poisson(a + b) = Poisson(a) + Poisson(b) for independent
//    parts, the integer part a from a table and the fraction b < 1 by direct inversion.
class PoissonSampler {
 public:
  PoissonSampler();
  int64_t sample_value(int v, Rng& r) const { return by_value_[static_cast<size_t>(v)].sample(r.uniform()); }
  int64_t sample(double lambda, Rng& r) const;

 private:
  std::vector<CdfTable> by_value_, by_int_;
};

const PoissonSampler& poisson_sampler();

// Mirror index without repeating the edge (torch/numpy "reflect"), valid for any offset, so
// a 21-tap kernel also works on pictures smaller than its radius.
int64_t reflect_index(int64_t i, int64_t n);
std::vector<int64_t> reflect_indices(int64_t n, int64_t pad);
// Isotropic Gaussian: the normalized 2-D kernel is the outer product of this normalized 1-D
// one, so it runs as two 1-D passes (2k taps per pixel instead of k^2).
std::vector<float> gaussian_1d(int64_t k, double sigma);
// Anisotropic Gaussian, Real-ESRGAN's bivariate_Gaussian: covariance R diag(sx^2, sy^2) R^T
// with R the rotation by theta; x is the column offset, y the row offset. Row-major k x k.
std::vector<double> bivariate_gaussian(int64_t k, double sx, double sy, double theta);
// The smallest m >= n with no prime factor above 7: sizes FFT libraries are fast at.
int64_t fft_size(int64_t n);

}  // namespace ws::data::degradation_kernels
