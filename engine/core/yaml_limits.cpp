// SPDX-License-Identifier: Apache-2.0
#include "core/yaml_limits.h"

#include "core/error.h"

namespace ws {
namespace {

// Returns false as soon as the budget is spent; never expands more than `budget` nodes.
bool walk(const YAML::Node& n, size_t& budget, int depth) {
  if (budget == 0 || depth > kMaxYamlDepth) return false;
  --budget;
  if (n.IsSequence()) {
    for (const auto& item : n)
      if (!walk(item, budget, depth + 1)) return false;
  } else if (n.IsMap()) {
    for (const auto& kv : n)
      if (!walk(kv.first, budget, depth + 1) || !walk(kv.second, budget, depth + 1)) return false;
  }
  return true;
}

}  // namespace

void check_yaml_size(const YAML::Node& node, const std::string& source, size_t max_nodes) {
  size_t budget = max_nodes;
  if (!walk(node, budget, 0))
    throw Error(source + ": YAML too large once its aliases are expanded (more than " + std::to_string(max_nodes) +
                " values or " + std::to_string(kMaxYamlDepth) +
                " levels); write the values out instead of nesting aliases");
}

}  // namespace ws
