// SPDX-License-Identifier: Apache-2.0
// Updates whose gradients went NaN or infinite are not applied: the optimizer never steps on
// them, each skip is a `warning` log event naming the step and the expert, and after
// `max_nonfinite_steps` skips in a row the run stops with an error, keeping its last good
// checkpoint. The decision reads the global gradient norm, which every data-parallel rank (and
// every ZeRO shard) measures alike, so all ranks skip together.
#pragma once
#include <cstdint>
#include <string>

namespace ws::train {

class NonFiniteGuard {
 public:
  explicit NonFiniteGuard(int64_t limit = 10) : limit_(limit) {}
  // True when the update may go ahead (the norm is finite; the count of skips starts over). Else
  // warns and returns false, or throws ws::Error when this makes `limit` skips in a row.
  bool admit(double grad_norm, double loss, int64_t step, const std::string& expert);
  int64_t skipped_in_a_row() const { return in_a_row_; }
  int64_t skipped_total() const { return total_; }

 private:
  int64_t limit_;
  int64_t in_a_row_ = 0, total_ = 0;
};

}  // namespace ws::train
