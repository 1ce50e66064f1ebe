// SPDX-License-Identifier: Apache-2.0
// What makes a dual-expert run fit a GPU (`estimate --device cuda --device_memory`): the run as
// it is, else the smallest blocks_to_swap, then fp8 for a pretrained LoRA base, then the blocks'
// inputs in host memory, then blocks recomputed a part at a time, then fewer frames and smaller
// sizes with every block swapped — each with its peak device and host memory.
#pragma once
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "train/experts/experts_setup.h"
#include "train/memory_plan.h"

namespace ws::train {

struct FitChoice {
  nlohmann::json changes = nlohmann::json::object();  // options to set, {} for the run as it is
  double device_bytes = 0, host_bytes = 0;
  bool fits = false;
};

// The first fitting choice along each way listed above (at most one per way), in that order;
// the last entry is the most the ways can do when nothing fits.
std::vector<FitChoice> experts_fit_choices(const ExpertsSetup& s, int64_t ranks, const MemoryTarget& target,
                                           double device_bytes);

}  // namespace ws::train
