// SPDX-License-Identifier: Apache-2.0
// ZeRO stage 2 for one expert over the data-parallel ranks (docs/design/zero.md): every trainable
// tensor has one owning rank, chosen once by size so the ranks hold about equal shares. After
// each micro-batch the gradients are summed onto their owners (the other ranks drop theirs); the
// owner alone keeps the tensor's AdamW moments and, for weights stored in bf16, its fp32 master
// copy, and applies the update; the updated tensor goes back to every rank. A checkpoint gathers
// the whole state onto rank 0, so it does not depend on the number of ranks.
#pragma once
#include <torch/torch.h>

#include <string>
#include <vector>

#include "io/state_dict.h"
#include "parallel/data_parallel.h"
#include "train/adamw.h"

namespace ws::train {

// Greedy by size (largest first, ties by position): owner[i] of each tensor for `world` ranks.
std::vector<int> zero_owners(const std::vector<torch::Tensor>& params, int world);

class ZeroShard {
 public:
  ZeroShard(parallel::DataParallel& dp, std::vector<std::string> names, std::vector<torch::Tensor> params);

  int rank() const { return dp_.rank(); }
  bool owns(size_t i) const { return owners_[i] == dp_.rank(); }
  // Weights stored in bf16 (mastered[i], the same on every rank) train through their fp32 master
  // copies, which this rank holds for the tensors it owns (masters[i], undefined elsewhere).
  void set_masters(std::vector<torch::Tensor> masters, std::vector<bool> mastered);
  // What the optimizer updates for tensor i: its master copy, or the tensor itself.
  const torch::Tensor& target(size_t i) const { return masters_[i].defined() ? masters_[i] : params_[i]; }
  std::vector<torch::Tensor> owned_targets() const;
  int64_t owned_elements() const;
  int64_t total_elements() const;

  // Collective, after each micro-batch: Σ_ranks of the gradients so far onto their owners (into
  // the fp32 master's gradient for a bf16 weight); every other gradient is dropped.
  void reduce_gradients();
  struct Norms {
    double l2 = 0, max_abs = 0;
  };
  // Collective, after the last micro-batch: the owners' sums divided by P, and the global L2 norm
  // and largest |gradient| of the averaged gradients (one host sync each).
  Norms finish_gradients();
  // The owners' tensors into every rank's (after the owners have updated them).
  void broadcast_weights();
  // Collective (every rank calls it before a checkpoint): the whole optimizer state
  // (`<name>.exp_avg`, ..., `step`) and the fp32 masters by name, on rank 0 only (empty elsewhere).
  void gather_to_root(const AdamW& optimizer, io::StateDict& optimizer_state, io::StateDict& masters) const;

 private:
  parallel::DataParallel& dp_;
  std::vector<std::string> names_;
  std::vector<torch::Tensor> params_;
  std::vector<torch::Tensor> masters_;
  std::vector<bool> mastered_;
  std::vector<int> owners_;
};

}  // namespace ws::train
