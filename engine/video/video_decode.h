// SPDX-License-Identifier: Apache-2.0
// FFmpeg video/image decoding into RGB8 frames. No FFmpeg or LibTorch types in this
// header: the Qt app links it for playback and thumbnails.
//
// Frame i is the i-th frame in presentation order (docs/design/upsampler-training.md §3.3), counted from
// the stream's packets, so variable frame rate does not change indices. Frames come out in
// display orientation (rotation metadata applied). Every failure is a one-line ws::Error
// naming the file.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "video/video_frame.h"

namespace ws::video {

struct VideoInfo {
  std::string path;
  int width = 0, height = 0;              // displayed size (after rotation)
  int coded_width = 0, coded_height = 0;  // as stored
  int rotation = 0;                       // clockwise degrees applied for display: 0/90/180/270
  int64_t frames = 0;                     // counted packets when counted, else the header's count
  bool frames_counted = false;            // `frames` comes from a packet scan
  int64_t header_frames = -1;             // the container's frame count, -1 when it has none
  double fps = 0.0;                       // average frame rate, 0 when unknown (still images)
  double duration_s = 0.0;
  std::string codec;         // e.g. "h264", "png"
  std::string container;     // e.g. "mov,mp4,m4a,3gp,3g2,mj2"
  bool still_image = false;  // a single picture (png, jpg, ...)
};

struct DecodeOptions {
  int threads = 1;  // decoder threads; 0 = FFmpeg's choice. Loaders run many readers at once.
};

// Header facts; with count_frames also scans every packet (reads the whole file, decodes
// nothing) for an exact frame count and to catch truncated files.
VideoInfo probe_video(const std::string& path, bool count_frames = true);

class VideoReader {
 public:
  explicit VideoReader(const std::string& path, DecodeOptions options = {});
  ~VideoReader();
  VideoReader(const VideoReader&) = delete;
  VideoReader& operator=(const VideoReader&) = delete;

  // Header facts (frames from the header until frame_count() has been called).
  const VideoInfo& info() const;
  // Exact number of frames (scans packets once; decodes when timestamps are unusable).
  int64_t frame_count();
  // Frame `index` in presentation order: seeks to the keyframe before it and decodes
  // forward by timestamp. Throws when the index is out of range or cannot be decoded.
  RgbFrame read(int64_t index);
  // Frames at `indices` (any order, repeats allowed), returned in the order asked.
  // Ascending runs decode forward without seeking back.
  std::vector<RgbFrame> read(const std::vector<int64_t>& indices);
  // Sequential access from the current position; false at the end of the stream.
  bool next(RgbFrame& out);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Convenience: open, read `indices`, close.
std::vector<RgbFrame> read_video_frames(const std::string& path, const std::vector<int64_t>& indices);
// The first frame of a picture (png, jpg, ...) or video.
RgbFrame read_image(const std::string& path);

}  // namespace ws::video
