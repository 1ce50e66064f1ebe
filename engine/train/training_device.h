// SPDX-License-Identifier: Apache-2.0
// Where a training run computes: the GPU when this LibTorch has CUDA and the machine a device
// (the LOCAL_RANK-th under data parallel), else the CPU. The same code runs on both; only the
// device differs, so every CPU test exercises the GPU path's plumbing.
#pragma once
#include <torch/torch.h>

#include <string>
#include <vector>

namespace ws::train {

torch::Device training_device(int local_rank);
// Waits for the device's queued work (a no-op on the CPU): for timing a phase.
void synchronize_device(const torch::Device& device);

// One warning naming the GPU-only options that were set but act only on a GPU (empty when
// none, or when the run has a GPU). `options`: (option, what it would do) pairs that are on.
std::string no_gpu_warning(const torch::Device& device, const std::vector<std::string>& options);

// training_device + the log lines every trainer writes: where it trains, and one warning when
// `mixed_precision: bf16` or `low_vram` (whose GPU effect `low_vram_effect` names) cannot act.
// Callers pass only what the user set: the GPU-oriented defaults stay silent on a CPU.
torch::Device open_training_device(int local_rank, bool bf16, bool low_vram, const std::string& low_vram_effect);

}  // namespace ws::train
