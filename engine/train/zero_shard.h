// ZeRO stage 2 for one expert over the data-parallel ranks (docs/design/zero.md): every trainable
// tensor has one owning rank, chosen once by size so the ranks hold about equal shares. Gradients
// are summed onto their owners (the other ranks drop theirs), the owner alone keeps the tensor's
// AdamW moments and applies its update, and the updated tensor goes back to every rank. The
// checkpoint gathers the whole optimizer state, so it does not depend on the number of ranks.
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
  // The tensors this rank updates (its optimizer's only group).
  AdamWGroup owned_group() const;
  std::vector<torch::Tensor> owned_params() const;
  int64_t owned_elements() const;
  int64_t total_elements() const;

  // Σ_ranks / P into the owners' gradients; the other ranks' gradients are dropped. Returns the
  // global L2 norm of the averaged gradients (every rank gets it).
  double reduce_gradients();
  // The owners' updated tensors into every rank's.
  void gather_weights();
  // Every moment from its owner, as one optimizer state dict (`<name>.exp_avg`, ..., `step`).
  // Collective: every rank must call it.
  io::StateDict gather_optimizer_state(const AdamW& optimizer);
  // The largest |gradient| over the ranks' shards (after reduce_gradients).
  double max_abs_gradient();

 private:
  parallel::DataParallel& dp_;
  std::vector<std::string> names_;
  std::vector<torch::Tensor> params_;
  std::vector<int> owners_;
};

}  // namespace ws::train
