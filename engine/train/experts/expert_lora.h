// SPDX-License-Identifier: Apache-2.0
// A LoRA expert (docs/design/lora.md): the model's weights frozen (the block Linears stored in
// bf16 unless asked otherwise), fresh adapters drawn from the run's seed and the expert's name,
// attached with the spec's dropout.
#pragma once
#include <nlohmann/json.hpp>

#include <cstdint>

#include "models/wan_dit.h"
#include "models/wan_lora.h"

namespace ws::train {

struct ExpertsLoraOptions;

// `fp8_only`: a model with fp8 copies keeps only them for its block Linears (its weights file
// stays the base's record; fresh experts keep their weights, which their checkpoints save).
models::WanLora make_expert_lora(models::WanModel& model, const models::LoraSpec& spec, bool base_bf16, int64_t seed,
                                 bool high, bool fp8_only = false);

// What state.json records of a LoRA run: each expert's rank, alpha, dropout and targets.
nlohmann::json lora_record(const ExpertsLoraOptions& options);

// The block Linears' weights and biases in `dtype` (the frozen base of a LoRA expert).
void store_block_linears(models::WanModelImpl& model, torch::ScalarType dtype);

}  // namespace ws::train
