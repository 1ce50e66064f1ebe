// SPDX-License-Identifier: Apache-2.0
// Option schema, value conversion, typed access and the JSON / YAML dumps of a resolved config.
// Loading (run YAML + flags) is in yaml_config_load.cpp.
#include "io/yaml_config.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <stdexcept>

#include "contract/jobs.h"
#include "core/error.h"

namespace ws::io {
namespace {

std::string join(const std::vector<std::string>& v, const char* sep) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) out += (i ? sep : "") + v[i];
  return out;
}

// A JSON value (a default or a verb's derived value) -> one checked item.
std::optional<json> coerce_item(const OptionSpec& s, const json& v, std::string& err) {
  switch (s.type) {
    case OptType::Bool:
      if (v.is_boolean()) return v;
      err = "expected true or false";
      return std::nullopt;
    case OptType::Int:
      if (!v.is_number_integer()) {
        err = "expected an integer";
        return std::nullopt;
      }
      if (!contract::check_number(s, v.get<double>(), err)) return std::nullopt;
      return json(v.get<int64_t>());
    case OptType::Float:
      if (!v.is_number() || !std::isfinite(v.get<double>())) {
        err = "expected a number";
        return std::nullopt;
      }
      if (!contract::check_number(s, v.get<double>(), err)) return std::nullopt;
      return json(v.get<double>());
    default:
      if (!v.is_string()) {
        err = std::string("expected ") + (s.type == OptType::Path ? "a path" : "a string");
        return std::nullopt;
      }
      return parse_option_value(s, v.get<std::string>(), err);
  }
}

std::string yaml_item(const OptionSpec& s, const json& v) {
  if (v.is_null()) return "null";
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  if (s.type == OptType::Float && v.is_number()) return yaml_float(v.get<double>());
  if (v.is_number_integer()) return std::to_string(v.get<int64_t>());
  // A JSON string is a valid YAML double-quoted scalar; quoting keeps "no", "1.0" or "null"
  // strings from being read back as other types by any YAML reader.
  return v.dump(-1, ' ', false, json::error_handler_t::replace);
}

OptionSpec make_spec(const std::string& name, OptType type, bool list, json def, const std::string& help,
                     std::vector<std::string> choices = {}) {
  OptionSpec s;
  s.name = name;
  s.type = type;
  s.list = list;
  s.default_value = std::move(def);
  s.help = help;
  s.choices = std::move(choices);
  return s;
}

std::string pad(const std::string& left) { return left + std::string(left.size() < 38 ? 38 - left.size() : 1, ' '); }

std::string metavar(const OptionSpec& s) {
  std::string m;
  switch (s.type) {
    case OptType::Bool: return "";
    case OptType::Int: m = "INT"; break;
    case OptType::Float: m = "FLOAT"; break;
    case OptType::String: m = "TEXT"; break;
    case OptType::Path: m = "PATH"; break;
    case OptType::Enum: m = "{" + join(s.choices, ",") + "}"; break;
  }
  return s.list ? m + " ..." : m;
}

}  // namespace

std::optional<json> parse_option_value(const OptionSpec& s, const std::string& text, std::string& err) {
  return contract::parse_value(s, text, err);
}

std::string yaml_float(double v) { return contract::yaml_float(v); }

// ---- schema ----

OptionSchema::OptionSchema(std::string verb, std::string job) : verb_(std::move(verb)), job_(std::move(job)) {}

OptionSchema OptionSchema::for_job(const std::string& job) {
  const std::string verb = contract::verb_for_job(job);
  if (verb.empty()) throw std::logic_error("job '" + job + "' is not in the contract's job table");
  return OptionSchema(verb, job);
}

OptionSchema& OptionSchema::about(std::string text) {
  about_ = std::move(text);
  return *this;
}

OptionSchema& OptionSchema::group(const std::string& name) {
  group_ = name;
  return *this;
}

OptionSchema& OptionSchema::add(OptionSpec s) {
  s.name = contract::canonical_option(s.name);
  if (s.name.empty() || s.name == "config" || s.name == "job" || s.name == "help")
    throw std::logic_error("option name '" + s.name + "' is reserved");
  if (find(s.name)) throw std::logic_error("option '" + s.name + "' declared twice");
  if (s.type == OptType::Enum && s.choices.empty())
    throw std::logic_error("enum option '" + s.name + "' has no choices");
  if (s.group.empty()) s.group = group_;
  if (s.list && s.default_value.is_null()) s.default_value = json::array();
  if (!s.default_value.is_null()) {
    std::string err;
    if (s.list && !s.default_value.is_array())
      throw std::logic_error("list option '" + s.name + "': default is not a list");
    json items = s.list ? s.default_value : json::array({s.default_value});
    json fixed = json::array();
    for (const auto& item : items) {
      auto v = coerce_item(s, item, err);
      if (!v) throw std::logic_error("option '" + s.name + "': bad default (" + err + ")");
      fixed.push_back(*v);
    }
    s.default_value = s.list ? fixed : fixed[0];
  } else if (s.type == OptType::Bool) {
    throw std::logic_error("bool option '" + s.name + "' needs a default");
  }
  options_.push_back(std::move(s));
  return *this;
}

OptionSchema& OptionSchema::boolean(const std::string& name, bool def, const std::string& help) {
  return add(make_spec(name, OptType::Bool, false, def, help));
}
OptionSchema& OptionSchema::integer(const std::string& name, json def, const std::string& help) {
  return add(make_spec(name, OptType::Int, false, std::move(def), help));
}
OptionSchema& OptionSchema::real(const std::string& name, json def, const std::string& help) {
  return add(make_spec(name, OptType::Float, false, std::move(def), help));
}
OptionSchema& OptionSchema::string(const std::string& name, json def, const std::string& help) {
  return add(make_spec(name, OptType::String, false, std::move(def), help));
}
OptionSchema& OptionSchema::path(const std::string& name, json def, const std::string& help) {
  return add(make_spec(name, OptType::Path, false, std::move(def), help));
}
OptionSchema& OptionSchema::choice(const std::string& name, std::vector<std::string> choices, json def,
                                   const std::string& help) {
  return add(make_spec(name, OptType::Enum, false, std::move(def), help, std::move(choices)));
}
OptionSchema& OptionSchema::list(const std::string& name, OptType item, json def, const std::string& help,
                                 std::vector<std::string> choices) {
  return add(make_spec(name, item, true, std::move(def), help, std::move(choices)));
}

OptionSpec& OptionSchema::spec(const std::string& name) {
  for (auto& s : options_)
    if (s.name == contract::canonical_option(name)) return s;
  throw std::logic_error("option '" + name + "' is not declared");
}

OptionSchema& OptionSchema::required(const std::string& name) {
  spec(name).required = true;
  return *this;
}

OptionSchema& OptionSchema::min(const std::string& name, double v) {
  spec(name).min = v;
  return *this;
}

OptionSchema& OptionSchema::max(const std::string& name, double v) {
  spec(name).max = v;
  return *this;
}

OptionSchema& OptionSchema::shape(const std::string& name, const contract::ValueRule& rule) {
  OptionSpec& s = spec(name);
  if (s.type != OptType::Int) throw std::logic_error("option '" + name + "': a shape rule needs an integer");
  s.multiple_of = rule.multiple_of;
  s.remainder = rule.remainder;
  if (rule.min && (!s.min || *s.min < *rule.min)) s.min = rule.min;
  return *this;
}

const OptionSpec* OptionSchema::find(const std::string& name) const {
  for (const auto& s : options_)
    if (s.name == name) return &s;
  return nullptr;
}

json OptionSchema::to_json() const {
  json opts = json::array();
  for (const auto& s : options_) {
    json o = {{"name", s.name}, {"type", type_name(s.type)}, {"list", s.list},        {"default", s.default_value},
              {"help", s.help}, {"group", s.group},          {"required", s.required}};
    if (!s.choices.empty()) o["choices"] = s.choices;
    if (s.min) o["min"] = *s.min;
    if (s.max) o["max"] = *s.max;
    if (s.multiple_of > 0) {
      o["multiple_of"] = s.multiple_of;
      o["remainder"] = s.remainder;
    }
    opts.push_back(std::move(o));
  }
  return {{"verb", verb_}, {"job", job_}, {"options", std::move(opts)}};
}

std::string OptionSchema::help_text() const {
  std::ostringstream o;
  o << "usage: wanstudio-engine " << verb_ << " [--config RUN.yaml] [--OPTION VALUE ...]\n\n";
  if (!about_.empty()) o << about_ << "\n\n";
  o << "Every option can also be a key of the run YAML (job: " << job_ << "); a flag overrides the YAML.\n"
    << "Hyphens and underscores are interchangeable. Booleans: --name or --name=false. Lists: --name A B C\n"
    << "(up to the next --option). Relative paths resolve against the YAML's folder (flags: the current folder).\n";
  std::string current = "\x01";
  for (const auto& s : options_) {
    if (s.group != current) {
      current = s.group;
      o << "\n" << (current.empty() ? "options" : current) << ":\n";
    }
    std::string left = "  --" + s.name + (s.type == OptType::Bool ? "" : " " + metavar(s));
    std::string help = s.help;
    if (s.required) help += " (required)";
    else if (!s.default_value.is_null() && !(s.list && s.default_value.empty()))
      help +=
          " (default: " + (s.default_value.is_string() ? s.default_value.get<std::string>() : s.default_value.dump()) +
          ")";
    o << pad(left) << help << "\n";
  }
  o << "\n"
    << pad("  --config RUN.yaml") << "the run config (a flat YAML of these options)\n"
    << pad("  --help") << "show this help\n";
  return o.str();
}

// ---- resolved config ----

Config::Config(OptionSchema schema) : schema_(std::move(schema)) {
  for (const auto& s : schema_.options()) entries_.push_back({s.default_value, {}});
}

const OptionSpec& Config::spec_of(const std::string& name) const {
  const OptionSpec* s = schema_.find(name);
  if (!s) throw std::logic_error(schema_.verb() + ": option '" + name + "' is not declared");
  return *s;
}

const Config::Entry& Config::entry(const std::string& name) const {
  const OptionSpec& s = spec_of(name);
  return entries_[static_cast<size_t>(&s - schema_.options().data())];
}

const json& Config::value(const std::string& name) const { return entry(name).value; }
bool Config::is_set(const std::string& name) const { return !value(name).is_null(); }
const Origin& Config::origin(const std::string& name) const { return entry(name).origin; }

namespace {
[[noreturn]] void wrong_getter(const std::string& name, const char* what) {
  throw std::logic_error("option '" + name + "' is not " + what);
}
const json& need(const Config& c, const std::string& name) {
  const json& v = c.value(name);
  if (v.is_null()) throw Error(c.where(name) + " is not set");
  return v;
}
}  // namespace

bool Config::boolean(const std::string& name) const {
  if (spec_of(name).type != OptType::Bool || spec_of(name).list) wrong_getter(name, "a bool");
  return need(*this, name).get<bool>();
}

int64_t Config::integer(const std::string& name) const {
  if (spec_of(name).type != OptType::Int || spec_of(name).list) wrong_getter(name, "an int");
  return need(*this, name).get<int64_t>();
}

double Config::real(const std::string& name) const {
  if (spec_of(name).type != OptType::Float || spec_of(name).list) wrong_getter(name, "a float");
  return need(*this, name).get<double>();
}

std::string Config::str(const std::string& name) const {
  const auto& s = spec_of(name);
  if (s.list || s.type == OptType::Bool || s.type == OptType::Int || s.type == OptType::Float)
    wrong_getter(name, "a string, path or enum");
  return need(*this, name).get<std::string>();
}

std::optional<int64_t> Config::opt_integer(const std::string& name) const {
  if (!is_set(name)) return std::nullopt;
  return integer(name);
}
std::optional<double> Config::opt_real(const std::string& name) const {
  if (!is_set(name)) return std::nullopt;
  return real(name);
}
std::optional<std::string> Config::opt_str(const std::string& name) const {
  if (!is_set(name)) return std::nullopt;
  return str(name);
}

std::vector<std::string> Config::strs(const std::string& name) const {
  const auto& s = spec_of(name);
  if (!s.list || s.type == OptType::Bool || s.type == OptType::Int || s.type == OptType::Float)
    wrong_getter(name, "a list of strings, paths or enums");
  return value(name).is_null() ? std::vector<std::string>{} : value(name).get<std::vector<std::string>>();
}

std::vector<int64_t> Config::integers(const std::string& name) const {
  if (!spec_of(name).list || spec_of(name).type != OptType::Int) wrong_getter(name, "a list of ints");
  return value(name).is_null() ? std::vector<int64_t>{} : value(name).get<std::vector<int64_t>>();
}

std::vector<double> Config::reals(const std::string& name) const {
  if (!spec_of(name).list || spec_of(name).type != OptType::Float) wrong_getter(name, "a list of floats");
  return value(name).is_null() ? std::vector<double>{} : value(name).get<std::vector<double>>();
}

void Config::set(const std::string& name, const json& v, const std::string& note) {
  const OptionSpec& s = spec_of(name);
  json fixed = nullptr;
  if (!v.is_null()) {
    std::string err;
    json items = s.list ? (v.is_array() ? v : json::array({v})) : json::array({v});
    fixed = json::array();
    for (const auto& item : items) {
      auto c = coerce_item(s, item, err);
      if (!c) throw std::logic_error("option '" + s.name + "': bad derived value " + v.dump() + " (" + err + ")");
      if (s.type == OptType::Path) c = json(resolve_path(c->get<std::string>(), {}));
      fixed.push_back(*c);
    }
    if (!s.list) fixed = fixed[0];
  }
  auto& e = entries_[static_cast<size_t>(&s - schema_.options().data())];
  e.value = std::move(fixed);
  e.origin = {Origin::Derived, {}, 0, note};
}

std::string Config::where(const std::string& name) const {
  const Origin& o = origin(name);
  switch (o.kind) {
    case Origin::Yaml: return o.file + ":" + std::to_string(o.line) + ": key '" + name + "'";
    case Origin::Flag: return "--" + name;
    case Origin::Derived: return "key '" + name + "' (from " + o.note + ")";
    default: return "key '" + name + "'";
  }
}

void Config::error(const std::string& name, const std::string& message) {
  errors_.push_back(where(name) + ": " + message);
}

json Config::to_json() const {
  json out = json::object();
  out["job"] = job();
  for (size_t i = 0; i < entries_.size(); ++i) out[schema_.options()[i].name] = entries_[i].value;
  return out;
}

std::string Config::to_yaml() const {
  std::ostringstream o;
  o << "# Resolved config of a wanstudio-engine " << schema_.verb() << " run: every option with the value it\n"
    << "# ran with (paths absolute). Run it again with --config.\n"
    << "job: " << job() << "\n";
  for (size_t i = 0; i < entries_.size(); ++i) {
    const OptionSpec& s = schema_.options()[i];
    const json& v = entries_[i].value;
    o << s.name << ": ";
    if (s.list && v.is_array()) {
      o << "[";
      for (size_t k = 0; k < v.size(); ++k) o << (k ? ", " : "") << yaml_item(s, v[k]);
      o << "]";
    } else {
      o << yaml_item(s, v);
    }
    o << "\n";
  }
  return o.str();
}

}  // namespace ws::io
