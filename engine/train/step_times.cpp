// SPDX-License-Identifier: Apache-2.0
#include "train/step_times.h"

#include <chrono>

#include "train/training_device.h"

namespace ws::train {

double steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void StepTimes::add_to(nlohmann::json& x) const {
  x["data_wait_s"] = data_wait_s;
  x["vae_s"] = vae_s;
  x["model_s"] = model_s;
}

PhaseTimer::PhaseTimer(double* into, const torch::Device& device) : into_(into), device_(device) {
  synchronize_device(device_);
  t0_ = steady_seconds();
}

PhaseTimer::~PhaseTimer() {
  synchronize_device(device_);
  *into_ += steady_seconds() - t0_;
}

}  // namespace ws::train
