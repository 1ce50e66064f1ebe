// SPDX-License-Identifier: Apache-2.0
// From a resolved `train-vae` config to everything the VAE trainer needs, typed, with every
// problem of the whole config reported at once (docs/design/wan22-vae.md §12).
#pragma once
#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

#include "io/yaml_config.h"
#include "train/run_options.h"

namespace ws::train {

inline constexpr const char* kVaeWeightsFile = "vae.safetensors";
inline constexpr const char* kVaeOptimizerFile = "trainer_state/optimizer.safetensors";

struct VaeSetup {
  RunOptions run;
  DataOptions data;
  OptimizerOptions optimizer;
  double kl_weight = 1e-6;
  int64_t random_crop_size = 0;                      // 0: the whole video_sample_size frame
  nlohmann::json widths = nlohmann::json::object();  // the VAE widths YAML (config_path)
  std::string widths_source = "VAE config";
  std::optional<std::string> warm_start;  // vae_path
  std::optional<std::string> resume_dir;  // an explicit checkpoint folder ("latest" is found in the run)
  std::string save_path;                  // the final weights
  std::vector<std::string> warnings;
};

VaeSetup resolve_vae_setup(io::Config& cfg);

// A checkpoint folder given by path: absolute, or relative to output_dir, or to the current
// folder. "" when none of them holds the weights.
std::string find_vae_checkpoint(const std::string& output_dir, const std::string& path);

}  // namespace ws::train
