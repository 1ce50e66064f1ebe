// SPDX-License-Identifier: Apache-2.0
#include "train/experts/expert_conditioning.h"

#include "core/error.h"
#include "data/random_streams.h"

namespace ws::train {

ImageConditioning image_conditioning(const std::string& model_type) {
  if (model_type == "t2v") return ImageConditioning::None;
  if (model_type == "i2v") return ImageConditioning::I2V;
  if (model_type == "ti2v") return ImageConditioning::TI2V;
  throw Error("model_type must be t2v, i2v or ti2v, got '" + model_type + "'");
}

int64_t expected_in_dim(ImageConditioning c, int64_t out_dim) {
  return c == ImageConditioning::I2V ? 2 * out_dim + 4 : out_dim;
}

bool draw_ti2v_image(uint64_t seed, int64_t global_step, int64_t micro, int rank, int64_t b, int64_t latent_frames) {
  if (latent_frames < 2) return false;
  return data::Rng::keyed(seed, "ti2v", global_step, micro, rank, b).uniform() < 0.5;
}

}  // namespace ws::train
