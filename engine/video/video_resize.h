// SPDX-License-Identifier: Apache-2.0
// Geometry on RGB8 frames for previews, thumbnails and the encoder: rotation, crops and a
// swscale resize. (Training resizes tensors instead, docs/design/upsampler-training.md §4.2.)
// No FFmpeg or LibTorch types in this header.
#pragma once
#include "video/video_frame.h"

namespace ws::video {

enum class ResizeFilter {
  Auto,  // area when shrinking, bicubic when enlarging
  Area,
  Bicubic,
  Bilinear,
  Lanczos,
};

// Turns the picture clockwise by 0, 90, 180 or 270 degrees.
RgbFrame rotate_rgb(const RgbFrame& in, int degrees_cw);
// The rectangle [left, left + width) x [top, top + height); throws when it does not fit.
RgbFrame crop_rgb(const RgbFrame& in, int left, int top, int width, int height);
// Grows an odd width/height by one, repeating the last column/row (H.264 4:2:0 needs even sizes).
RgbFrame pad_to_even(const RgbFrame& in);
// swscale resize to exactly width x height.
RgbFrame resize_rgb(const RgbFrame& in, int width, int height, ResizeFilter filter = ResizeFilter::Auto);

// Resize to cover (width x height) and crop the centre: thumbnails and previews.
RgbFrame resize_cover_crop(const RgbFrame& in, int width, int height, ResizeFilter filter = ResizeFilter::Auto);

}  // namespace ws::video
