// SPDX-License-Identifier: Apache-2.0
// What every trainer resolves the same way at set-up: the demo dataset when asked for, the VAE
// file, the checkpoint to resume from and its trainer_state/state.json.
#pragma once
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "io/yaml_config.h"

namespace ws::train {

// When `demo_data: auto` and train_data_meta is missing: writes the demo dataset first
// (docs/design/architecture.md, Formats). Returns true when it wrote one.
bool make_demo_data_if_asked(const io::Config& cfg);

// The VAE file: `vae_path`, else `vae_kwargs.vae_subpath` (default Wan2.2_VAE.pth) under
// pretrained_model_name_or_path; a missing file or neither option is a config error.
std::string resolve_vae_file(io::Config& cfg, const nlohmann::json& vae_config);

// The checkpoint to resume from, or nullopt for a fresh start. `latest` with none is a fresh
// start (with a warning in `warning`); a path that does not exist is an error message.
std::optional<std::string> find_resume_checkpoint(const std::string& value, const std::string& output_dir,
                                                  std::string* warning, std::string* error);

// <dir>/trainer_state/state.json parsed (both trainers' checkpoints); ws::Error when missing or bad.
nlohmann::json read_trainer_state_json(const std::string& dir);

}  // namespace ws::train
