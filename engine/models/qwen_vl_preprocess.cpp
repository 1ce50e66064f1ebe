// SPDX-License-Identifier: Apache-2.0
#include "models/qwen_vl_preprocess.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/error.h"
#include "io/state_dict.h"

namespace ws::models {
namespace {

// OpenAI CLIP's normalisation (transformers' OPENAI_CLIP_MEAN / OPENAI_CLIP_STD).
constexpr float kMean[3] = {0.48145466f, 0.4578275f, 0.40821073f};
constexpr float kStd[3] = {0.26862954f, 0.26130258f, 0.27577711f};

}  // namespace

QwenFrameSize qwen_smart_resize(int64_t height, int64_t width, int64_t factor, int64_t min_pixels, int64_t max_pixels) {
  if (height < 1 || width < 1)
    throw Error("smart_resize: frame size " + std::to_string(height) + "×" + std::to_string(width) + " is empty");
  if (factor < 1) throw Error("smart_resize: factor must be positive, got " + std::to_string(factor));
  // Python's arithmetic throughout: true division in double, round() ties to even (nearbyint).
  const double h = static_cast<double>(height), w = static_cast<double>(width), f = static_cast<double>(factor);
  if (static_cast<double>(std::max(height, width)) / static_cast<double>(std::min(height, width)) > 200)
    throw Error("smart_resize: " + std::to_string(height) + "×" + std::to_string(width) +
                " has an aspect ratio over 200 (Qwen2-VL refuses it)");
  int64_t hb = static_cast<int64_t>(std::nearbyint(h / f)) * factor;
  int64_t wb = static_cast<int64_t>(std::nearbyint(w / f)) * factor;
  if (hb * wb > max_pixels) {
    const double beta = std::sqrt(h * w / static_cast<double>(max_pixels));
    hb = std::max(factor, static_cast<int64_t>(std::floor(h / beta / f)) * factor);
    wb = std::max(factor, static_cast<int64_t>(std::floor(w / beta / f)) * factor);
  } else if (hb * wb < min_pixels) {
    const double beta = std::sqrt(static_cast<double>(min_pixels) / (h * w));
    hb = static_cast<int64_t>(std::ceil(h * beta / f)) * factor;
    wb = static_cast<int64_t>(std::ceil(w * beta / f)) * factor;
  }
  return {hb, wb};
}

torch::Tensor qwen_video_patches(const torch::Tensor& frames, const QwenVisionConfig& c, std::array<int64_t, 3>* grid) {
  const int64_t P = c.patch_size, m = c.spatial_merge_size, Tp = c.temporal_patch_size, C = c.in_chans;
  if (frames.dim() != 4 || frames.size(3) != 3 || frames.scalar_type() != torch::kUInt8)
    throw Error("Qwen2.5-VL video: frames must be uint8 [T, H, W, 3], got " + io::shape_str(frames.sizes().vec()));
  if (C != 3) throw Error("Qwen2.5-VL video: the tower takes " + std::to_string(C) + " channels, frames have 3");
  const int64_t T = frames.size(0), Hgt = frames.size(1), Wid = frames.size(2);
  if (T < 1) throw Error("Qwen2.5-VL video: no frames");
  if (P < 1 || m < 1 || Tp < 1) throw Error("Qwen2.5-VL video: patch, merge and temporal sizes must be positive");
  if (Hgt % (P * m) || Wid % (P * m))
    throw Error("Qwen2.5-VL video: frame size " + std::to_string(Hgt) + "×" + std::to_string(Wid) +
                " is not a multiple of " + std::to_string(P * m) + " (smart_resize first)");

  // The processor fuses rescale into normalize: (x − mean·255) / (std·255), all in fp32.
  const auto fopts = torch::TensorOptions().dtype(torch::kFloat).device(frames.device());
  const torch::Tensor mean = (torch::tensor({kMean[0], kMean[1], kMean[2]}, fopts) * 255.0f).view({1, 3, 1, 1});
  const torch::Tensor std = (torch::tensor({kStd[0], kStd[1], kStd[2]}, fopts) * 255.0f).view({1, 3, 1, 1});
  torch::Tensor x = (frames.permute({0, 3, 1, 2}).to(torch::kFloat) - mean) / std;  // [T, C, H, W]

  if (const int64_t pad = (Tp - T % Tp) % Tp)  // repeat the last frame up to a whole temporal patch
    x = torch::cat({x, x.narrow(0, T - 1, 1).expand({pad, C, Hgt, Wid})}, 0);
  const int64_t gt = x.size(0) / Tp, gh = Hgt / P, gw = Wid / P;
  // [gt, Tp, C, gh/m, m, P, gw/m, m, P] -> [gt, gh/m, gw/m, m, m, C, Tp, P, P]: a patch's values
  // in Conv3d kernel order, each merged unit's m×m patches consecutive.
  const torch::Tensor patches = x.reshape({gt, Tp, C, gh / m, m, P, gw / m, m, P})
                                    .permute({0, 3, 6, 4, 7, 2, 1, 5, 8})
                                    .reshape({gt * gh * gw, C * Tp * P * P});
  if (grid) *grid = {gt, gh, gw};
  return patches;
}

}  // namespace ws::models
