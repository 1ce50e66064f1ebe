// SPDX-License-Identifier: Apache-2.0
// Command-line parsing shared by every verb, with the grammar of docs/design/architecture.md:
// `--name value` and `--name=value`, hyphens and underscores equivalent, no prefix
// abbreviations, bare booleans, lists up to the next `--option`, unknown options rejected.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ws::cli {

enum class ArgKind { Flag, Value, List };

struct ArgSpec {
  std::string name;  // canonical, with underscores
  ArgKind kind = ArgKind::Value;
  std::string help;
  std::string metavar;
};

class Args {
 public:
  // `usage` is the first line of --help, e.g. "inspect PATH".
  Args(std::string verb, std::string usage, std::string description = {});
  Args& flag(const std::string& name, const std::string& help);
  Args& value(const std::string& name, const std::string& metavar, const std::string& help);
  Args& list(const std::string& name, const std::string& metavar, const std::string& help);
  Args& positional(const std::string& name, const std::string& help, bool required = true);

  // Parses; returns false when --help was asked (help already printed to stdout).
  // Throws ws::UsageError on unknown options or missing values/positionals.
  bool parse(const std::vector<std::string>& argv);

  bool has(const std::string& name) const;
  std::string str(const std::string& name, const std::string& def = {}) const;
  int64_t integer(const std::string& name, int64_t def) const;
  double real(const std::string& name, double def) const;
  bool boolean(const std::string& name, bool def = false) const;
  std::vector<std::string> strs(const std::string& name) const;
  const std::vector<std::string>& positionals() const { return pos_values_; }
  std::string pos(size_t i) const { return i < pos_values_.size() ? pos_values_[i] : std::string(); }
  std::string help_text() const;

 private:
  std::string verb_, usage_, description_;
  std::vector<ArgSpec> specs_;
  std::vector<std::pair<std::string, std::string>> pos_specs_;
  size_t pos_required_ = 0;
  std::map<std::string, std::vector<std::string>> values_;
  std::vector<std::string> pos_values_;
  const ArgSpec* find(const std::string& name) const;
};

// A finite number for `option` (NaN and ±inf are refused: no option means them); throws ws::UsageError.
double parse_real(const std::string& text, const std::string& option);

// Sizes as "WxH", "W*H" or "H,W" -> {H, W}; throws ws::UsageError.
std::pair<int64_t, int64_t> parse_size(const std::string& text);
// The contract's boolean words (contract/option_values.h); throws ws::UsageError naming `what`.
bool parse_bool(const std::string& text, const std::string& what);

}  // namespace ws::cli
