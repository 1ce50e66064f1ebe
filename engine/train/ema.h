// SPDX-License-Identifier: Apache-2.0
// Exponential moving average of the trainable weights (diffusers EMAModel defaults,
// docs/design/upsampler-training.md §10.1): own counter n incremented first, d = min(0.9999, (1+s)/(10+s))
// with s = n − 1 (0 when s ≤ 0), update `shadow −= (1 − d)·(shadow − param)`. fp32 shadow.
#pragma once
#include <torch/torch.h>

#include <string>

#include "io/state_dict.h"

namespace ws::train {

struct EmaOptions {
  double decay = 0.9999;
  double min_decay = 0.0;
  int64_t update_after_step = 0;
};

class Ema {
 public:
  // The shadow starts as an exact copy of the module's parameters and buffers.
  Ema(const torch::nn::Module& module, EmaOptions opts = {});
  double decay_for(int64_t n) const;
  // After each optimizer step; returns the decay used.
  double update(const torch::nn::Module& module);
  // Swap helpers for validation with EMA weights.
  void copy_to(torch::nn::Module& module) const;
  int64_t optimization_step() const { return n_; }
  void set_optimization_step(int64_t n) { n_ = n; }
  const io::StateDict& shadow() const { return shadow_; }
  void load_shadow(const io::StateDict& sd, const std::string& source);
  const EmaOptions& options() const { return opts_; }

 private:
  EmaOptions opts_;
  io::StateDict shadow_;
  int64_t n_ = 0;
};

}  // namespace ws::train
