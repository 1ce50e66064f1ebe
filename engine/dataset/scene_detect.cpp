// SPDX-License-Identifier: Apache-2.0
#include "dataset/scene_detect.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "core/error.h"
#include "video/video_decode.h"

namespace ws::dataset {

namespace {

// 8-bit HSV as OpenCV writes it (H halved to 0..179), which is what the threshold of 27 is
// calibrated on.
void rgb_to_hsv8(int r, int g, int b, uint8_t* out) {
  const int v = std::max({r, g, b});
  const int mn = std::min({r, g, b});
  const int diff = v - mn;
  int s = v == 0 ? 0 : static_cast<int>(std::lround(255.0 * diff / v));
  double h = 0.0;
  if (diff > 0) {
    if (v == r) h = 60.0 * (g - b) / diff;
    else if (v == g) h = 120.0 + 60.0 * (b - r) / diff;
    else h = 240.0 + 60.0 * (r - g) / diff;
    if (h < 0) h += 360.0;
  }
  out[0] = static_cast<uint8_t>(std::min(179L, std::lround(h / 2.0)));
  out[1] = static_cast<uint8_t>(s);
  out[2] = static_cast<uint8_t>(v);
}

}  // namespace

double ContentScorer::push(const video::RgbFrame& frame) {
  if (frame.empty()) throw Error("scene detection: an empty frame");
  // Box average over f x f blocks: noise and compression detail matter less than the shot.
  const int f = std::max(1, frame.width / std::max(1, width_));
  const int w = frame.width / f, h = frame.height / f;
  std::vector<uint8_t> hsv(static_cast<size_t>(w) * h * 3);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      int sum[3] = {0, 0, 0};
      for (int dy = 0; dy < f; ++dy)
        for (int dx = 0; dx < f; ++dx) {
          const uint8_t* p = frame.pixel(x * f + dx, y * f + dy);
          sum[0] += p[0], sum[1] += p[1], sum[2] += p[2];
        }
      const int n = f * f;
      rgb_to_hsv8((sum[0] + n / 2) / n, (sum[1] + n / 2) / n, (sum[2] + n / 2) / n,
                  &hsv[(static_cast<size_t>(y) * w + x) * 3]);
    }
  double score = 0.0;
  if (!prev_hsv_.empty() && prev_w_ == w && prev_h_ == h) {
    int64_t d[3] = {0, 0, 0};
    for (size_t i = 0; i < hsv.size(); i += 3)
      for (int c = 0; c < 3; ++c) d[c] += std::abs(int(hsv[i + c]) - int(prev_hsv_[i + c]));
    const double n = static_cast<double>(hsv.size() / 3);
    score = (d[0] / n + d[1] / n + d[2] / n) / 3.0;
  }
  prev_hsv_ = std::move(hsv);
  prev_w_ = w, prev_h_ = h;
  return score;
}

std::vector<int64_t> cuts_from_scores(const std::vector<double>& scores, const SceneOptions& options) {
  std::vector<int64_t> cuts;
  int64_t last = 0;  // the start counts as a cut for the minimum length
  for (int64_t i = 1; i < static_cast<int64_t>(scores.size()); ++i)
    if (scores[static_cast<size_t>(i)] >= options.threshold && i - last >= options.min_scene_frames) {
      cuts.push_back(i);
      last = i;
    }
  return cuts;
}

SceneScan scan_scenes(const std::string& path, const SceneOptions& options, const FrameProgress& progress) {
  if (!(options.threshold > 0) || !std::isfinite(options.threshold))
    throw UsageError("threshold must be a finite number > 0");
  if (options.min_scene_frames < 1) throw UsageError("min_scene_frames must be >= 1");
  video::VideoReader reader(path, video::DecodeOptions{0});
  SceneScan scan;
  scan.fps = reader.info().fps;
  scan.width = reader.info().width;
  scan.height = reader.info().height;
  if (reader.info().still_image) throw Error(path + ": a still image has no scenes");
  ContentScorer scorer(options.analysis_width);
  video::RgbFrame frame;
  while (reader.next(frame)) {
    scan.scores.push_back(scorer.push(frame));
    if (progress && !progress(static_cast<int64_t>(scan.scores.size()))) throw Error(path + ": cancelled");
  }
  if (scan.scores.empty()) throw Error(path + ": no frames decoded");
  scan.cuts = cuts_from_scores(scan.scores, options);
  return scan;
}

std::vector<std::pair<int64_t, int64_t>> scene_ranges(const std::vector<int64_t>& cuts, int64_t frames, double fps,
                                                      double min_seconds, double max_seconds) {
  if ((min_seconds > 0 || max_seconds > 0) && !(fps > 0))
    throw Error("min_seconds/max_seconds need the video's frame rate, which it does not state");
  std::vector<std::pair<int64_t, int64_t>> out;
  int64_t start = 0;
  std::vector<int64_t> ends = cuts;
  ends.push_back(frames);
  // Frames per piece: VideoX-Fun cuts at whole frames from the scene's start.
  const int64_t piece = max_seconds > 0 ? std::max<int64_t>(1, static_cast<int64_t>(std::floor(max_seconds * fps))) : 0;
  const int64_t shortest = min_seconds > 0 ? static_cast<int64_t>(std::ceil(min_seconds * fps - 1e-9)) : 0;
  for (int64_t end : ends) {
    if (end <= start) continue;
    for (int64_t a = start; a<end; a += piece> 0 ? piece : end - start) {
      const int64_t b = piece > 0 ? std::min(end, a + piece) : end;
      if (b - a >= shortest) out.emplace_back(a, b);
      if (piece <= 0) break;
    }
    start = end;
  }
  return out;
}

}  // namespace ws::dataset
