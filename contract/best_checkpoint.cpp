// SPDX-License-Identifier: Apache-2.0
#include "contract/best_checkpoint.h"

#include <fstream>

#include "contract/run_layout.h"

namespace ws::contract {

nlohmann::json BestCheckpoint::to_json() const {
  return {{"step", step}, {"path", path}, {"metric", metric}, {"value", value}, {"higher_is_better", higher_is_better}};
}

std::optional<BestCheckpoint> BestCheckpoint::from_json(const nlohmann::json& j) {
  if (!j.is_object()) return std::nullopt;
  BestCheckpoint b;
  const auto step = j.find("step"), path = j.find("path"), metric = j.find("metric"), value = j.find("value"),
             higher = j.find("higher_is_better");
  if (step == j.end() || !step->is_number_integer() || path == j.end() || !path->is_string() || metric == j.end() ||
      !metric->is_string() || value == j.end() || !value->is_number() || higher == j.end() || !higher->is_boolean())
    return std::nullopt;
  b.step = step->get<int64_t>();
  b.path = path->get<std::string>();
  b.metric = metric->get<std::string>();
  b.value = value->get<double>();
  b.higher_is_better = higher->get<bool>();
  int64_t named = -1;
  if (b.step < 0 || !parse_checkpoint_name(b.path, &named) || named != b.step) return std::nullopt;
  return b;
}

std::optional<BestCheckpoint> read_best_checkpoint(const std::string& run_dir) {
  std::ifstream in(run_dir + "/" + kBestFile);
  if (!in) return std::nullopt;
  const nlohmann::json j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  return BestCheckpoint::from_json(j);
}

}  // namespace ws::contract
