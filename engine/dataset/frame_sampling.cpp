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

const std::vector<std::string>& extraction_names() {
  static const std::vector<std::string> names{"random", "head", "chunk", "slide", "uniform", "full"};
  return names;
}

std::string extraction_name(Extraction mode) { return extraction_names()[static_cast<size_t>(mode)]; }

Extraction parse_extraction(const std::string& name) {
  const auto& names = extraction_names();
  for (size_t i = 0; i < names.size(); ++i)
    if (names[i] == name) return static_cast<Extraction>(i);
  throw Error("unknown frame extraction '" + name + "' (random, head, chunk, slide, uniform or full)");
}

std::vector<std::vector<int64_t>> extraction_windows(int64_t total_frames, double fps, int64_t n_frames, int64_t stride,
                                                     const ExtractionRule& rule) {
  std::vector<std::vector<int64_t>> out;
  if (rule.mode == Extraction::Random || total_frames <= 0 || n_frames <= 0) return out;
  if (rule.mode == Extraction::Full) {
    // Source frames per target frame; a source slower than the target keeps every frame.
    const double ratio = fps > 0 && rule.fps > 0 && fps > rule.fps ? fps / rule.fps : 1.0;
    std::vector<int64_t> idx;
    for (int64_t i = 0; static_cast<int64_t>(idx.size()) < n_frames; ++i) {
      const auto f = static_cast<int64_t>(static_cast<double>(i) * ratio + 1e-9);
      if (f >= total_frames) break;
      idx.push_back(f);
    }
    out.push_back(std::move(idx));
    return out;
  }
  const ClipPlan plan = plan_clip(total_frames, n_frames, stride);
  if (plan.n == 0) return out;
  std::vector<int64_t> starts;
  switch (rule.mode) {
    case Extraction::Head: starts = {0}; break;
    case Extraction::Chunk:
      for (int64_t s = 0; s <= plan.max_start; s += plan.clip_len) starts.push_back(s);
      break;
    case Extraction::Slide:
      if (rule.step < 1) throw Error("frame extraction step must be at least 1");
      for (int64_t s = 0; s <= plan.max_start; s += rule.step) starts.push_back(s);
      break;
    case Extraction::Uniform: {
      if (rule.windows < 1) throw Error("frame extraction windows must be at least 1");
      // numpy.linspace(0, max_start, M) truncated to integers, as musubi-tuner's uniform mode.
      for (int64_t i = 0; i < rule.windows; ++i) {
        const int64_t s = rule.windows == 1
                              ? 0
                              : static_cast<int64_t>(static_cast<double>(plan.max_start) * static_cast<double>(i) /
                                                     static_cast<double>(rule.windows - 1));
        if (starts.empty() || starts.back() != s) starts.push_back(s);
      }
      break;
    }
    default: break;
  }
  for (int64_t s : starts) out.push_back(clip_indices(plan, s));
  return out;
}

}  // namespace ws::dataset
