// SPDX-License-Identifier: Apache-2.0
// The dual-expert run's memory by formula (train/memory_plan.h).
#pragma once
#include <cstdint>

#include "train/memory_plan.h"
#include "train/experts/experts_setup.h"

namespace ws::train {

TrainingMemory experts_training_memory(const ExpertsSetup& s, int64_t ranks, const MemoryTarget& target);

}  // namespace ws::train
