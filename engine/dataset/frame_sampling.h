// SPDX-License-Identifier: Apache-2.0
// Which frames of a clip a training sample uses (docs/design/upsampler-training.md §3.3). Plain
// arithmetic, shared by the loader, the `buckets` report and the tests.
#pragma once
#include <cstdint>
#include <string>
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

// How a clip becomes training samples (docs/design/datasets.md §5). `random` draws one window per
// epoch at a random start (VideoX-Fun's loader); the other modes, musubi-tuner's names, fix the
// windows once and each window is a sample of its own.
enum class Extraction { Random, Head, Chunk, Slide, Uniform, Full };

struct ExtractionRule {
  Extraction mode = Extraction::Random;
  int64_t step = 10;    // slide: a window starts every `step` frames
  int64_t windows = 4;  // uniform: this many windows spread evenly over the clip
  double fps = 16;      // full: the clip resampled to this rate (frames dropped, never repeated)
};

// "random", "head", "chunk", "slide", "uniform", "full": the names options and the studio use.
const std::vector<std::string>& extraction_names();
std::string extraction_name(Extraction mode);
// Throws ws::Error naming the allowed values.
Extraction parse_extraction(const std::string& name);

// The fixed windows of a clip of T frames at `fps` (0: unknown) as frame indices from 0, in
// order: head one window from frame 0; chunk back-to-back windows; slide a window every `step`
// frames; uniform `windows` starts spread from 0 to the last possible one (equal starts merged);
// full every ⌊i·fps/rule.fps⌋ frame up to N frames (the stride is not used). Each window but
// full's has plan_clip(T, N, stride)'s frames. Empty for Random and for a clip too short.
std::vector<std::vector<int64_t>> extraction_windows(int64_t total_frames, double fps, int64_t n_frames, int64_t stride,
                                                     const ExtractionRule& rule);

}  // namespace ws::dataset
