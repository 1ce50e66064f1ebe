// From a resolved `train-experts` config to everything the trainer needs, with every problem
// of the whole config reported at once (docs/design/architecture.md "Worker verbs").
#pragma once
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "io/yaml_config.h"
#include "models/wan_dit_config.h"
#include "train/expert_routing.h"

namespace ws::train {

struct ExpertSource {
  models::WanConfig config;
  std::optional<std::string> weights;  // a model folder or weights file; none: fresh experts
};

struct ExpertsSetup {
  std::string output_dir;
  std::string meta_path, data_dir;
  std::string vae_file;      // empty when every row brings its own latent file
  bool all_latent_files = false;  // every train (and eval) row names a latent_path
  nlohmann::json vae_config = nlohmann::json::object();
  ExpertSource high, low;
  std::string text_dir;
  std::optional<std::string> latent_cache_dir;
  RoutingOptions routing;
  std::optional<std::string> resume_dir;
  std::optional<std::string> eval_meta;
  int64_t eval_seed = 42;
  std::vector<std::string> warnings;  // logged once the run directory is open
};

// `demo_data: auto`: the demo dataset when train_data_meta is missing (as the upsampler).
// Synthetic text embeddings for rows without one are written by resolve_experts_setup, which
// knows text_dim. Validates and resolves; problems go to cfg.errors().
ExpertsSetup resolve_experts_setup(io::Config& cfg);

// The options that change the maths; a resumed run compares their hash and names what changed.
nlohmann::json experts_maths_options(const io::Config& cfg);

}  // namespace ws::train
