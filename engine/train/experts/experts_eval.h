// SPDX-License-Identifier: Apache-2.0
// The dual-expert trainer's held-out loss (docs/design/dual-expert-training.md §6): a fixed set of
// eval samples (each row at one of eval_timesteps, with fixed noise), scored through the routed
// experts; the `eval` event and TensorBoard get the mean, the per-expert and per-timestep losses.
#pragma once
#include <torch/torch.h>

#include <functional>
#include <map>
#include <utility>
#include <vector>

#include "data/clip_loader.h"
#include "models/wan_dit.h"
#include "train/experts/expert_step.h"

namespace ws::io {
class TfEventsWriter;
}

namespace ws::train {

struct EvalItem {
  size_t row = 0;      // the row's index in eval_data_meta
  ExpertStepInput in;  // x0, fixed noise, σ, t, context and the image conditioning
};

// Row j gets timestep eval_timesteps[j mod n]; at most `per_t` rows per timestep. Returns the
// kept rows and their timesteps.
std::pair<std::vector<data::TrainRow>, std::vector<double>> select_eval_rows(const std::vector<data::TrainRow>& rows,
                                                                             const std::vector<int64_t>& timesteps,
                                                                             int64_t per_t);

// The weighted loss of every item through the expert its t routes to: t -> (sum, count).
using EvalLosses = std::map<int64_t, std::pair<double, int64_t>>;
EvalLosses routed_eval_losses(const std::vector<EvalItem>& items, models::WanModel& high, models::WanModel& low,
                              int64_t boundary, const std::function<void(bool)>& activate, bool bsmntw);

// The `eval` event of `step` and, with `tb`, its scalars; returns its `loss` (the mean over t).
double report_eval(int64_t step, int64_t boundary, const EvalLosses& losses, size_t samples, io::TfEventsWriter* tb);

}  // namespace ws::train
