// SPDX-License-Identifier: Apache-2.0
// Data parallel over c10d (docs/design/architecture.md "Processes"): the worker reads its place from
// torchrun's or Slurm's environment (parallel/dist_env.h), meets the other ranks
// through a TCPStore and all-reduces over NCCL (a run on GPUs, in a build that has it) or Gloo
// (CPU tensors; CUDA ones are staged through the host). WANSTUDIO_DP_BACKEND=nccl|gloo picks one
// by name, and then makes a group even of one process. Every rank runs the same sampler and
// takes the global batches b with b mod P = r; gradients are averaged before clipping, so every
// rank applies the same update and the weights stay identical; rank 0 alone writes.
#pragma once
#include <torch/torch.h>

#include <memory>
#include <string>
#include <vector>

#include "parallel/dist_env.h"

namespace ws::parallel {

class DataParallel {
 public:
  // Null when WORLD_SIZE is 1 (and no backend is named); ws::Error when this build has no backend
  // for `device` (the run's training device) or the rendezvous fails within `timeout_s`.
  static std::unique_ptr<DataParallel> connect(const DistEnv& env, const torch::Device& device, double timeout_s = 600);
  // The backends this build has ("nccl", "gloo"), and the one a run on `device` uses: `wanted`
  // when named (checked), else NCCL on a GPU where built, else Gloo.
  static std::vector<std::string> backends();
  static std::string choose_backend(const torch::Device& device, const std::string& wanted);
  ~DataParallel();
  DataParallel(const DataParallel&) = delete;
  DataParallel& operator=(const DataParallel&) = delete;

  int rank() const { return env_.rank; }
  int world() const { return env_.world; }
  const std::string& backend() const { return backend_; }

  // grad ← (Σ_ranks grad) / P for every parameter with a gradient, packed into a few flat
  // buffers. Parameters without a gradient on one rank must lack it on all (same model, same
  // route), which the caller guarantees.
  void average_gradients(const std::vector<torch::Tensor>& params);
  // The mean of one number over ranks (the logged loss).
  double mean(double v);
  // Whether any rank says yes (stop requests, the end of the data).
  bool any(bool v);
  // The same for several questions at once, in one all-reduce.
  std::vector<bool> any_of(const std::vector<bool>& v);
  // Rank 0's values into every rank's tensors (the initial weights).
  void broadcast(const std::vector<torch::Tensor>& tensors);

  // ZeRO (train/zero_shard.h): tensor i belongs to rank owners[i]. Σ_ranks into the owner's
  // tensors (the others' are left as they were), and the owner's values into every rank's.
  // Consecutive tensors of one owner and dtype travel as one flat buffer.
  void reduce_to_owners(const std::vector<torch::Tensor>& tensors, const std::vector<int>& owners);
  // The same sums formed in fp32 whatever the tensors' dtype (bf16 gradients), added by each
  // owner into into[i] (an fp32 tensor of tensor i's shape; the others' entries are not read).
  void reduce_to_owners_into(const std::vector<torch::Tensor>& tensors, const std::vector<int>& owners,
                             const std::vector<torch::Tensor>& into);
  // Tensor i from its owner into rank 0's tensors[i] (rank 0 passes a buffer of the right shape
  // and dtype, the owner its values, the other ranks anything); point to point, so no rank but
  // rank 0 ever holds the whole set (the checkpoint of a sharded run).
  void gather_to_root(const std::vector<torch::Tensor>& tensors, const std::vector<int>& owners);
  void broadcast_from_owners(const std::vector<torch::Tensor>& tensors, const std::vector<int>& owners);
  double sum(double v);
  double max(double v);
  void barrier();

 private:
  explicit DataParallel(DistEnv env);
  struct Impl;
  std::unique_ptr<Impl> impl_;
  DistEnv env_;
  std::string backend_;
};

}  // namespace ws::parallel
