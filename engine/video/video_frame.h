// SPDX-License-Identifier: Apache-2.0
// Plain RGB8 frames: the currency between the FFmpeg video library, the synthetic data
// generator and the tensor conversion. No FFmpeg and no LibTorch here, so the Qt app can
// use it for playback and thumbnails.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace ws::video {

// Packed RGB24, rows top to bottom, no padding: data.size() == width * height * 3.
struct RgbFrame {
  int width = 0;
  int height = 0;
  std::vector<uint8_t> data;
  // Presentation time in seconds (decoded frames; 0 for generated ones).
  double time_s = 0.0;

  RgbFrame() = default;
  RgbFrame(int w, int h) : width(w), height(h), data(static_cast<size_t>(w) * static_cast<size_t>(h) * 3, 0) {}
  bool empty() const { return width <= 0 || height <= 0; }
  uint8_t* pixel(int x, int y) {
    return data.data() + (static_cast<size_t>(y) * static_cast<size_t>(width) + static_cast<size_t>(x)) * 3;
  }
  const uint8_t* pixel(int x, int y) const {
    return data.data() + (static_cast<size_t>(y) * static_cast<size_t>(width) + static_cast<size_t>(x)) * 3;
  }
};

// Sizes beyond these are treated as corrupt headers rather than allocated (8K x 8K).
constexpr int kMaxVideoSide = 16384;
constexpr int64_t kMaxVideoPixels = int64_t{8192} * 8192;

// Size that covers (out_h, out_w) keeping the aspect ratio, with the training pipeline's
// rule (docs/design/upsampler-training.md §4.2 step 7): {out_h, int(w0*out_h/h0)} when out_h/h0 > out_w/w0,
// else {int(h0*out_w/w0), out_w}. Returns {height, width}. Plain arithmetic, no FFmpeg.
inline std::pair<int64_t, int64_t> cover_size(int64_t h0, int64_t w0, int64_t out_h, int64_t out_w) {
  const double h0d = static_cast<double>(h0), w0d = static_cast<double>(w0);
  const double hd = static_cast<double>(out_h), wd = static_cast<double>(out_w);
  // Products first, as Python evaluates W0 * H / H0: exact whenever the result is whole.
  // The max() guards a rounding shortfall the crop could not absorb.
  if (hd / h0d > wd / w0d) return {out_h, std::max(out_w, static_cast<int64_t>(w0d * hd / h0d))};
  return {std::max(out_h, static_cast<int64_t>(h0d * wd / w0d)), out_w};
}

// torchvision CenterCrop offset: Python round (halves to even) of (size - out) / 2.
inline int64_t center_crop_offset(int64_t size, int64_t out) {
  return static_cast<int64_t>(std::nearbyint(static_cast<double>(size - out) / 2.0));
}

}  // namespace ws::video
