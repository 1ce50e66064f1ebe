// SPDX-License-Identifier: Apache-2.0
// A bound on what walking a parsed YAML document costs. yaml-cpp keeps an alias as a reference to
// its anchor, so ten lines of nested aliases ("billion laughs") parse instantly and then expand
// to 10^9 nodes in any walk that copies or prints the tree. Every reader of a user's YAML checks
// this first; no config of ours has more than a few thousand nodes.
#pragma once
#include <yaml-cpp/yaml.h>

#include <cstddef>
#include <string>

namespace ws {

constexpr size_t kMaxYamlNodes = 200000;
constexpr int kMaxYamlDepth = 64;

// Throws ws::Error ("<source>: YAML too large once its aliases are expanded ...") when a walk of
// `node` would visit more than `max_nodes` nodes (an alias counts each time it is reached) or
// nest deeper than kMaxYamlDepth.
void check_yaml_size(const YAML::Node& node, const std::string& source, size_t max_nodes = kMaxYamlNodes);

}  // namespace ws
