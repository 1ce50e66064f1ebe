#include "cli/parity.h"

#include <algorithm>

#include "core/error.h"

namespace ws::cli {
namespace {

std::vector<ParityKind>& table() {
  static std::vector<ParityKind> t;
  return t;
}

}  // namespace

void register_parity_kind(const std::string& name, const std::string& summary, ParityKindFn fn) {
  for (const auto& k : table())
    if (k.name == name) throw Error("parity kind '" + name + "' registered twice");
  table().push_back({name, summary, fn});
}

std::vector<ParityKind> parity_kinds() {
  auto t = table();
  std::sort(t.begin(), t.end(), [](const ParityKind& a, const ParityKind& b) { return a.name < b.name; });
  return t;
}

const ParityKind* find_parity_kind(const std::string& name) {
  for (const auto& k : table())
    if (k.name == name) return &k;
  return nullptr;
}

}  // namespace ws::cli
