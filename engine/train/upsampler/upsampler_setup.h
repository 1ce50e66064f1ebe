// SPDX-License-Identifier: Apache-2.0
// From a resolved `train-upsampler` config to everything the trainer needs, with every
// problem of the whole config reported at once (docs/design/architecture.md: "Before training starts,
// the whole resolved config is validated and every problem found is reported").
#pragma once
#include <nlohmann/json.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "io/yaml_config.h"
#include "models/latent_upsampler.h"
#include "train/flow_noise.h"
#include "train/run_options.h"

namespace ws::train {

// Everything the upsampler trainer reads from its config, typed (the trainer never looks an
// option up by name).
struct UpsamplerSetup {
  RunOptions run;
  DataOptions data;
  OptimizerOptions optimizer;
  std::vector<std::string> trainable_modules{"."}, trainable_modules_low_learning_rate;
  bool use_ema = false;
  bool degradation = false;
  bool pixel_loss = false;
  double pixel_loss_weight = 1.0;
  int64_t vae_mini_batch = 1;
  std::optional<std::string> latent_cache_dir;  // set when cache_latents is on
  bool overlap_vae_encode = false;
  bool winograd_convs = true;
  int64_t validation_steps = 2000, validation_epochs = 5;
  nlohmann::json maths = nlohmann::json::object();       // maths_options(), hashed into checkpoints
  std::string vae_file;                                  // the VAE weights actually loaded
  nlohmann::json vae_config = nlohmann::json::object();  // vae_kwargs of the model YAML
  models::LatentUpsamplerConfig model;                   // for a fresh model (a warm start or resume may override)
  std::optional<std::string> warm_start;
  NoiseOptions noise;
  double noise_shift = 5.0;
  std::optional<std::pair<int64_t, int64_t>> degradation_range;
  std::optional<std::string> resume_dir;      // a checkpoint folder to resume from
  std::vector<std::string> validation_paths;  // existing ones
  std::vector<std::string> warnings;          // logged once the run directory is open
};

// latent_upsampler_kwargs.rational_spatial_scale of the model YAML (config_path), else 1.5.
// Throws ws::Error for an unreadable YAML or a scale that is not a number.
double upsampler_spatial_scale(const io::Config& cfg);

// Validates and resolves. Problems go to cfg.errors() (the caller checks cfg.ok()).
UpsamplerSetup resolve_upsampler_setup(io::Config& cfg);

// Hash of the options that change the maths (model, data, sizes, batch, optimizer, schedule):
// a resumed run compares it and names what changed.
nlohmann::json maths_options(const io::Config& cfg);

}  // namespace ws::train
