// SPDX-License-Identifier: Apache-2.0
// Activation recomputation ("gradient checkpointing"). LibTorch has no ready helper: the
// wrapped function runs without building a graph in forward, and is run again with grad
// enabled inside backward to get the gradients of its input and of `params`.
// The recompute replays the generator state of the forward, so dropout draws the same masks.
// With `offload`, the one tensor kept per call (the body's input) waits in host memory (pinned
// on a GPU) from the forward until its recompute, copied on the compute stream both ways.
#pragma once
#include <torch/torch.h>

#include <cstdint>
#include <functional>
#include <vector>

namespace ws::models {

using CheckpointBody = std::function<torch::Tensor(const torch::Tensor&)>;

struct CheckpointOptions {
  bool offload = false;  // keep the input in host memory until the recompute
};

// Returns body(x). When grad mode is on and x or any param requires grad, the activations
// inside `body` are not kept; they are recomputed in backward.
torch::Tensor checkpoint(const CheckpointBody& body, const torch::Tensor& x, const std::vector<torch::Tensor>& params,
                         const CheckpointOptions& options = {});

// Process-wide counts: bodies run without a graph in forward, and bodies recomputed in
// backward. The training run reports them and tests use them to show the option acts.
int64_t checkpointed_forwards();
int64_t checkpoint_recomputations();
// Inputs sent to host memory and brought back (copies both ways), and their bytes.
struct CheckpointOffloadStats {
  int64_t copies = 0;
  int64_t bytes = 0;
};
CheckpointOffloadStats checkpoint_offload_stats();
// Whether the calling thread is inside a body's recompute (the backward's order of blocks).
bool checkpoint_recomputing();

// All parameters of a module that require grad (what `checkpoint` must route gradients to).
std::vector<torch::Tensor> trainable_parameters(const torch::nn::Module& m);

}  // namespace ws::models
