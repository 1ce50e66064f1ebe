// SPDX-License-Identifier: Apache-2.0
// keep_best [contract, docs/design/architecture.md §4]: `<output_dir>/best.json` names the
// checkpoint with the best validation or eval figure so far. Pruning by checkpoints_total_limit
// never removes it and does not count it; the studio and users' scripts read it from here.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace ws::contract {

inline constexpr const char* kBestFile = "best.json";

struct BestCheckpoint {
  int64_t step = 0;
  std::string path;    // run-relative: checkpoint-<step>
  std::string metric;  // "val_psnr" (upsampler), "eval_loss" (experts)
  double value = 0;
  bool higher_is_better = true;

  // Whether `v` beats this figure (strictly; a tie keeps the older checkpoint).
  bool beaten_by(double v) const { return higher_is_better ? v > value : v < value; }
  nlohmann::json to_json() const;
  // nullopt for anything that is not a complete record (a foreign or damaged file).
  static std::optional<BestCheckpoint> from_json(const nlohmann::json& j);
};

// Reads `<run_dir>/best.json`; nullopt when absent or unreadable.
std::optional<BestCheckpoint> read_best_checkpoint(const std::string& run_dir);

}  // namespace ws::contract
