// SPDX-License-Identifier: Apache-2.0
#include "train/nonfinite_guard.h"

#include <cmath>

#include "core/error.h"
#include "core/log.h"

namespace ws::train {

bool NonFiniteGuard::admit(double grad_norm, double loss, int64_t step, const std::string& expert) {
  if (std::isfinite(grad_norm)) {
    in_a_row_ = 0;
    return true;
  }
  ++in_a_row_;
  ++total_;
  ws::log::warn("step {} ({}): the gradients are not finite (norm {}, loss {}); the update is skipped ({} in a row)",
                step, expert, grad_norm, loss, in_a_row_);
  if (in_a_row_ >= limit_)
    throw Error("stopped: " + std::to_string(in_a_row_) + " updates in a row with non-finite gradients at step " +
                std::to_string(step) + " (" + expert +
                "); the last checkpoint is the last good one. Lower the learning rate or check the data "
                "(max_nonfinite_steps)");
  return false;
}

}  // namespace ws::train
