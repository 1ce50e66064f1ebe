// SPDX-License-Identifier: Apache-2.0
#include "train/resume_checks.h"

#include "core/error.h"
#include "core/log.h"

namespace ws::train {

void check_resume_seed(const std::string& dir, int64_t checkpoint_seed, uint64_t seed) {
  if (checkpoint_seed != static_cast<int64_t>(seed))
    throw Error(dir + ": the checkpoint was trained with seed " + std::to_string(checkpoint_seed) +
                ", this run has seed " + std::to_string(seed) +
                " (the random streams would change; use the same seed)");
}

void warn_changed_options(const std::string& saved_sha256, const nlohmann::json& saved, const std::string& sha256,
                          const nlohmann::json& now) {
  if (saved_sha256.empty() || saved_sha256 == sha256) return;
  std::string changed;
  for (auto& [k, v] : now.items())
    if (!saved.contains(k) || saved[k] != v) changed += (changed.empty() ? "" : ", ") + k;
  ws::log::warn("resuming with changed options: {}", changed.empty() ? std::string("(unknown)") : changed);
}

}  // namespace ws::train
