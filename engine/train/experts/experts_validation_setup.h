// SPDX-License-Identifier: Apache-2.0
// The validation options of a train-experts config (docs/design/sampling.md §12.3): prompts, the
// preview or full sampler settings with the run's routing, and i2v/ti2v start images.
#pragma once
#include <nlohmann/json.hpp>

#include "io/yaml_config.h"
#include "models/wan_dit_config.h"
#include "train/experts/experts_setup.h"

namespace ws::train {

// Fills s.validation; problems go to cfg.errors(). `sched` is the model YAML's scheduler_kwargs.
void resolve_validation(io::Config& cfg, ExpertsSetup& s, const models::WanConfig& mc, const nlohmann::json& sched,
                        bool have_model);

}  // namespace ws::train
