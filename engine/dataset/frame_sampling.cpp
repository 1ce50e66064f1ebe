// SPDX-License-Identifier: Apache-2.0
#include "dataset/frame_sampling.h"

#include <algorithm>
#include <string>

#include "core/error.h"

namespace ws::dataset {

ClipPlan plan_clip(int64_t total_frames, int64_t n_frames, int64_t stride) {
  ClipPlan p;
  if (total_frames <= 0 || n_frames <= 0 || stride <= 0) return p;
  p.n = std::min(n_frames, total_frames / stride);
  if (p.n == 0) return p;
  p.clip_len = std::min(total_frames, (p.n - 1) * stride + 1);
  p.max_start = total_frames - p.clip_len;
  return p;
}

std::vector<int64_t> clip_indices(const ClipPlan& plan, int64_t start) {
  if (plan.n <= 0) throw Error("clip too short: no frames to sample");
  if (start < 0 || start > plan.max_start)
    throw Error("clip start " + std::to_string(start) + " outside [0, " + std::to_string(plan.max_start) + "]");
  std::vector<int64_t> out(static_cast<size_t>(plan.n));
  if (plan.n == 1) {
    out[0] = start;
    return out;
  }
  // numpy.linspace: start + i * step with step = (stop - start) / (n - 1), last = stop exactly.
  const double step = static_cast<double>(plan.clip_len - 1) / static_cast<double>(plan.n - 1);
  for (int64_t i = 0; i < plan.n; ++i)
    out[static_cast<size_t>(i)] = static_cast<int64_t>(static_cast<double>(i) * step + static_cast<double>(start));
  out.back() = start + plan.clip_len - 1;
  return out;
}

std::vector<int64_t> sample_frame_indices(int64_t total_frames, int64_t n_frames, int64_t stride, int64_t start) {
  ClipPlan p = plan_clip(total_frames, n_frames, stride);
  if (p.n == 0)
    throw Error("clip too short: " + std::to_string(total_frames) + " frames, stride " + std::to_string(stride));
  return clip_indices(p, start);
}

}  // namespace ws::dataset
