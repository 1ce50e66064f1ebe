// SPDX-License-Identifier: Apache-2.0
// Block swap (docs/design/block-swap.md): the last N transformer blocks of a model live in host
// memory (pinned when the model runs on a GPU) and each is copied onto the model's device just
// before it runs, the next one's copy started while the current one computes (on a side stream
// on a GPU). Forward walks the blocks upwards, the checkpointed backward downwards. Parameters
// keep their autograd identity: only their data (and gradient) move, by set_data, so an
// optimizer, a checkpoint's saved parameters and a LoRA adapter see the same tensors.
#pragma once
#include <torch/nn/module.h>
#include <torch/types.h>

#include <cstdint>
#include <memory>
#include <vector>

namespace ws::models {

struct BlockSwapStats {
  int64_t copies = 0;   // blocks copied host → device
  int64_t bytes = 0;    // their bytes
  int64_t returns = 0;  // gradients copied device → host (trainable swapped blocks)
  double wait_s = 0;    // time the device waited for a copy (on the CPU: the copies themselves)
};

class BlockSwap {
 public:
  // `blocks` are all of the model's blocks in order; the last `n` are swapped. Each entry lists
  // the block's module and extra tensors (fp8 codes) that move with it.
  struct Block {
    torch::nn::Module* module = nullptr;
    std::vector<torch::Tensor*> extra;
  };
  BlockSwap(std::vector<Block> blocks, int64_t n);
  ~BlockSwap();
  BlockSwap(const BlockSwap&) = delete;
  BlockSwap& operator=(const BlockSwap&) = delete;

  int64_t count() const { return n_; }
  int64_t first() const { return static_cast<int64_t>(blocks_.size()) - n_; }
  bool swapped(int64_t i) const { return n_ > 0 && i >= first() && i < static_cast<int64_t>(blocks_.size()); }

  // Puts the swapped blocks' tensors in host memory (pinned when `device` is a GPU), the rest of
  // the model being on `device`. Call after anything moved the model.
  void home(const torch::Device& device);
  // Block i is about to run on `device`, going in `direction` (+1 forward, −1 the checkpointed
  // backward): waits for its copy (starting it if none is under way), returns the swapped blocks
  // it no longer needs and starts the copy of the next one.
  void enter(int64_t i, int direction, const torch::Device& device);
  // Every swapped block back in host memory (after a forward without gradient, or a backward).
  void release_all();
  // Settles the device-side wait timings into stats() (synchronises the device).
  const BlockSwapStats& stats();

 private:
  struct Slot;
  struct Resident;
  void fetch(int64_t i, const torch::Device& device);
  void release(int64_t i);
  void gradients_to(Resident& r, const torch::Device& device);
  std::vector<Block> blocks_;
  int64_t n_;
  std::vector<std::unique_ptr<Resident>> resident_;  // per swapped block; null while at home
  BlockSwapStats stats_;
  struct Device;  // the side stream and timing events on a GPU
  std::unique_ptr<Device> gpu_;
};

}  // namespace ws::models
