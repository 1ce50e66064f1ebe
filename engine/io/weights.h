// SPDX-License-Identifier: Apache-2.0
// One entry point for every weights format the engine reads: `.safetensors`, sharded
// `*.safetensors.index.json`, PyTorch `.pth`/`.pt`/`.bin` zip checkpoints and diffusers-style
// model directories (`config.json` + `diffusion_pytorch_model.safetensors[.index.json]`).
#pragma once
#include <nlohmann/json.hpp>

#include <string>

#include "io/state_dict.h"

namespace ws::io {

enum class WeightsFormat { Safetensors, ShardedSafetensors, Pth, ModelDir };

WeightsFormat detect_weights_format(const std::string& path);  // throws ws::Error
StateDict load_weights(const std::string& path);

// `__metadata__` of a safetensors file (or of the first shard); empty for other formats.
std::map<std::string, std::string> weights_metadata(const std::string& path);

// Diffusers-style model directory.
struct ModelDir {
  nlohmann::json config;  // config.json as written (unknown keys kept)
  StateDict weights;
};
ModelDir read_model_dir(const std::string& dir);
// Writes config.json and diffusion_pytorch_model.safetensors atomically into `dir`.
void write_model_dir(const std::string& dir, const nlohmann::json& config, const StateDict& weights);

}  // namespace ws::io
