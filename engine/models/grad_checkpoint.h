// SPDX-License-Identifier: Apache-2.0
// Activation recomputation ("gradient checkpointing"). LibTorch has no ready helper: the
// wrapped function runs without building a graph in forward, and is run again with grad
// enabled inside backward to get the gradients of its input and of `params`.
// The recompute replays the generator state of the forward, so dropout draws the same masks.
#pragma once
#include <torch/torch.h>

#include <cstdint>
#include <functional>
#include <vector>

namespace ws::models {

using CheckpointBody = std::function<torch::Tensor(const torch::Tensor&)>;

// Returns body(x). When grad mode is on and x or any param requires grad, the activations
// inside `body` are not kept; they are recomputed in backward.
torch::Tensor checkpoint(const CheckpointBody& body, const torch::Tensor& x, const std::vector<torch::Tensor>& params);

// Process-wide counts: bodies run without a graph in forward, and bodies recomputed in
// backward. The training run reports them and tests use them to show the option acts.
int64_t checkpointed_forwards();
int64_t checkpoint_recomputations();
// Whether the calling thread is inside a body's recompute (the backward's order of blocks).
bool checkpoint_recomputing();

// All parameters of a module that require grad (what `checkpoint` must route gradients to).
std::vector<torch::Tensor> trainable_parameters(const torch::nn::Module& m);

}  // namespace ws::models
