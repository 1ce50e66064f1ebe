// SPDX-License-Identifier: Apache-2.0
// The two multistep solvers of the official sampler (docs/design/sampling.md §4, §5), for
// flow-matching velocities: UniPC (bh2, order 2, with the UniC corrector) and DPM++ 2M. Both
// lower the order at the first and the last step; the last step returns the x0-prediction.
// Scalars (λ, h, φ, ρ) are evaluated in double from the float32 sigmas; tensors stay fp32.
#pragma once
#include <torch/torch.h>

#include <deque>
#include <memory>
#include <vector>

#include "sampling/flow_schedule.h"

namespace ws::sampling {

class FlowSolver {
 public:
  virtual ~FlowSolver() = default;
  // Step i: `x` is the latent the model saw at sigmas[i], `v` the guided velocity; returns the
  // latent for step i + 1 (at the end, the result).
  virtual torch::Tensor step(int64_t i, const torch::Tensor& v, const torch::Tensor& x) = 0;
};

std::unique_ptr<FlowSolver> make_solver(Solver solver, std::vector<float> sigmas);

}  // namespace ws::sampling
