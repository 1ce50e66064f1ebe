// SPDX-License-Identifier: Apache-2.0
// The latent upsampler run's memory by formula (train/memory_plan.h).
#pragma once
#include <cstdint>

#include "train/memory_plan.h"
#include "train/upsampler/upsampler_setup.h"

namespace ws::train {

TrainingMemory upsampler_training_memory(const UpsamplerSetup& s, int64_t ranks, const MemoryTarget& target);

}  // namespace ws::train
