// SPDX-License-Identifier: Apache-2.0
// Which frames of a clip a training sample uses (docs/design/upsampler-training.md §3.3). Plain
// arithmetic, shared by the loader, the `buckets` report and the tests.
#pragma once
#include <cstdint>
#include <vector>

namespace ws::dataset {

struct ClipPlan {
  int64_t n = 0;          // frames taken: min(N, floor(T / s)); 0 = the clip is too short
  int64_t clip_len = 0;   // span in the file: min(T, (n - 1) * s + 1)
  int64_t max_start = 0;  // the start is drawn uniformly from [0, max_start]
};

// T = frames in the file, N = video_sample_n_frames, s = video_sample_stride.
ClipPlan plan_clip(int64_t total_frames, int64_t n_frames, int64_t stride);

// linspace(start, start + clip_len - 1, n) truncated to integers (= start + i*s).
// Throws ws::Error when the plan is empty or start is outside [0, max_start].
std::vector<int64_t> clip_indices(const ClipPlan& plan, int64_t start);

// Both steps at once. Image rows are one-frame clips and do not come here: use {0}.
std::vector<int64_t> sample_frame_indices(int64_t total_frames, int64_t n_frames, int64_t stride, int64_t start);

}  // namespace ws::dataset
