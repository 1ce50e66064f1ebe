// SPDX-License-Identifier: Apache-2.0
// Learning-rate schedules (diffusers `get_scheduler` names, docs/design/upsampler-training.md §9.2):
// update k+1 (k = completed updates) uses lr · factor(k).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace ws::train {

struct LrSchedule {
  std::string name = "constant_with_warmup";  // constant, constant_with_warmup, linear, cosine,
                                              // cosine_with_restarts, polynomial
  int64_t warmup_steps = 0;
  int64_t training_steps = 1;
  double base_lr = 1e-4;  // polynomial needs it (lr_end is absolute)
  double lr_end = 1e-7;
  double power = 1.0;

  double factor(int64_t k) const;
  double lr(int64_t k, double group_lr) const { return group_lr * factor(k); }
  // Throws ws::Error for an unknown name or an impossible polynomial setting.
  void validate() const;
};

const std::vector<std::string>& lr_schedule_names();

}  // namespace ws::train
