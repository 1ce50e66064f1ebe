// SPDX-License-Identifier: Apache-2.0
// The dual-expert checkpoint folder (docs/design/dual-expert-training.md §7):
//   high_noise_transformer/, low_noise_transformer/   config.json {_class_name: WanModel, ...} +
//                                                     diffusion_pytorch_model.safetensors (official keys)
//   trainer_state/optimizer_high.safetensors, optimizer_low.safetensors, state.json
// A LoRA run (docs/design/lora.md) writes each expert's adapters instead of its weights:
//   high_noise_lora.safetensors, low_noise_lora.safetensors              musubi-tuner / ComfyUI keys
//   high_noise_lora_diffusers.safetensors, low_noise_lora_diffusers.safetensors   PEFT keys (diffusers)
// and the expert folders only for fresh experts (no weights file to name as the base).
// No generator state: every draw is keyed by (seed, stream, step, ...) (docs/design/dual-expert-training.md §8).
#pragma once
#include <nlohmann/json.hpp>
#include <cstdint>
#include <string>

#include "data/bucket_sampler.h"
#include "io/state_dict.h"
#include "train/experts/expert_step.h"

namespace ws::train {

struct ExpertsState {
  int64_t format_version = 1;
  int64_t global_step = 0, steps_high = 0, steps_low = 0;
  int64_t epoch = 0;
  data::LoaderCursor cursor;  // of the last batch a completed update used
  int64_t seed = 0, eval_seed = 0;
  double boundary_ratio = 0.875;
  int64_t boundary = 875;
  std::string routing_mode = "uniform";
  double shift = 12.0;
  nlohmann::json extra = nlohmann::json::object();  // lr config, dtypes, fp8, sources (informative)
  std::string options_sha256;
  nlohmann::json options = nlohmann::json::object();

  nlohmann::json to_json() const;
  static ExpertsState from_json(const nlohmann::json& j, const std::string& source);
};

// config.json of an expert folder: `_class_name: WanModel` plus every official key.
nlohmann::json expert_config_json(const models::WanConfig& cfg);

// Which experts' own weights a checkpoint holds (LoRA runs: only fresh bases).
struct CheckpointBases {
  bool high = true, low = true;
};

// Writes both experts (or their adapters), both optimizers and state.json into `dir` (a RunDir
// temporary folder).
void write_experts_checkpoint(const std::string& dir, ExpertStep& high, ExpertStep& low, const ExpertsState& state,
                              const CheckpointBases& bases = {});

// The adapter file names of one expert in a checkpoint.
std::string lora_file_name(bool high, models::LoraFormat format = models::LoraFormat::Musubi);

struct LoadedExperts {
  ExpertsState state;
  nlohmann::json high_config, low_config;
  io::StateDict high_weights, low_weights, high_optimizer, low_optimizer;  // weights empty when absent (LoRA)
  io::StateDict high_lora, low_lora;                                       // Musubi keys; empty for full fine-tuning
  bool has_weights_high = false, has_weights_low = false;
};

// Throws ws::Error naming the file for anything missing or malformed.
LoadedExperts read_experts_checkpoint(const std::string& dir);

// Puts one expert of a checkpoint back: its config must equal the running one's, then the
// weights (strict) or, for a LoRA expert, the adapters (same targets and ranks), the fp8 copies,
// the Adam state and the expert's step count (which must match the optimizer's).
void restore_expert(ExpertStep& e, bool high, const LoadedExperts& ck, const std::string& dir);

}  // namespace ws::train
