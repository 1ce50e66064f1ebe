// SPDX-License-Identifier: Apache-2.0
// Gradient clipping with VideoX-Fun's decaying threshold and abnormal-norm rule
// (docs/design/upsampler-training.md §9.4, tests/data/train/README.md §A.3).
#pragma once
#include <torch/torch.h>

#include <vector>

namespace ws::train {

struct ClipOptions {
  double max_grad_norm = 0.05;  // <= 0 disables clipping (the norm is still measured)
  double initial_grad_norm_ratio = 5.0;
  double abnormal_norm_clip_start = 1000.0;
};

struct ClipResult {
  double grad_norm = 0;  // global L2 norm before clipping
  double threshold = 0;  // m: the decayed threshold
  double max_norm = 0;   // what was passed to the clip (m, or the abnormal value)
  double coef = 1;       // factor applied to every gradient
  bool abnormal = false;
};

// m = m0 + (m1 − m0)/S · s for s < S, else m1.
// max |g| as a double 0-d tensor, NaN if g holds one: one reading pass (aminmax), no |g| copy.
torch::Tensor max_abs_value(const torch::Tensor& g);

double linear_decay(double m0, double m1, double S, double s);

// Measures the global norm of the parameters' gradients and scales them in place.
ClipResult clip_gradients(const std::vector<torch::Tensor>& params, const ClipOptions& opts, int64_t global_step);
// The same rule with the global norm measured elsewhere (ZeRO: over every rank's shard); scales
// the gradients of `params` (this rank's) in place.
ClipResult clip_gradients_to_norm(const std::vector<torch::Tensor>& params, double total_norm, const ClipOptions& opts,
                                  int64_t global_step);

}  // namespace ws::train
