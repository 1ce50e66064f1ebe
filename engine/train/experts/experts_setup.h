// SPDX-License-Identifier: Apache-2.0
// From a resolved `train-experts` config to everything the trainer needs, with every problem
// of the whole config reported at once (docs/design/architecture.md "Worker verbs").
#pragma once
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "io/yaml_config.h"
#include "models/wan_dit_config.h"
#include "models/wan_lora.h"
#include "train/experts/experts_validation.h"
#include "train/experts/expert_routing.h"
#include "train/run_options.h"
#include "train/experts/text_encoding.h"

namespace ws::train {

// LoRA training (docs/design/lora.md): an adapter spec per expert, the base frozen.
struct ExpertsLoraOptions {
  bool on = false;
  models::LoraSpec high, low;
  bool base_bf16 = true;
};

struct ExpertSource {
  models::WanConfig config;
  std::optional<std::string> weights;  // a model folder or weights file; none: fresh experts
};

// Everything the dual-expert trainer reads from its config, typed (the trainer never looks an
// option up by name).
struct ExpertsSetup {
  RunOptions run;
  DataOptions data;
  OptimizerOptions optimizer;  // schedule: the shared name and warmup; per expert below
  double learning_rate_high = 1e-4, learning_rate_low = 1e-4;
  int64_t lr_warmup_steps_high = 0, lr_warmup_steps_low = 0;
  bool schedule_on_expert_steps = true;  // lr_schedule_basis: expert_steps (else global_steps)
  bool bsmntw = false;                   // timestep_weighting: bsmntw
  bool fp8 = false;
  bool zero2 = false;               // zero_stage: 2
  bool bf16_weights = false;        // weight_dtype: bf16 (fp32 masters, sharded under zero_stage 2)
  int64_t blocks_to_swap = 0;       // the last N blocks of each expert wait in host memory (docs/design/block-swap.md)
  bool checkpoint_offload = false;  // gradient_checkpointing_offload: block inputs in host memory
  bool checkpoint_parts = false;    // gradient_checkpointing_parts: each block's parts recomputed apart
  std::vector<int64_t> eval_timesteps;
  int64_t eval_max_samples_per_t = 1, eval_steps = 0;
  nlohmann::json maths = nlohmann::json::object();       // experts_maths_options(), hashed into checkpoints
  std::string vae_file;                                  // empty when every row brings its own latent file
  bool all_latent_files = false;                         // every train (and eval) row names a latent_path
  nlohmann::json vae_config = nlohmann::json::object();  // vae_kwargs, with the run's vae_type
  int64_t vae_z_dim = 0;                                 // the VAE's latent channels (0 without a VAE)
  int64_t vae_spatial_factor = 16;                       // 16 (Wan2.2 VAE) or 8 (Wan2.1 VAE): buckets align to twice it
  ExpertSource high, low;
  ExpertsLoraOptions lora;
  std::string text_dir;
  std::optional<TextEncoderOptions> text_encoder;  // captions to embeddings before the first step
  std::optional<std::string> latent_cache_dir;
  bool overlap_vae_encode = false;  // the next micro-batch is taken and encoded during the step
  RoutingOptions routing;
  std::optional<std::string> resume_dir;
  std::optional<std::string> eval_meta;
  int64_t eval_seed = 42;
  ExpertsValidationOptions validation;  // videos at validation (docs/design/sampling.md §12.3)
  std::vector<std::string> warnings;    // logged once the run directory is open
};

// `demo_data: auto`: the demo dataset when train_data_meta is missing (as the upsampler).
// Synthetic text embeddings for rows without one are written by resolve_experts_setup, which
// knows text_dim. Validates and resolves; problems go to cfg.errors().
ExpertsSetup resolve_experts_setup(io::Config& cfg);

// The options that change the maths; a resumed run compares their hash and names what changed.
nlohmann::json experts_maths_options(const io::Config& cfg);

}  // namespace ws::train
