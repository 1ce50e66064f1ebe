// SPDX-License-Identifier: Apache-2.0
// RGB8 frames -> training tensors (docs/design/upsampler-training.md §4.2 step 7). The only place the
// video pipeline meets LibTorch; the FFmpeg library stays torch-free.
#pragma once
#include <torch/torch.h>

#include <cstdint>
#include <string>
#include <vector>

#include "video/video_frame.h"

namespace ws::data {

// [T, 3, H, W] float32 in [0, 1]; every frame must have the same size.
torch::Tensor frames_to_tensor(const std::vector<video::RgbFrame>& frames);

// Resize to cover (out_h, out_w) with bilinear interpolation (antialias when shrinking, as
// torchvision >= 0.17), then center crop with torchvision's rounding. x: [T, 3, H0, W0].
torch::Tensor resize_cover_crop(const torch::Tensor& x, int64_t out_h, int64_t out_w, bool antialias = true);

// [T, 3, H, W] in [0, 1] -> [3, T, H, W] in [-1, 1] (the VAE's layout and range).
torch::Tensor to_model_clip(const torch::Tensor& x);

// [3, T, H, W] in [-1, 1] -> RGB8 frames, round(clamp((x + 1) / 2, 0, 1) · 255) (validation
// videos; docs/design/upsampler-training.md §11).
std::vector<video::RgbFrame> clip_to_frames(const torch::Tensor& x);

// Reads frames `indices` of `path` and returns [3, T, H, W] in [-1, 1], resized and cropped
// to (out_h, out_w) when both are > 0, else at the file's displayed size.
// Without video support this throws ws::Error saying so.
torch::Tensor read_clip(const std::string& path, const std::vector<int64_t>& indices, int64_t out_h = 0,
                        int64_t out_w = 0);

}  // namespace ws::data
