// SPDX-License-Identifier: Apache-2.0
#include "cli/verb.h"

#include <algorithm>

namespace ws::cli {
namespace {
std::vector<Verb>& table() {
  static std::vector<Verb> t;
  return t;
}
}  // namespace

const std::vector<Verb>& verbs() {
  auto& t = table();
  std::sort(t.begin(), t.end(), [](const Verb& a, const Verb& b) { return a.name < b.name; });
  return t;
}

const Verb* find_verb(const std::string& name) {
  for (const auto& v : table())
    if (v.name == name) return &v;
  return nullptr;
}

VerbRegistrar::VerbRegistrar(const char* name, const char* summary, VerbFn fn) {
  table().push_back({name, summary, fn});
}

}  // namespace ws::cli
