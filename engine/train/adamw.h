// SPDX-License-Identifier: Apache-2.0
// AdamW with PyTorch's update (torch 1.13 single-tensor path, amsgrad off): decoupled weight
// decay p *= 1 − lr·wd, bias corrections in double. Own implementation so the per-group learning
// rate is passed explicitly each step and the state saves under parameter names
// (trainer_state/optimizer.safetensors). fp32 CPU tensors are updated in one pass
// (train/adamw_kernel.h), the rest with the same arithmetic as LibTorch ops.
#pragma once
#include <torch/torch.h>

#include <string>
#include <vector>

#include "io/state_dict.h"

namespace ws::train {

struct AdamWGroup {
  std::vector<std::string> names;
  std::vector<torch::Tensor> params;
};

struct AdamWOptions {
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8, weight_decay = 1e-2;
};

class AdamW {
 public:
  AdamW(std::vector<AdamWGroup> groups, AdamWOptions opts);
  // One update; group_lrs[i] is the learning rate of group i for this update. Parameters
  // without a gradient are skipped (their state is left untouched).
  void step(const std::vector<double>& group_lrs);
  void zero_grad();
  int64_t step_count() const { return step_; }
  const std::vector<AdamWGroup>& groups() const { return groups_; }

  // `<name>.exp_avg`, `<name>.exp_avg_sq` (F32) and `step` (I64 [1]).
  io::StateDict state_dict() const;
  void load_state_dict(const io::StateDict& sd, const std::string& source);
  // Moves the moments (the parameters move with their module); a round trip is exact. With
  // `follow_parameters` each moment goes where its parameter is (a swapped block's: host memory).
  void to(const torch::Device& device, bool follow_parameters = false);
  torch::Tensor exp_avg(const std::string& name) const;
  torch::Tensor exp_avg_sq(const std::string& name) const;

 private:
  std::vector<AdamWGroup> groups_;
  AdamWOptions opts_;
  std::map<std::string, torch::Tensor> m_, v_;
  int64_t step_ = 0;
};

}  // namespace ws::train
