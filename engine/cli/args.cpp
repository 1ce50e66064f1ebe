// SPDX-License-Identifier: Apache-2.0
#include "cli/args.h"

#include <cmath>
#include <algorithm>
#include <cstdio>
#include <sstream>
#include <stdexcept>

#include "contract/option_values.h"
#include "core/error.h"

namespace ws::cli {

bool parse_bool(const std::string& text, const std::string& what) {
  if (auto b = contract::parse_bool(text)) return *b;
  throw UsageError(what + ": expected true or false, got '" + text + "'");
}

std::pair<int64_t, int64_t> parse_size(const std::string& text) {
  std::string err;
  if (auto hw = contract::parse_size(text, err)) return *hw;
  throw UsageError(err);
}

ValueRule int_range(double lo, double hi) { return {contract::ValueType::Int, {}, lo, hi}; }
ValueRule real_range(double lo, double hi) { return {contract::ValueType::Float, {}, lo, hi}; }
ValueRule frames_upto(double max) {
  ValueRule r = contract::frames_rule();
  r.max = max;
  return r;
}
ValueRule one_of(std::vector<std::string> choices) {
  ValueRule r;
  r.type = contract::ValueType::Enum;
  r.choices = std::move(choices);
  return r;
}

void print_subverbs_schema(const std::string& verb, const std::vector<std::string>& subverbs) {
  std::printf("%s\n", nlohmann::json{{"verb", verb}, {"subverbs", subverbs}}.dump(2).c_str());
}

Args::Args(std::string verb, std::string usage, std::string description)
    : verb_(std::move(verb)), usage_(std::move(usage)), description_(std::move(description)) {}

Args& Args::flag(const std::string& name, const std::string& help) {
  specs_.push_back({contract::canonical_option(name), ArgKind::Flag, help, "", ValueRule{}});
  return *this;
}
Args& Args::value(const std::string& name, const std::string& metavar, const std::string& help, ValueRule rule) {
  specs_.push_back({contract::canonical_option(name), ArgKind::Value, help, metavar, std::move(rule)});
  return *this;
}
Args& Args::list(const std::string& name, const std::string& metavar, const std::string& help, ValueRule rule) {
  specs_.push_back({contract::canonical_option(name), ArgKind::List, help, metavar, std::move(rule)});
  return *this;
}
Args& Args::positional(const std::string& name, const std::string& help, bool required) {
  pos_specs_.push_back({name, help});
  if (required) pos_required_ = pos_specs_.size();
  return *this;
}

Args& Args::forward_unknown_options() {
  forward_unknown_ = true;
  return *this;
}
Args& Args::forward_from_first_positional() {
  forward_positionals_ = true;
  return *this;
}

const ArgSpec* Args::find(const std::string& name) const {
  for (const auto& s : specs_)
    if (s.name == name) return &s;
  return nullptr;
}

std::string Args::help_text() const {
  std::ostringstream o;
  o << "usage: wanstudio-engine " << usage_ << "\n";
  if (!description_.empty()) o << "\n" << description_ << "\n";
  if (!pos_specs_.empty()) {
    o << "\narguments:\n";
    for (const auto& [n, h] : pos_specs_)
      o << "  " << n << std::string(n.size() < 22 ? 22 - n.size() : 1, ' ') << h << "\n";
  }
  o << "\noptions:\n";
  for (const auto& s : specs_) {
    std::string left =
        "--" + s.name + (s.kind == ArgKind::Flag ? "" : " " + s.metavar + (s.kind == ArgKind::List ? " ..." : ""));
    std::string help = s.help;
    if (s.rule.type == contract::ValueType::Int || s.rule.type == contract::ValueType::Float)
      help += " [" + contract::allowed_value(s.rule) + "]";
    o << "  " << left << std::string(left.size() < 30 ? 30 - left.size() : 1, ' ') << help << "\n";
  }
  o << "  --help" << std::string(24, ' ') << "show this help\n";
  o << "\nOption names may use hyphens or underscores.\n";
  return o.str();
}

nlohmann::json Args::to_json() const {
  using nlohmann::json;
  json opts = json::array();
  for (const auto& s : specs_) {
    json o{{"name", s.name},
           {"type", s.kind == ArgKind::Flag ? "bool" : contract::type_name(s.rule.type)},
           {"list", s.kind == ArgKind::List},
           {"help", s.help},
           {"metavar", s.metavar}};
    if (s.rule.min) o["min"] = *s.rule.min;
    if (s.rule.max) o["max"] = *s.rule.max;
    if (s.rule.multiple_of) o["multiple_of"] = s.rule.multiple_of, o["remainder"] = s.rule.remainder;
    if (!s.rule.choices.empty()) o["choices"] = s.rule.choices;
    opts.push_back(o);
  }
  json pos = json::array();
  for (const auto& [n, h] : pos_specs_) pos.push_back({{"name", n}, {"help", h}});
  return {{"verb", verb_}, {"usage", usage_}, {"options", opts}, {"positionals", pos}};
}

// Every value of a declared rule is checked as it is read, whether or not the verb reads it;
// all bad values are reported together, before a missing positional.
static void check_value(const ArgSpec& spec, const std::string& text, std::vector<std::string>& errors) {
  if (spec.rule.type == contract::ValueType::String) return;
  std::string err;
  if (!contract::parse_value(spec.rule, text, err)) errors.push_back("--" + spec.name + ": " + err);
}

bool Args::parse(const std::vector<std::string>& argv) {
  std::vector<std::string> bad_values;
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    if (a == "--help" || a == "-h") {
      std::fputs(help_text().c_str(), stdout);
      return false;
    }
    if (a == "--print-schema") {
      std::printf("%s\n", to_json().dump(2).c_str());
      return false;
    }
    if (a.size() > 2 && a.compare(0, 2, "--") == 0) {
      std::string name = a.substr(2);
      std::optional<std::string> inline_value;
      auto eq = name.find('=');
      if (eq != std::string::npos) {
        inline_value = name.substr(eq + 1);
        name = name.substr(0, eq);
      }
      name = contract::canonical_option(name);
      const ArgSpec* spec = find(name);
      if (!spec && forward_unknown_) {
        rest_.push_back(a);
        while (!inline_value && i + 1 < argv.size() && argv[i + 1].compare(0, 2, "--") != 0) rest_.push_back(argv[++i]);
        continue;
      }
      if (!spec) throw UsageError(verb_ + ": unknown option --" + name);
      auto& slot = values_[name];
      slot.clear();
      if (spec->kind == ArgKind::Flag) {
        slot.push_back(inline_value ? (parse_bool(*inline_value, "--" + name) ? "true" : "false") : "true");
      } else if (spec->kind == ArgKind::Value) {
        if (inline_value) {
          slot.push_back(*inline_value);
        } else {
          if (i + 1 >= argv.size()) throw UsageError(verb_ + ": --" + name + " needs a value");
          slot.push_back(argv[++i]);
        }
      } else {
        if (inline_value) slot.push_back(*inline_value);
        while (i + 1 < argv.size() && argv[i + 1].compare(0, 2, "--") != 0) slot.push_back(argv[++i]);
      }
      for (const auto& v : slot) check_value(*spec, v, bad_values);
      continue;
    }
    if (forward_positionals_) {
      rest_.assign(argv.begin() + static_cast<long>(i), argv.end());
      break;
    }
    if (pos_values_.size() >= pos_specs_.size()) throw UsageError(verb_ + ": unexpected argument '" + a + "'");
    pos_values_.push_back(a);
  }
  if (!bad_values.empty()) throw UsageErrors(bad_values);
  if (pos_values_.size() < pos_required_)
    throw UsageError(verb_ + ": missing " + pos_specs_[pos_values_.size()].first + " (usage: wanstudio-engine " +
                     usage_ + ")");
  return true;
}

bool Args::has(const std::string& name) const { return values_.count(contract::canonical_option(name)) > 0; }

std::string Args::str(const std::string& name, const std::string& def) const {
  auto it = values_.find(contract::canonical_option(name));
  if (it == values_.end() || it->second.empty()) return def;
  return it->second.front();
}

int64_t Args::integer(const std::string& name, int64_t def) const {
  const ArgSpec* spec = find(contract::canonical_option(name));
  if (!spec || spec->rule.type != contract::ValueType::Int)
    throw std::logic_error(verb_ + ": --" + name + " is read as an integer but not declared with int_range()");
  if (!has(name)) return def;
  std::string v = str(name);
  try {
    size_t used = 0;
    int64_t n = std::stoll(v, &used);
    if (used != v.size()) throw std::invalid_argument(v);
    return n;
  } catch (const std::exception&) {
    throw UsageError("--" + contract::canonical_option(name) + ": expected an integer, got '" + v + "'");
  }
}

double parse_real(const std::string& text, const std::string& option) {
  double d = 0;
  try {
    size_t used = 0;
    d = std::stod(text, &used);
    if (used != text.size()) throw std::invalid_argument(text);
  } catch (const std::exception&) {  // std::out_of_range too: 1e999
    throw UsageError("--" + contract::canonical_option(option) + ": expected a number, got '" + text + "'");
  }
  if (!std::isfinite(d))
    throw UsageError("--" + contract::canonical_option(option) + ": expected a finite number, got '" + text + "'");
  return d;
}

double Args::real(const std::string& name, double def) const {
  const ArgSpec* spec = find(contract::canonical_option(name));
  if (!spec || (spec->rule.type != contract::ValueType::Float && spec->rule.type != contract::ValueType::Int))
    throw std::logic_error(verb_ + ": --" + name + " is read as a number but not declared with real_range()");
  return has(name) ? parse_real(str(name), name) : def;
}

bool Args::boolean(const std::string& name, bool def) const {
  if (!has(name)) return def;
  return parse_bool(str(name), "--" + contract::canonical_option(name));
}

std::vector<std::string> Args::strs(const std::string& name) const {
  auto it = values_.find(contract::canonical_option(name));
  return it == values_.end() ? std::vector<std::string>{} : it->second;
}

}  // namespace ws::cli
