// SPDX-License-Identifier: Apache-2.0
// What a dual-expert `step` event says about its batch, and the per-expert TensorBoard series
// (docs/design/dual-expert-training.md §11).
#pragma once
#include <nlohmann/json.hpp>

#include <cstdint>

#include "data/clip_loader.h"
#include "io/tfevents.h"
#include "train/training_run.h"

namespace ws::train {

// clips (row, file, first frame), epoch, size, pixel frames and, for latent files, their F, h, w.
void add_batch_fields(nlohmann::json& x, const data::Batch& batch);

// Each expert's series at its own step (so they never go backwards), the run's at the global step.
void log_expert_scalars(io::TfEventsWriter& tb, const StepReport& r, const StepRate& rate, int64_t global_step);

}  // namespace ws::train
