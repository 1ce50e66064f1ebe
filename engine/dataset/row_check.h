// SPDX-License-Identifier: Apache-2.0
// Checks metadata.json rows against their files (the `probe` verb, and the start-of-training
// bad-row check of docs/design/upsampler-training.md §3.2). Needs FFmpeg: without video support every
// call throws ws::Error saying so.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "dataset/metadata.h"

namespace ws::dataset {

struct RowReport {
  size_t index = 0;
  std::string file;           // resolved path
  bool readable = false;      // the file was opened and its header read
  int width = 0, height = 0;  // displayed size from the file
  int rotation = 0;
  int64_t frames = 0;
  double fps = 0, duration_s = 0;
  std::string codec;
  std::vector<std::string> problems;  // empty = the row is good
};

struct CheckOptions {
  bool count_frames = true;  // scan every packet (exact count, catches truncation)
};

// True when this build can decode video (FFmpeg was found and WANSTUDIO_VIDEO is on).
bool video_support_built();

RowReport check_row(const Metadata& meta, size_t index, const CheckOptions& options = {});
// Every row; `progress(done, total)` after each one (may be empty).
std::vector<RowReport> check_rows(const Metadata& meta, const CheckOptions& options = {},
                                  const std::function<void(size_t, size_t)>& progress = {});

}  // namespace ws::dataset
