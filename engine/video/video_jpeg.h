// SPDX-License-Identifier: Apache-2.0
// JPEG round trip through libavcodec's MJPEG codec: the JPEG op of the training degradation
// (docs/design/upsampler-training.md §5). 4:2:0 (yuvj420p), fixed qscale, BT.601 full-range YCbCr as JFIF
// defines it. No LibTorch here: this file belongs to the FFmpeg-only video library.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "video/video_frame.h"

namespace ws::video {

// Encodes packed RGB24 pictures of one size as JPEG and decodes them back. Keeps its codec
// contexts between pictures, so a clip costs one open. Not thread-safe: one per thread.
class JpegRoundTrip {
 public:
  // qscale: the encoder's fixed quantiser, 1 (best) .. 31; throws ws::Error outside that.
  JpegRoundTrip(int width, int height, int qscale);
  ~JpegRoundTrip();
  JpegRoundTrip(const JpegRoundTrip&) = delete;
  JpegRoundTrip& operator=(const JpegRoundTrip&) = delete;

  // rgb_in and rgb_out hold width * height * 3 bytes each; they may be the same buffer.
  void run(const uint8_t* rgb_in, uint8_t* rgb_out);
  // Size in bytes of the last JPEG encoded (tests: a lower quality gives a smaller file).
  size_t last_jpeg_bytes() const;
  // The JPEG file of one picture (width * height * 3 bytes), without decoding it back.
  std::string encode(const uint8_t* rgb_in);

 private:
  void encode_packet(const uint8_t* rgb_in);  // leaves the JPEG in impl_->pkt
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// One picture: the decoded JPEG of `frame` at `qscale`.
RgbFrame jpeg_roundtrip(const RgbFrame& frame, int qscale);
// One picture as a JPEG file (the captioner sends frames so).
std::string encode_jpeg(const RgbFrame& frame, int qscale);

}  // namespace ws::video
