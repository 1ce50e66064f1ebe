// SPDX-License-Identifier: Apache-2.0
#include "cli/parity/parity.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "core/error.h"
#include "core/fs.h"
#include "cli/parity/parity_compare.h"

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

int for_each_case(const std::string& dir, const std::string& what,
                  const std::function<std::string(const std::string& json_path)>& run) {
  if (!fs::is_dir(dir)) throw Error(dir + ": not a folder");
  std::vector<std::string> jsons;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.is_regular_file() && e.path().extension() == ".json") jsons.push_back(e.path().string());
  std::sort(jsons.begin(), jsons.end());
  int cases = 0, failed = 0;
  for (const auto& path : jsons) {
    std::string line;
    try {
      const nlohmann::json j = read_case_json(path);
      if (!j.is_object() || !j.contains("case")) {
        std::fprintf(stderr, "note: %s: no 'case' key, not a case\n", path.c_str());
        continue;
      }
      line = run(path);
    } catch (const std::exception& e) {
      line = "FAIL " + std::filesystem::path(path).stem().string() + " " + e.what();
    }
    ++cases;
    if (line.rfind("PASS", 0) != 0) ++failed;
    std::printf("%s\n", line.c_str());
    std::fflush(stdout);
  }
  if (cases == 0) {
    std::fprintf(stderr, "error: %s: no %s parity case (*.json with a 'case' key)\n", dir.c_str(), what.c_str());
    return 1;
  }
  std::fprintf(stderr, "%d of %d %s cases passed\n", cases - failed, cases, what.c_str());
  return failed ? 1 : 0;
}

}  // namespace ws::cli
