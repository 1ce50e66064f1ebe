// SPDX-License-Identifier: Apache-2.0
// The upsampler's checkpoint folder (docs/design/upsampler-training.md §10.2–10.3):
//   latent_upsampler/           config.json + diffusion_pytorch_model.safetensors
//   latent_upsampler_ema/       with use_ema (config.json carries the EMA fields)
//   sampler_pos_start.pkl       pickle protocol 2 of [pos, epoch]
//   trainer_state/optimizer.safetensors, state.json, ema_shadow.safetensors,
//                 online_weights.safetensors (final checkpoint only)
#pragma once
#include <nlohmann/json.hpp>
#include <cstdint>
#include <optional>
#include <string>

#include "data/bucket_sampler.h"
#include "io/state_dict.h"
#include "train/upsampler/upsampler_update.h"

namespace ws::train {

struct TrainerState {
  int64_t format_version = 1;
  int64_t global_step = 0;
  int64_t epoch = 0;
  data::LoaderCursor cursor;
  int64_t ema_optimization_step = 0;
  int64_t seed = 0;
  std::string options_sha256;
  nlohmann::json options;  // the maths options themselves, to name what changed

  nlohmann::json to_json() const;
  static TrainerState from_json(const nlohmann::json& j, const std::string& source);
};

// `80 02 5D 71 00 28 <int> <int> 65 2E`: what the reference's resume reads.
std::string sampler_pos_pickle(int64_t pos, int64_t epoch);

// Writes the checkpoint's files into `dir` (a RunDir temporary folder). `final_save`: the
// EMA weights go to latent_upsampler/ and the live ones to trainer_state/online_weights.
void write_upsampler_checkpoint(const std::string& dir, UpsamplerUpdater& updater, const TrainerState& state,
                                bool final_save);

struct LoadedCheckpoint {
  TrainerState state;
  io::StateDict weights;  // the live (non-EMA) weights
  io::StateDict optimizer;
  std::optional<io::StateDict> ema_shadow;
  nlohmann::json model_config;  // latent_upsampler/config.json
};

// Throws ws::Error naming the file for anything missing or malformed.
LoadedCheckpoint read_upsampler_checkpoint(const std::string& dir);

}  // namespace ws::train
