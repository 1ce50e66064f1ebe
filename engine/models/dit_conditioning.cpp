// SPDX-License-Identifier: Apache-2.0
#include "models/dit_conditioning.h"

#include "core/error.h"

namespace ws::models {

torch::Tensor first_frame_clip(const torch::Tensor& x) {
  const int64_t axis = x.dim() - 3;  // the frame axis of [.., 3, L, H, W]
  auto out = torch::zeros_like(x);
  out.narrow(axis, 0, 1).copy_(x.narrow(axis, 0, 1));
  return out;
}

torch::Tensor i2v_y(const torch::Tensor& image_latent) {
  if (image_latent.dim() != 4) throw Error("i2v: the image latent must be [C, F, H, W]");
  const int64_t F = image_latent.size(1), H = image_latent.size(2), W = image_latent.size(3);
  // The reference repeats pixel frame 0 four times and folds frames by four: latent frame 0 has
  // all four mask channels 1, every later latent frame 0.
  auto mask = torch::zeros({4, F, H, W}, image_latent.options());
  mask.narrow(1, 0, 1).fill_(1.0);
  return torch::cat({mask, image_latent}, 0);
}

torch::Tensor with_clean_first_frame(const torch::Tensor& x, const torch::Tensor& x0) {
  auto out = x.clone();
  out.narrow(1, 0, 1).copy_(x0.narrow(1, 0, 1));
  return out;
}

torch::Tensor first_frame_token_timesteps(double t, int64_t F, int64_t H, int64_t W) {
  const int64_t per_frame = (H / 2) * (W / 2);
  auto ts = torch::full({F * per_frame}, static_cast<float>(t));
  ts.narrow(0, 0, per_frame).zero_();
  return ts;
}

}  // namespace ws::models
