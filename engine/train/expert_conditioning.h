// Image conditioning of i2v and ti2v experts (docs/design/wan-dit.md §6 "Variant notes"), shared by the
// training step and eval.
//   i2v:  y = [mask(4), image latent(C)] goes in beside x_t; the mask is 1 on latent frame 0
//         (the given image) and 0 elsewhere; the image latent is the VAE encoding of the clip's
//         first frame followed by zero (mid-grey) frames.
//   ti2v: no y; latent frame 0 of x_t is replaced by the clean latent and its tokens get t = 0.
//         Half the samples (a keyed draw) train this way, the others as t2v (VideoX-Fun's
//         `train_mode ti2v`).
#pragma once
#include <torch/torch.h>

#include <cstdint>
#include <string>

namespace ws::train {

enum class ImageConditioning { None, I2V, TI2V };

// From the WanModel `model_type`: t2v → None.
ImageConditioning image_conditioning(const std::string& model_type);
// in_dim the model type needs for out_dim latent channels: t2v/ti2v C, i2v 2C + 4.
int64_t expected_in_dim(ImageConditioning c, int64_t out_dim);

// The pixel clip whose encoding is the i2v image latent: frame 0 kept, the rest 0.
// x [B, 3, L, H, W] or [3, L, H, W].
torch::Tensor first_frame_clip(const torch::Tensor& x);
// y [4 + C, F, H, W] from the image latent [C, F, H, W].
torch::Tensor i2v_y(const torch::Tensor& image_latent);

// ti2v: whether sample `b` of micro-batch `micro` of step `global_step` is image-conditioned
// (p 0.5, stream "ti2v"). A single latent frame has nothing to condition on: false.
bool draw_ti2v_image(uint64_t seed, int64_t global_step, int64_t micro, int rank, int64_t b, int64_t latent_frames);
// x_t with latent frame 0 taken from x0.
torch::Tensor with_clean_first_frame(const torch::Tensor& x_t, const torch::Tensor& x0);
// Per-token timesteps [F·H/2·W/2]: 0 for frame 0's tokens, t for the others.
torch::Tensor first_frame_token_timesteps(double t, int64_t F, int64_t H, int64_t W);

}  // namespace ws::train
