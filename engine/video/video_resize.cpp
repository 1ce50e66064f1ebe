// SPDX-License-Identifier: Apache-2.0
#include "video/video_resize.h"

extern "C" {
#include <libswscale/swscale.h>
}

#include <cstring>
#include <string>

#include "core/error.h"

namespace ws::video {
namespace {

void check_size(int width, int height, const char* what) {
  if (width <= 0 || height <= 0 || width > kMaxVideoSide || height > kMaxVideoSide ||
      int64_t{width} * height > kMaxVideoPixels)
    throw Error(std::string(what) + ": bad picture size " + std::to_string(width) + "x" + std::to_string(height));
}

void check_frame(const RgbFrame& f, const char* what) {
  check_size(f.width, f.height, what);
  if (f.data.size() != static_cast<size_t>(f.width) * static_cast<size_t>(f.height) * 3)
    throw Error(std::string(what) + ": frame buffer does not match its size");
}

}  // namespace

RgbFrame rotate_rgb(const RgbFrame& in, int degrees_cw) {
  int r = ((degrees_cw % 360) + 360) % 360;
  if (r == 0) return in;
  if (r != 90 && r != 180 && r != 270)
    throw Error("rotate: only right angles are supported, got " + std::to_string(degrees_cw));
  const int w = in.width, h = in.height;
  RgbFrame out = r == 180 ? RgbFrame(w, h) : RgbFrame(h, w);
  out.time_s = in.time_s;
  for (int y = 0; y < out.height; ++y) {
    for (int x = 0; x < out.width; ++x) {
      int sx, sy;
      if (r == 90) {
        sx = y;
        sy = h - 1 - x;
      } else if (r == 180) {
        sx = w - 1 - x;
        sy = h - 1 - y;
      } else {
        sx = w - 1 - y;
        sy = x;
      }
      std::memcpy(out.pixel(x, y), in.pixel(sx, sy), 3);
    }
  }
  return out;
}

RgbFrame crop_rgb(const RgbFrame& in, int left, int top, int width, int height) {
  if (left < 0 || top < 0 || width <= 0 || height <= 0 || left + width > in.width || top + height > in.height)
    throw Error("crop " + std::to_string(width) + "x" + std::to_string(height) + "+" + std::to_string(left) + "+" +
                std::to_string(top) + " does not fit in " + std::to_string(in.width) + "x" + std::to_string(in.height));
  RgbFrame out(width, height);
  out.time_s = in.time_s;
  for (int y = 0; y < height; ++y)
    std::memcpy(out.pixel(0, y), in.pixel(left, top + y), static_cast<size_t>(width) * 3);
  return out;
}

RgbFrame pad_to_even(const RgbFrame& in) {
  if (in.width % 2 == 0 && in.height % 2 == 0) return in;
  RgbFrame out(in.width + in.width % 2, in.height + in.height % 2);
  out.time_s = in.time_s;
  for (int y = 0; y < out.height; ++y) {
    int sy = y < in.height ? y : in.height - 1;
    std::memcpy(out.pixel(0, y), in.pixel(0, sy), static_cast<size_t>(in.width) * 3);
    if (out.width > in.width) std::memcpy(out.pixel(in.width, y), in.pixel(in.width - 1, sy), 3);
  }
  return out;
}

RgbFrame resize_rgb(const RgbFrame& in, int width, int height, ResizeFilter filter) {
  check_frame(in, "resize");
  check_size(width, height, "resize target");
  if (width == in.width && height == in.height) return in;
  int flags = SWS_BICUBIC;
  switch (filter) {
    case ResizeFilter::Auto: flags = (width <= in.width && height <= in.height) ? SWS_AREA : SWS_BICUBIC; break;
    case ResizeFilter::Area: flags = SWS_AREA; break;
    case ResizeFilter::Bicubic: flags = SWS_BICUBIC; break;
    case ResizeFilter::Bilinear: flags = SWS_BILINEAR; break;
    case ResizeFilter::Lanczos: flags = SWS_LANCZOS; break;
  }
  SwsContext* sws = sws_getContext(in.width, in.height, AV_PIX_FMT_RGB24, width, height, AV_PIX_FMT_RGB24,
                                   flags | SWS_ACCURATE_RND | SWS_FULL_CHR_H_INT, nullptr, nullptr, nullptr);
  if (!sws)
    throw Error("resize: swscale cannot scale " + std::to_string(in.width) + "x" + std::to_string(in.height) + " to " +
                std::to_string(width) + "x" + std::to_string(height));
  RgbFrame out(width, height);
  out.time_s = in.time_s;
  const uint8_t* src[4] = {in.data.data(), nullptr, nullptr, nullptr};
  int src_stride[4] = {in.width * 3, 0, 0, 0};
  uint8_t* dst[4] = {out.data.data(), nullptr, nullptr, nullptr};
  int dst_stride[4] = {width * 3, 0, 0, 0};
  sws_scale(sws, src, src_stride, 0, in.height, dst, dst_stride);
  sws_freeContext(sws);
  return out;
}

RgbFrame resize_cover_crop(const RgbFrame& in, int width, int height, ResizeFilter filter) {
  check_frame(in, "resize");
  check_size(width, height, "resize target");
  auto [rh, rw] = cover_size(in.height, in.width, height, width);
  RgbFrame scaled = resize_rgb(in, static_cast<int>(rw), static_cast<int>(rh), filter);
  return crop_rgb(scaled, static_cast<int>(center_crop_offset(rw, width)),
                  static_cast<int>(center_crop_offset(rh, height)), width, height);
}

}  // namespace ws::video
