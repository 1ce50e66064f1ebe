// SPDX-License-Identifier: Apache-2.0
// Image conditioning of the Wan DiT's inputs (docs/design/wan-dit.md §6 "Variant notes"), one
// implementation for training and sampling:
//   i2v:  y = [mask(4), image latent(C)] beside x; the mask is 1 on latent frame 0 (the given
//         image) and 0 elsewhere; the image latent encodes the first frame followed by zero frames.
//   ti2v: latent frame 0 is the clean image latent and its tokens get t = 0.
#pragma once
#include <torch/torch.h>

#include <cstdint>

namespace ws::models {

// The pixel clip whose encoding is the i2v image latent: frame 0 kept, the rest 0.
// x [B, 3, L, H, W] or [3, L, H, W].
torch::Tensor first_frame_clip(const torch::Tensor& x);
// y [4 + C, F, H, W] from the image latent [C, F, H, W].
torch::Tensor i2v_y(const torch::Tensor& image_latent);
// x with latent frame 0 taken from x0 (both [C, F, H, W]).
torch::Tensor with_clean_first_frame(const torch::Tensor& x, const torch::Tensor& x0);
// Per-token timesteps [F·H/2·W/2]: 0 for frame 0's tokens, t for the others.
torch::Tensor first_frame_token_timesteps(double t, int64_t F, int64_t H, int64_t W);

}  // namespace ws::models
