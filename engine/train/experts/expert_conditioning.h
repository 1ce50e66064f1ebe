// SPDX-License-Identifier: Apache-2.0
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

#include "models/dit_conditioning.h"

namespace ws::train {

enum class ImageConditioning { None, I2V, TI2V };

// From the WanModel `model_type`: t2v → None.
ImageConditioning image_conditioning(const std::string& model_type);
// in_dim the model type needs for out_dim latent channels: t2v/ti2v C, i2v 2C + 4.
int64_t expected_in_dim(ImageConditioning c, int64_t out_dim);

// The tensor helpers live with the model (models/dit_conditioning.h), shared with sampling.
using models::first_frame_clip;
using models::first_frame_token_timesteps;
using models::i2v_y;
using models::with_clean_first_frame;

// ti2v: whether sample `b` of micro-batch `micro` of step `global_step` is image-conditioned
// (p 0.5, stream "ti2v"). A single latent frame has nothing to condition on: false.
bool draw_ti2v_image(uint64_t seed, int64_t global_step, int64_t micro, int rank, int64_t b, int64_t latent_frames);

}  // namespace ws::train
