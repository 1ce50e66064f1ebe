// SPDX-License-Identifier: Apache-2.0
// The DiT training step taken apart for `bench dit-train --breakdown`.
#pragma once
#include <nlohmann/json.hpp>

#include <cstdint>

#include "models/wan_dit.h"
#include "train/experts/expert_step.h"

namespace ws::cli {

// Median ms of each part, forward and backward, of one block at `tokens` latent tokens and `text`
// context rows ("per_block_ms": attention, linears, norms_modulation, rope), and of the whole
// model's AdamW update and gradient clipping through `step` ("whole_model_ms": adamw, clip). Leaves
// the gradients released; the weights take a few more updates.
nlohmann::json dit_step_parts(models::WanModel& model, train::ExpertStep& step, int64_t tokens, int64_t text,
                              int64_t reps);

}  // namespace ws::cli
