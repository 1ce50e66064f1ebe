// SPDX-License-Identifier: Apache-2.0
// Where one update's time goes, for the `step` event (`data_wait_s`, `vae_s`, `model_s`) and
// `bench train-e2e`: waiting for decoded clips, the VAE (encodes, or latent files and the cache),
// and the model (forward, backward, reduce, clip, optimizer). On a GPU each phase ends with a
// device synchronisation, so the seconds are the phase's own and not those of queued kernels.
#pragma once
#include <torch/torch.h>

#include <nlohmann/json.hpp>

namespace ws::train {

// Seconds on the monotonic clock (for differences only).
double steady_seconds();

struct StepTimes {
  double data_wait_s = 0, vae_s = 0, model_s = 0;
  void add_to(nlohmann::json& step_extra) const;
};

// Adds the seconds from construction to destruction to `*into` (after synchronising `device`).
class PhaseTimer {
 public:
  PhaseTimer(double* into, const torch::Device& device);
  ~PhaseTimer();
  PhaseTimer(const PhaseTimer&) = delete;
  PhaseTimer& operator=(const PhaseTimer&) = delete;

 private:
  double* into_;
  torch::Device device_;
  double t0_;
};

}  // namespace ws::train
