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

#include <nlohmann/json.hpp>

#include "contract/option_values.h"

namespace ws::cli {

using contract::ValueRule;
// Rules for value() and list(): parse() checks every value of the option against its rule, so a
// verb never sees NaN, inf or a number past its declared bounds (docs/design/security.md §3).
ValueRule int_range(double lo, double hi);   // a whole number in [lo, hi]
ValueRule real_range(double lo, double hi);  // a finite number in [lo, hi]
ValueRule one_of(std::vector<std::string> choices);
ValueRule frames_upto(double max);  // a frame count 4k+1 from 1 to max

enum class ArgKind { Flag, Value, List };

struct ArgSpec {
  std::string name;  // canonical, with underscores
  ArgKind kind = ArgKind::Value;
  std::string help;
  std::string metavar;
  ValueRule rule;  // String: any text
};

class Args {
 public:
  // `usage` is the first line of --help, e.g. "inspect PATH".
  Args(std::string verb, std::string usage, std::string description = {});
  Args& flag(const std::string& name, const std::string& help);
  Args& value(const std::string& name, const std::string& metavar, const std::string& help, ValueRule rule = {});
  Args& list(const std::string& name, const std::string& metavar, const std::string& help, ValueRule rule = {});
  Args& positional(const std::string& name, const std::string& help, bool required = true);
  // For verbs that hand arguments on (estimate to a run config, launch to a verb): unknown
  // options, with the values after them, go to rest() instead of being an error; or the first
  // positional and everything after it go there.
  Args& forward_unknown_options();
  Args& forward_from_first_positional();
  const std::vector<std::string>& rest() const { return rest_; }

  // Parses; returns false when --help (or --print-schema, the options as JSON for the `schema`
  // verb) was asked, already printed to stdout. Throws ws::UsageError on unknown options, values
  // outside their rule and missing values/positionals.
  bool parse(const std::vector<std::string>& argv);

  bool has(const std::string& name) const;
  std::string str(const std::string& name, const std::string& def = {}) const;
  // Only for options declared with an Int (integer) or Int/Float (real) rule: a number read from
  // an undeclared option would escape the range checks (std::logic_error).
  int64_t integer(const std::string& name, int64_t def) const;
  double real(const std::string& name, double def) const;
  bool boolean(const std::string& name, bool def = false) const;
  std::vector<std::string> strs(const std::string& name) const;
  const std::vector<std::string>& positionals() const { return pos_values_; }
  std::string pos(size_t i) const { return i < pos_values_.size() ? pos_values_[i] : std::string(); }
  std::string help_text() const;
  // {"verb", "usage", "options": [{"name", "type", "list", "help", "metavar", "min"?, "max"?,
  // "multiple_of"?, "remainder"?, "choices"?}], "positionals": [...]}: what `schema VERB` prints.
  nlohmann::json to_json() const;

 private:
  std::string verb_, usage_, description_;
  std::vector<ArgSpec> specs_;
  std::vector<std::pair<std::string, std::string>> pos_specs_;
  size_t pos_required_ = 0;
  std::map<std::string, std::vector<std::string>> values_;
  std::vector<std::string> pos_values_;
  std::vector<std::string> rest_;
  bool forward_unknown_ = false, forward_positionals_ = false;
  const ArgSpec* find(const std::string& name) const;
};

// A dispatcher's answer to --print-schema: {"verb", "subverbs": [...]}, printed to stdout.
void print_subverbs_schema(const std::string& verb, const std::vector<std::string>& subverbs);

// A finite number for `option` (NaN and ±inf are refused: no option means them); throws ws::UsageError.
double parse_real(const std::string& text, const std::string& option);

// Sizes as "WxH", "W*H" or "H,W" -> {H, W}, each side 1..kMaxSizeSide; throws ws::UsageError.
using contract::kMaxSizeSide;
std::pair<int64_t, int64_t> parse_size(const std::string& text);
// The contract's boolean words (contract/option_values.h); throws ws::UsageError naming `what`.
bool parse_bool(const std::string& text, const std::string& what);

}  // namespace ws::cli
