// SPDX-License-Identifier: Apache-2.0
#include "contract/run_layout.h"

#include <cerrno>
#include <cstdlib>

namespace ws::contract {
namespace {

constexpr std::string_view kPrefix = "checkpoint-";

std::optional<int64_t> parse_digits(std::string_view digits) {
  if (digits.empty() || digits.size() > 18) return std::nullopt;
  for (char c : digits)
    if (c < '0' || c > '9') return std::nullopt;
  return static_cast<int64_t>(std::strtoll(std::string(digits).c_str(), nullptr, 10));
}

}  // namespace

bool parse_checkpoint_name(std::string_view name, int64_t* step) {
  if (name.substr(0, kPrefix.size()) != kPrefix) return false;
  auto n = parse_digits(name.substr(kPrefix.size()));
  if (!n) return false;
  if (step) *step = *n;
  return true;
}

std::string checkpoint_name(int64_t step) { return std::string(kPrefix) + std::to_string(step); }
// Appended rather than `"." + name`: GCC 12 warns falsely (-Wrestrict) on that form in C++20.
static std::string hidden_name(int64_t step, std::string_view suffix) {
  std::string s(".");
  s += checkpoint_name(step);
  s += suffix;
  return s;
}
std::string checkpoint_temp_name(int64_t step) { return hidden_name(step, ".tmp"); }
std::string checkpoint_old_name(int64_t step) { return hidden_name(step, ".old"); }

std::optional<int64_t> parse_hidden_checkpoint_name(std::string_view name, std::string_view suffix) {
  if (name.empty() || name[0] != '.' || name.size() <= suffix.size() + 1) return std::nullopt;
  if (name.substr(name.size() - suffix.size()) != suffix) return std::nullopt;
  int64_t step = 0;
  if (!parse_checkpoint_name(name.substr(1, name.size() - 1 - suffix.size()), &step)) return std::nullopt;
  return step;
}

std::string validation_video_name(int64_t step, int64_t index, std::string_view suffix) {
  return std::string(kSampleDir) + "/step" + std::to_string(step) + "_val" + std::to_string(index) + "_" +
         std::string(suffix) + ".mp4";
}

}  // namespace ws::contract
