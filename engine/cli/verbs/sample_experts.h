// SPDX-License-Identifier: Apache-2.0
// The models of a `sample` run: an expert pair (a Wan Studio checkpoint, a LoRA run's checkpoint
// on its base, an official model folder, or two model folders, each with an optional LoRA) or one
// model, with where they came from for the outputs' record.
#pragma once
#include <nlohmann/json.hpp>

#include "cli/args.h"
#include "sampling/expert_sampler.h"

namespace ws::cli {

struct Experts {
  sampling::SamplerModels models;
  nlohmann::json record;  // where they came from
};

// From --ckpt_dir, --high_noise_model with --low_noise_model, or --model, and --lora_high,
// --lora_low, --lora_scale; the models in eval mode on the CPU.
Experts load_experts(const Args& a);

}  // namespace ws::cli
