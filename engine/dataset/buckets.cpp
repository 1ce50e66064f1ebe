// SPDX-License-Identifier: Apache-2.0
#include "dataset/buckets.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/error.h"

namespace ws::dataset {

const std::vector<AspectBucket>& aspect_ratio_512() {
  static const std::vector<AspectBucket> table{
      {0.25, 256, 1024}, {0.26, 256, 992}, {0.27, 256, 960}, {0.28, 256, 928}, {0.32, 288, 896}, {0.33, 288, 864},
      {0.35, 288, 832},  {0.4, 320, 800},  {0.42, 320, 768}, {0.48, 352, 736}, {0.5, 352, 704},  {0.52, 352, 672},
      {0.57, 384, 672},  {0.6, 384, 640},  {0.68, 416, 608}, {0.72, 416, 576}, {0.78, 448, 576}, {0.82, 448, 544},
      {0.88, 480, 544},  {0.94, 480, 512}, {1.0, 512, 512},  {1.07, 512, 480}, {1.13, 544, 480}, {1.21, 544, 448},
      {1.29, 576, 448},  {1.38, 576, 416}, {1.46, 608, 416}, {1.67, 640, 384}, {1.75, 672, 384}, {2.0, 704, 352},
      {2.09, 736, 352},  {2.4, 768, 320},  {2.5, 800, 320},  {2.89, 832, 288}, {3.0, 864, 288},  {3.11, 896, 288},
      {3.62, 928, 256},  {3.75, 960, 256}, {3.88, 992, 256}, {4.0, 1024, 256}};
  return table;
}

size_t nearest_bucket(double ratio) {
  const auto& t = aspect_ratio_512();
  size_t best = 0;
  for (size_t i = 1; i < t.size(); ++i)
    if (std::fabs(t[i].key - ratio) < std::fabs(t[best].key - ratio)) best = i;
  return best;
}

int64_t bucket_alignment(double scale) {
  auto up = static_cast<int64_t>(16.0 * scale);
  if (up <= 0) throw Error("bad spatial scale");
  return std::lcm<int64_t>(16, up);
}

BucketSize bucket_size(int64_t H0, int64_t W0, int64_t S, double scale, double r, bool enable_bucket) {
  if (H0 <= 0 || W0 <= 0) throw Error("clip has no size");
  const int64_t A = bucket_alignment(scale);
  BucketSize b;
  if (enable_bucket) {
    b.index = nearest_bucket(static_cast<double>(H0) / static_cast<double>(W0));
    const auto& e = aspect_ratio_512()[b.index];
    b.key = e.key;
    const double h = static_cast<double>(e.h) * static_cast<double>(S) / 512.0 / r;
    const double w = static_cast<double>(e.w) * static_cast<double>(S) / 512.0 / r;
    b.H = std::max<int64_t>(A, static_cast<int64_t>(std::floor(h / static_cast<double>(A))) * A);
    b.W = std::max<int64_t>(A, static_cast<int64_t>(std::floor(w / static_cast<double>(A))) * A);
  } else {
    b.index = nearest_bucket(1.0);
    b.key = 1.0;
    b.H = b.W = std::max<int64_t>(A, (S / A) * A);
  }
  b.h_lr = static_cast<int64_t>(std::floor(static_cast<double>(b.H) / scale / 16.0)) * 16;
  b.w_lr = static_cast<int64_t>(std::floor(static_cast<double>(b.W) / scale / 16.0)) * 16;
  return b;
}

int64_t batch_frames(int64_t N, int64_t shortest_clip) {
  int64_t L = std::min(N + 4, shortest_clip);
  L = ((L - 1) / 4) * 4 + 1;
  return std::max<int64_t>(1, L);
}

std::pair<std::vector<double>, std::vector<double>> hw_adapt_choices(int64_t S) {
  if (S >= 1536) return {{1, 1.25, 1.5, 2, 2.5, 3}, {0.75, 0.05, 0.05, 0.05, 0.05, 0.05}};
  if (S >= 1024) return {{1, 1.25, 1.5, 2}, {0.75, 1.0 / 12, 1.0 / 12, 1.0 / 12}};
  if (S >= 768) return {{1, 1.25, 1.5}, {0.75, 0.125, 0.125}};
  return {{1}, {1}};
}

int64_t round_half_even(double v) { return static_cast<int64_t>(std::nearbyint(v)); }

}  // namespace ws::dataset
