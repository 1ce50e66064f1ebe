// SPDX-License-Identifier: Apache-2.0
// Noisy training (docs/design/upsampler-training.md §7): the flow-matching σ pool of diffusers'
// FlowMatchEulerDiscreteScheduler.set_timesteps, and the corruption of z_hr / z_lr with
// one σ per sample, z ← (1 − σ)·z + σ·ε.
#pragma once
#include <torch/torch.h>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "data/random_streams.h"

namespace ws::train {

// σ_0 … σ_{K−1} (descending, float32) for K inference steps of a 1000-step scheduler.
std::vector<float> flow_sigma_pool(int64_t K, double shift, int64_t train_timesteps = 1000);

struct NoiseOptions {
  bool enabled = false;
  std::string mode = "scheduler";            // "scheduler" | "uniform"
  std::vector<float> pool;                   // scheduler mode, already sliced by noise_step_range
  double sigma_min = 0.0, sigma_max = 0.25;  // uniform mode
};

// Builds the options from the trainer flags; a bad range is a ws::Error naming the option.
NoiseOptions make_noise_options(bool enabled, const std::string& mode, int64_t steps, double shift,
                                const std::optional<std::pair<int64_t, int64_t>>& step_range, double sigma_min,
                                double sigma_max);

// Draws σ for every sample, then ε_hr, then ε_lr from `rng` (the step stream), and mixes in
// place (fp32). Returns the σ used, one per sample.
std::vector<float> add_flow_noise(torch::Tensor& z_hr, torch::Tensor& z_lr, const NoiseOptions& opt, data::Rng& rng);

}  // namespace ws::train
