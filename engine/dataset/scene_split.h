// SPDX-License-Identifier: Apache-2.0
// `dataset split`: one clip file per scene of a long video, and a metadata.json with a row per
// clip that keeps its source and frame range. A scene that starts on a keyframe and ends on one
// (or at the end) is copied without re-encoding, as `ffmpeg -c copy` would; the others are
// re-encoded (H.264 at the source's rate).
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "dataset/metadata.h"
#include "dataset/scene_detect.h"

namespace ws::dataset {

struct SplitOptions {
  SceneOptions scene;
  double min_seconds = 0.0;  // drop scenes or pieces shorter than this (0: keep all)
  double max_seconds = 0.0;  // cut longer scenes into pieces of this length (0: no maximum)
  std::string output_dir;
  int crf = 18;
  std::vector<int64_t> cuts;  // given cuts (frame indices) instead of detecting them, when use_cuts
  bool use_cuts = false;
  bool stream_copy = true;  // copy scenes that fall on keyframes instead of re-encoding them
};

struct SplitResult {
  SceneScan scan;
  std::vector<std::pair<int64_t, int64_t>> ranges;  // [first, last+1) of every clip, in source frames
  std::vector<MetaRow> rows;                        // one per clip written
  std::vector<bool> copied;                         // per clip: stream-copied (else re-encoded)
  std::string metadata_path;                        // empty for a dry run
};

// The clip file names for `video`'s scenes: <stem>-scene-001.mp4, ...
std::string scene_clip_name(const std::string& video, size_t index);

// Detects (or takes) the cuts; unless dry_run, writes the clips into output_dir and
// output_dir/metadata.json (atomically, the previous one kept as .bak). Refuses to replace a
// clip file that exists. `progress` sees decoded frames of both passes.
SplitResult split_video(const std::string& video, const SplitOptions& options, bool dry_run,
                        const FrameProgress& progress = {});

}  // namespace ws::dataset
