// SPDX-License-Identifier: Apache-2.0
// Training-time degradation of the high-res clip before the low-res downsample
// (`enable_degradation`, `degradation_ops_range`; docs/design/upsampler-training.md §5). The clean x_hr
// target is never touched: the trainer degrades a copy.
//
//   Rng r = Rng::keyed(seed, "clip", epoch, pos, attempt);   // after the frame-start draw
//   DegradationResult d = degrade_clip(x_hr, min_ops, max_ops, r);
//
// The clip goes to uint8 frames the reference way (truncation), each op runs on the 0..255
// scale and is followed by clamp [0, 255] + round half to even, and the result comes back to
// [-1, 1]. Every parameter is drawn once per clip; noise realisations differ per frame. The
// result is a pure function of the clip and the Rng state: the same key gives the same bytes.
#pragma once
#include <torch/torch.h>

#include <nlohmann/json.hpp>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "data/random_streams.h"

namespace ws::data {

// The op pool in canonical (application) order.
inline constexpr std::array<const char*, 5> kDegradationOps = {"blur", "resize", "gaussian_noise", "poisson_noise",
                                                               "jpeg"};

// One op with its drawn parameters (logged, and reported by the buckets verb):
//   blur           {kernel_size, isotropic, sigma}  or  {kernel_size, isotropic:false, sigma_x, sigma_y, theta}
//   resize         {scale, down: area|bilinear|bicubic, up: bilinear|bicubic}
//   gaussian_noise {sigma (0..255 scale), gray}
//   poisson_noise  {strength, gray}
//   jpeg           {quality, qscale}
struct DegradationOp {
  std::string name;
  nlohmann::json params;
};

struct DegradationResult {
  torch::Tensor clip;              // [3, T, H, W] float32 in [-1, 1]
  std::vector<DegradationOp> ops;  // in the order applied
};

// x: [3, T, H, W] float32 in [-1, 1] (the clean high-res clip after resize/crop/trim).
// Draws n_ops = rng.uniform_int(min_ops, max_ops), picks min(n_ops, 5) distinct ops uniformly,
// draws their parameters and applies them in canonical order. n_ops = 0 still quantises to
// uint8 and back, as the reference does. Throws ws::Error for a bad range, and for the jpeg op
// in a build without video support.
DegradationResult degrade_clip(const torch::Tensor& x, int64_t min_ops, int64_t max_ops, Rng& rng);

// The op choice and parameter draws of degrade_clip, without applying anything.
std::vector<DegradationOp> draw_degradation_ops(int64_t min_ops, int64_t max_ops, Rng& rng);
// The parameters of one op (name from kDegradationOps).
DegradationOp draw_degradation_op(const std::string& name, Rng& rng);

// Applies one op with the given parameters (quantise, op, clamp + round, back to [-1, 1]).
// `rng` supplies the noise realisations. Throws ws::Error for an unknown op or a missing or bad
// parameter.
torch::Tensor apply_degradation_op(const torch::Tensor& x, const DegradationOp& op, Rng& rng);

// The MJPEG encoder's fixed quantiser for a JPEG quality: round(2 + (95 - quality) * 18 / 65).
int jpeg_qscale(int quality);

// [{"op": name, ...params}, ...] for logs and reports.
nlohmann::json degradation_ops_json(const std::vector<DegradationOp>& ops);

}  // namespace ws::data
