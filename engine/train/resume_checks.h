// SPDX-License-Identifier: Apache-2.0
// What every trainer checks when it resumes from a checkpoint: the same seed (the random streams
// are keyed by it, so another one would change the run), and which options that change the maths
// differ from the checkpoint's (a warning naming them).
#pragma once
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>

namespace ws::train {

// ws::Error naming `dir` when the seeds differ.
void check_resume_seed(const std::string& dir, int64_t checkpoint_seed, uint64_t seed);
// Warns "resuming with changed options: a, b" when the hashes differ (an empty saved hash: an
// older checkpoint, nothing to compare).
void warn_changed_options(const std::string& saved_sha256, const nlohmann::json& saved, const std::string& sha256,
                          const nlohmann::json& now);

}  // namespace ws::train
