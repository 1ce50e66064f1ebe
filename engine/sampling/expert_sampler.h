// SPDX-License-Identifier: Apache-2.0
// The denoising loop of docs/design/sampling.md §1: at each step the expert whose range holds the
// integer timestep (high-noise at t ≥ 1000·boundary, with its own guidance scale), two forward
// passes for classifier-free guidance, one solver update, and the image conditioning of the
// model type (i2v: y beside x; ti2v: latent frame 0 pinned to the image latent, its tokens at
// t = 0). Runs on whatever device and dtype the experts and tensors are on; no gradients.
#pragma once
#include <torch/torch.h>

#include <functional>
#include <optional>
#include <string>

#include "models/wan_dit.h"
#include "sampling/flow_schedule.h"

namespace ws::sampling {

struct SamplerOptions {
  Solver solver = Solver::UniPC;
  int64_t steps = 40;
  double shift = 12.0;
  double guide_low = 3.0, guide_high = 4.0;  // the official tuple is (low, high)
  std::optional<double> boundary;            // ratio; none for a single model
  // Compute each prompt's text embedding and cross-attention keys/values once per expert rather
  // than at every step (the reference's way; same numbers). Off: every step recomputes them.
  bool cache_text = true;
};

// Two experts, or one model (`high` null: `low` is the model).
struct SamplerModels {
  models::WanModel high{nullptr};
  models::WanModel low{nullptr};
  // Called before each step with the expert about to run (`sample --offload` brings it onto the
  // device and sends the other to host memory); none: the models stay where they are.
  std::function<void(bool high)> activate;
};

struct SamplerInputs {
  torch::Tensor noise;         // [C, F, H, W]
  torch::Tensor context;       // [L, text_dim], unpadded
  torch::Tensor context_null;  // the negative prompt's
  torch::Tensor y;             // i2v: [4 + C, F, H, W] (models::i2v_y)
  torch::Tensor first_frame;   // ti2v: the image latent [C, 1, H, W]
};

struct SamplerStep {
  int64_t index = 0;     // 0-based
  int64_t timestep = 0;  // what the model saw
  std::string expert;    // "high", "low" or "model"
  double guide = 0;
  torch::Tensor latent;    // after the update (ti2v: frame 0 written back)
  torch::Tensor velocity;  // the guided model output the solver took
};

// Which model and guidance scale step `t` uses (docs/design/sampling.md §3).
struct ExpertChoice {
  bool high = false;
  double guide = 0;
  const char* name = "model";
};
ExpertChoice choose_expert(const SamplerOptions& o, bool two_experts, int64_t t);

// Runs the loop; `on_step` after every step; `cancel` is asked between steps (then the result
// is undefined: the caller writes nothing).
torch::Tensor sample_latents(SamplerModels& models, const SamplerInputs& in, const SamplerOptions& o,
                             const std::function<void(const SamplerStep&)>& on_step = {},
                             const std::function<bool()>& cancel = {});

// The seeded initial noise (docs/design/sampling.md §7): the first draw of a fresh CPU generator,
// as torch.randn(shape, generator=torch.Generator().manual_seed(seed)) gives it.
torch::Tensor seeded_noise(const std::vector<int64_t>& shape, uint64_t seed);

}  // namespace ws::sampling
