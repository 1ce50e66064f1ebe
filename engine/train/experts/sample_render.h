// SPDX-License-Identifier: Apache-2.0
// Rendering videos with the experts (docs/design/sampling.md §9, §10, §12): the official presets
// and the cheap preview, the seeded noise at the latent shape the experts and size imply, the
// denoising loop, and the outputs — normalised latents, a JSON record of every setting, and an
// MP4 through a VAE whose latent space matches. Shared by the `sample` verb and validation.
#pragma once
#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include <functional>
#include <string>

#include "models/wan_vae.h"
#include "sampling/expert_sampler.h"

namespace ws::train {

struct SampleSettings {
  std::string task;  // preset name, or "custom"
  sampling::SamplerOptions sampler;
  int64_t width = 832, height = 480, frames = 81;
  int64_t fps = 16;
  uint64_t seed = 0;
  nlohmann::json to_json() const;
};

// "t2v-A14B", "i2v-A14B", "ti2v-5B" (docs/design/sampling.md §9); ws::Error listing them otherwise.
SampleSettings sample_preset(const std::string& task);
// The cheap preview (§12.4): 12 steps, 256×256, 17 frames; shift, guidance and boundary kept.
void apply_preview(SampleSettings& s);

// Latent [C, F, h, w] of a video for experts with `latent_channels` (16: the Wan2.1 VAE's
// stride 8; 48: stride 16). ws::Error when the size or frame count does not fit.
std::vector<int64_t> sample_latent_shape(const SampleSettings& s, int64_t latent_channels);

struct SampleConditioning {
  torch::Tensor context, context_null;  // [L, text_dim], unpadded
  torch::Tensor image_latent;           // i2v [C, F, h, w] (the image and zero frames encoded); ti2v [C, 1, h, w]
};

// The image latent of an i2v / ti2v video (SampleConditioning::image_latent): for i2v the picture
// followed by zero frames encoded as one clip, for ti2v the picture alone; the picture resized to
// cover the video's size and centre-cropped (a video gives its first frame). A .safetensors with
// an `image_latent` tensor is taken as it is (no VAE needed).
torch::Tensor image_condition_latent(const std::string& path, const SampleSettings& s, const std::string& model_type,
                                     models::WanVae* vae);

// Noise from the seed, then the loop. `latent_channels` is the experts' out_dim.
torch::Tensor render_latents(sampling::SamplerModels& models, const SampleSettings& s, int64_t latent_channels,
                             const SampleConditioning& c,
                             const std::function<void(const sampling::SamplerStep&)>& on_step = {},
                             const std::function<bool()>& cancel = {});

struct SampleFiles {
  std::string latents, sidecar, video;  // video empty without a matching VAE
};
// <base>.latents.safetensors (`latents`, with `record` — what decides them — in __metadata__),
// <base>.json (`sidecar`: the record, the time taken, the VAE) and, with a VAE of the latents'
// channel count, <base>.mp4; each written under a temporary name and renamed. `why_no_video`
// says why there is none.
SampleFiles write_sample(const std::string& base, const torch::Tensor& latents, const nlohmann::json& record,
                         const nlohmann::json& sidecar, models::WanVae* vae, int64_t fps,
                         std::string* why_no_video = nullptr);

}  // namespace ws::train
