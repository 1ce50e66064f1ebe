// SPDX-License-Identifier: Apache-2.0
// Qwen2-VL / Qwen2.5-VL video preprocessing as transformers' Qwen2VLVideoProcessor does it
// (docs/design/captioning.md §8): the smart_resize target size, then frames -> normalised
// patches in the processor's order (merged 2×2 units consecutive), ready for QwenVisionTower.
#pragma once
#include <torch/torch.h>

#include <array>
#include <cstdint>

#include "models/qwen_vl_config.h"

namespace ws::models {

struct QwenFrameSize {
  int64_t height = 0, width = 0;
};

// Both sides multiples of `factor` (patch × merge, 28), pixels within [min_pixels, max_pixels],
// aspect kept as closely as possible. Throws ws::Error for an aspect ratio over 200 (as the
// reference raises) or a non-positive size.
QwenFrameSize qwen_smart_resize(int64_t height, int64_t width, int64_t factor, int64_t min_pixels, int64_t max_pixels);

// frames uint8 [T, H, W, 3], already at a smart_resize'd size (H, W multiples of patch · merge)
// -> float32 [grid_t · grid_h · grid_w, C · Tp · P · P], normalised with OpenAI CLIP's mean/std,
// on the frames' device. T is padded to a multiple of temporal_patch_size by repeating the last
// frame. `grid` (if given) receives {grid_t, grid_h, grid_w} in patches.
torch::Tensor qwen_video_patches(const torch::Tensor& frames, const QwenVisionConfig& c, std::array<int64_t, 3>* grid);

}  // namespace ws::models
