// SPDX-License-Identifier: Apache-2.0
#include "train/lr_schedule.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"

namespace ws::train {

const std::vector<std::string>& lr_schedule_names() {
  static const std::vector<std::string> names{"constant", "constant_with_warmup", "linear",
                                              "cosine",   "cosine_with_restarts", "polynomial"};
  return names;
}

void LrSchedule::validate() const {
  const auto& n = lr_schedule_names();
  if (std::find(n.begin(), n.end(), name) == n.end())
    throw Error("lr_scheduler '" + name +
                "' is not one of constant, constant_with_warmup, linear, cosine, "
                "cosine_with_restarts, polynomial");
  if (name == "polynomial" && !(base_lr > lr_end))
    throw Error("lr_scheduler polynomial needs learning_rate > lr_end (1e-7)");
}

double LrSchedule::factor(int64_t k) const {
  const double W = static_cast<double>(warmup_steps), N = static_cast<double>(training_steps);
  const double kd = static_cast<double>(k);
  if (name == "constant") return 1.0;
  if (k < warmup_steps) return kd / std::max(1.0, W);
  if (name == "constant_with_warmup") return 1.0;
  if (name == "linear") return std::max(0.0, (N - kd) / std::max(1.0, N - W));
  const double p = (kd - W) / std::max(1.0, N - W);
  if (name == "cosine") return std::max(0.0, 0.5 * (1.0 + std::cos(M_PI * 2.0 * 0.5 * p)));
  if (name == "cosine_with_restarts") {
    if (p >= 1.0) return 0.0;
    return std::max(0.0, 0.5 * (1.0 + std::cos(M_PI * std::fmod(1.0 * p, 1.0))));
  }
  if (name == "polynomial") {
    if (kd > N) return lr_end / base_lr;
    double decay = (base_lr - lr_end) * std::pow(1.0 - (kd - W) / (N - W), power) + lr_end;
    return decay / base_lr;
  }
  throw Error("unknown lr_scheduler '" + name + "'");
}

}  // namespace ws::train
