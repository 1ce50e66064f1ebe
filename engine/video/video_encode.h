// SPDX-License-Identifier: Apache-2.0
// MP4 writing from RGB8 frames: H.264 (libx264 when present, else another H.264 encoder,
// else MPEG-4 Part 2 with a warning), yuv420p, +faststart. Written under a temporary name
// and renamed on finish(), so a crash never leaves a half video under the real name.
// No FFmpeg or LibTorch types in this header.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "video/video_frame.h"

namespace ws::video {

struct EncodeOptions {
  double fps = 16.0;  // Wan 2.2 generates at 16 fps
  int crf = 18;       // quality (x264 CRF; mapped to a quantiser for other encoders)
  std::string preset = "medium";
  int gop = 0;          // keyframe interval in frames; 0 = encoder default
  int rotation = 0;     // clockwise degrees stored as display matrix (0/90/180/270)
  std::string encoder;  // force an FFmpeg encoder by name ("" = best H.264)
  int threads = 0;      // encoder threads, 0 = auto (x264's output depends on the count)
  // The same frames give the same bytes on every run: one encoder thread and, for x264, no
  // macroblock-tree rate control (its lookahead reads memory it never wrote, so the output
  // followed the heap's contents). Costs about a third more bytes at the same CRF.
  bool deterministic = false;
  std::string container = "mp4";  // FFmpeg muxer name; others ("matroska", "avi", raw "h264") are for tests
};

class VideoWriter {
 public:
  // Frames must all be width x height; odd sizes are padded to even by repeating the last
  // column/row. Throws ws::Error naming `path`.
  VideoWriter(const std::string& path, int width, int height, EncodeOptions options = {});
  ~VideoWriter();  // without finish(): the temporary file is removed, `path` untouched
  VideoWriter(const VideoWriter&) = delete;
  VideoWriter& operator=(const VideoWriter&) = delete;

  void write(const RgbFrame& frame);
  // With an explicit timestamp in ticks of 1/fps (strictly increasing; gaps make variable
  // frame rate video, e.g. for tests).
  void write(const RgbFrame& frame, int64_t pts);
  // Flushes the encoder, writes the index and renames the file into place.
  void finish();
  // The FFmpeg encoder in use, e.g. "libx264" or "mpeg4".
  const std::string& encoder_name() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Convenience: all frames at once.
void write_video(const std::string& path, const std::vector<RgbFrame>& frames, const EncodeOptions& options = {});
// One picture as PNG (atomic, like the videos).
void write_png(const std::string& path, const RgbFrame& frame);

}  // namespace ws::video
