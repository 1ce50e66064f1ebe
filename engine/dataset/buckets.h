// SPDX-License-Identifier: Apache-2.0
// Aspect-ratio buckets and batch sizes for the upsampler trainer (docs/design/upsampler-training.md §4);
// frame sampling is in data/frame_sampling.h. Pure arithmetic: no decoding, no torch.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace ws::dataset {

struct AspectBucket {
  double key;    // h / w
  int64_t h, w;  // at base 512
};

// The 40 entries of VideoX-Fun's ASPECT_RATIO_512, in key order.
const std::vector<AspectBucket>& aspect_ratio_512();
// argmin_k |k − ratio| (the first key wins ties).
size_t nearest_bucket(double ratio);

// A = lcm(16, int(16·scale)): 48 for 1.5 and 0.75, 32 for 2.0, 64 for 4.0.
int64_t bucket_alignment(double scale);

struct BucketSize {
  size_t index = 0;  // into aspect_ratio_512()
  double key = 0;
  int64_t H = 0, W = 0;        // high-res training size
  int64_t h_lr = 0, w_lr = 0;  // low-res size (÷ scale, aligned to 16)
};

// docs/design/upsampler-training.md §4.2 steps 2–6 for a clip of displayed size H0×W0, sample size S, model scale and
// the random_hw_adapt ratio r (1 when off). `enable_bucket` false: one square bucket of edge floor(S/A)·A
// (docs/design/upsampler-training.md §4.7).
BucketSize bucket_size(int64_t H0, int64_t W0, int64_t S, double scale, double r = 1.0, bool enable_bucket = true);

// docs/design/upsampler-training.md §4.2 step 5: the batch's frame count L: the largest 4k+1 ≤ min(N + 4, shortest
// clip), ≥ 1.
int64_t batch_frames(int64_t N, int64_t shortest_clip);

// docs/design/upsampler-training.md §4.3: the random_hw_adapt choices and probabilities for sample size S.
std::pair<std::vector<double>, std::vector<double>> hw_adapt_choices(int64_t S);

// Python's round (halves to even), as torchvision's center crop uses.
int64_t round_half_even(double v);

}  // namespace ws::dataset
