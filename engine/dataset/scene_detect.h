// SPDX-License-Identifier: Apache-2.0
// Cuts between shots, found from frame-to-frame changes of hue, saturation and brightness on a
// downscaled copy (the content-aware rule PySceneDetect's users know: threshold 27, scenes of at
// least 15 frames), and the scenes those cuts make, with VideoX-Fun's minimum and maximum lengths.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "video/video_frame.h"

namespace ws::dataset {

struct SceneOptions {
  double threshold = 27.0;        // mean |ΔH|, |ΔS|, |ΔV| averaged (H 0..179, S and V 0..255)
  int64_t min_scene_frames = 15;  // a cut closer than this to the previous one (or the start) is ignored
  int analysis_width = 256;       // frames are box-averaged down to about this width first
};

// One frame's change from the previous one, as the detector scores it.
class ContentScorer {
 public:
  explicit ContentScorer(int analysis_width = 256) : width_(analysis_width) {}
  // The score of `frame` against the frame given before it; 0 for the first frame.
  double push(const video::RgbFrame& frame);

 private:
  int width_;
  std::vector<uint8_t> prev_hsv_;
  int prev_w_ = 0, prev_h_ = 0;
};

// Frame index where each new scene begins (never 0), from per-frame scores.
std::vector<int64_t> cuts_from_scores(const std::vector<double>& scores, const SceneOptions& options);

// Progress: frames done so far; returning false stops the scan (ws::Error "cancelled").
using FrameProgress = std::function<bool(int64_t done)>;

struct SceneScan {
  std::vector<double> scores;  // one per frame
  std::vector<int64_t> cuts;   // first frame of every scene after the first
  double fps = 0.0;
  int width = 0, height = 0;
};

// Decodes the whole video once. Throws ws::Error naming the file.
SceneScan scan_scenes(const std::string& path, const SceneOptions& options, const FrameProgress& progress = {});

// [first, last+1) ranges of the scenes that `cuts` make in `frames` frames. max_seconds > 0
// cuts a longer scene into pieces of that length from its start; a scene or piece shorter than
// min_seconds (> 0) is dropped. Needs fps > 0 when either is set.
std::vector<std::pair<int64_t, int64_t>> scene_ranges(const std::vector<int64_t>& cuts, int64_t frames, double fps,
                                                      double min_seconds = 0.0, double max_seconds = 0.0);

}  // namespace ws::dataset
