// SPDX-License-Identifier: Apache-2.0
// Resolving a run config: run YAML (--config) and command-line flags over the schema's
// defaults, collecting every problem instead of stopping at the first.
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>

#include "core/error.h"
#include "core/fs.h"
#include "core/yaml_limits.h"
#include "io/yaml_config.h"

namespace ws::io {
namespace stdfs = std::filesystem;

namespace {

// "None" is how Python users write "no value"; only numbers take it (a path could be named so).
bool null_word(const OptionSpec& s, const std::string& t) { return contract::is_null_word(s.type, t); }

std::string expected(const OptionSpec& s) { return contract::expected_value(s); }

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] != b[j - 1])});
      diag = up;
    }
  }
  return row[b.size()];
}

// " (did you mean 'x'?)" for a near miss or an abbreviation (which is never accepted).
std::string suggestion(const OptionSchema& schema, const std::string& name, bool flag) {
  const OptionSpec* best = nullptr;
  size_t best_d = name.size() < 5 ? 1 : 2;
  for (const auto& s : schema.options()) {
    if (s.name.rfind(name, 0) == 0 && name.size() >= 3) {
      best = &s;
      break;
    }
    size_t d = edit_distance(name, s.name);
    if (d <= best_d) best = &s, best_d = d;
  }
  if (!best) return {};
  return flag ? " (did you mean --" + best->name + "?)" : " (did you mean '" + best->name + "'?)";
}

int line_of(const YAML::Node& n) { return n.Mark().line + 1; }

struct Flag {
  std::string name;
  std::vector<std::string> values;
  bool has_value = false;  // `--name=value` or a value argument given
};

}  // namespace

std::string resolve_path(const std::string& text, const std::string& base) {
  std::string t = text;
  if (t == "~" || t.rfind("~/", 0) == 0) {
    const char* home = std::getenv("HOME");
    if (home && *home) t = std::string(home) + t.substr(1);
  }
  stdfs::path p(t);
  if (p.is_relative()) {
    std::error_code ec;
    stdfs::path b = base.empty() ? stdfs::current_path(ec) : stdfs::path(base);
    p = b / p;
  }
  return p.lexically_normal().string();
}

class ConfigLoader {
 public:
  ConfigLoader(const OptionSchema& schema, const std::string& cwd)
      : cfg_(schema), cwd_(resolve_path(cwd.empty() ? "." : cwd, {})) {}

  Config run(const std::vector<std::string>& args) {
    parse_flags(args);
    std::string base = cwd_;
    if (config_arg_) {
      cfg_.config_file_ = resolve_path(*config_arg_, cwd_);
      base = fs::dirname(cfg_.config_file_);
    }
    // Default paths resolve like the YAML's own values: a run file without output_dir keeps
    // its outputs beside itself.
    for (size_t i = 0; i < cfg_.entries_.size(); ++i) resolve_paths(spec(i), cfg_.entries_[i].value, base);
    if (config_arg_) load_yaml(*config_arg_, base);
    for (const auto& f : flags_) apply_flag(f);
    cfg_.errors_.insert(cfg_.errors_.end(), flag_errors_.begin(), flag_errors_.end());
    for (size_t i = 0; i < cfg_.entries_.size(); ++i) {
      if (!spec(i).required || !cfg_.entries_[i].value.is_null()) continue;
      const std::string& n = spec(i).name;
      cfg_.errors_.push_back(config_arg_ ? *config_arg_ + ": required key '" + n + "' is missing (or give --" + n + ")"
                                         : "required option --" + n + " is missing");
    }
    return std::move(cfg_);
  }

 private:
  const OptionSpec& spec(size_t i) const { return cfg_.schema_.options()[i]; }
  size_t index(const OptionSpec* s) const { return static_cast<size_t>(s - cfg_.schema_.options().data()); }

  static void resolve_paths(const OptionSpec& s, json& v, const std::string& base) {
    if (s.type != OptType::Path || v.is_null()) return;
    if (v.is_array())
      for (auto& item : v) item = resolve_path(item.get<std::string>(), base);
    else v = resolve_path(v.get<std::string>(), base);
  }

  void parse_flags(const std::vector<std::string>& args) {
    auto is_option = [](const std::string& a) { return a.size() > 2 && a.compare(0, 2, "--") == 0; };
    for (size_t i = 0; i < args.size(); ++i) {
      const std::string& a = args[i];
      if (a == "--help" || a == "-h") {
        cfg_.help_ = true;
        continue;
      }
      if (!is_option(a)) {
        flag_errors_.push_back("unexpected argument '" + a + "' (options are --name value)");
        continue;
      }
      Flag f;
      std::string name = a.substr(2);
      if (auto eq = name.find('='); eq != std::string::npos) {
        f.values.push_back(name.substr(eq + 1));
        f.has_value = true;
        name = name.substr(0, eq);
      }
      f.name = contract::canonical_option(name);
      auto take_value = [&]() -> bool {
        if (f.has_value) return true;
        if (i + 1 < args.size() && !is_option(args[i + 1])) {
          f.values.push_back(args[++i]);
          return f.has_value = true;
        }
        flag_errors_.push_back("--" + f.name + " needs a value");
        return false;
      };
      if (f.name == "config") {
        if (!take_value()) continue;
        if (config_arg_)
          flag_errors_.push_back("--config given twice ('" + *config_arg_ + "' and '" + f.values[0] + "')");
        else config_arg_ = f.values[0];
        continue;
      }
      if (f.name == "job") {
        if (take_value()) check_job(f.values[0], "--job");
        continue;
      }
      const OptionSpec* s = cfg_.schema_.find(f.name);
      if (!s) {
        flag_errors_.push_back("unknown option --" + f.name + suggestion(cfg_.schema_, f.name, true));
        while (i + 1 < args.size() && !is_option(args[i + 1])) ++i;  // its values, not stray arguments
        continue;
      }
      if (s->type == OptType::Bool && !s->list) {
        // Bare means true; `--name false` is taken too, as nothing else could follow a flag.
        std::string err;
        if (!f.has_value && i + 1 < args.size() && parse_option_value(*s, args[i + 1], err)) {
          f.values.push_back(args[++i]);
          f.has_value = true;
        }
      } else if (s->list) {
        while (i + 1 < args.size() && !is_option(args[i + 1])) f.values.push_back(args[++i]);
        f.has_value = true;
      } else if (!take_value()) {
        continue;
      }
      flags_.push_back(std::move(f));
    }
  }

  void check_job(const std::string& job, const std::string& where) {
    if (job == cfg_.schema_.job()) return;
    std::string msg = where + ": job '" + job + "' does not match this verb (" + cfg_.schema_.verb() + " runs job '" +
                      cfg_.schema_.job() + "')";
    (where == "--job" ? flag_errors_ : cfg_.errors_).push_back(msg);
  }

  void apply_flag(const Flag& f) {
    const OptionSpec* s = cfg_.schema_.find(f.name);
    auto& e = cfg_.entries_[index(s)];
    std::string err;
    json v;
    if (s->type == OptType::Bool && !s->list && f.values.empty()) {
      v = true;
    } else if (s->list) {
      v = json::array();
      for (size_t k = 0; k < f.values.size(); ++k) {
        auto item = parse_option_value(*s, f.values[k], err);
        if (!item) {
          flag_errors_.push_back("--" + s->name + ": item " + std::to_string(k + 1) + ": " + err);
          return;
        }
        v.push_back(*item);
      }
    } else if (null_word(*s, f.values[0]) || (s->type == OptType::Path && f.values[0].empty())) {
      v = nullptr;
    } else {
      auto item = parse_option_value(*s, f.values[0], err);
      if (!item) {
        flag_errors_.push_back("--" + s->name + ": " + err);
        return;
      }
      v = *item;
    }
    resolve_paths(*s, v, cwd_);
    e.value = std::move(v);
    e.origin = {Origin::Flag, {}, 0, {}};
  }

  void load_yaml(const std::string& file, const std::string& base) {
    auto& errors = cfg_.errors_;
    std::string text;
    const std::string abs = resolve_path(file, cwd_);
    if (!fs::exists(abs)) {
      errors.push_back(file + ": no such run config");
      return;
    }
    try {
      text = fs::read_file(abs);
    } catch (const Error& e) {
      errors.push_back(e.what());
      return;
    }
    std::vector<YAML::Node> docs;
    try {
      docs = YAML::LoadAll(text);
    } catch (const YAML::Exception& e) {
      std::string at = e.mark.is_null() ? file : file + ":" + std::to_string(e.mark.line + 1);
      errors.push_back(at + ": invalid YAML: " + e.msg);
      return;
    }
    if (docs.empty() || docs[0].IsNull()) return;  // an empty file: defaults and flags only
    try {
      check_yaml_size(docs[0], file);
    } catch (const Error& e) {
      errors.push_back(e.what());
      return;
    }
    if (docs.size() > 1)
      errors.push_back(file + ":" + std::to_string(line_of(docs[1])) + ": more than one YAML document");
    const YAML::Node& root = docs[0];
    if (!root.IsMap()) {
      errors.push_back(file + ":" + std::to_string(line_of(root)) + ": expected `option: value` lines, got " +
                       (root.IsSequence() ? "a list" : "a single value"));
      return;
    }
    std::map<std::string, int> seen;
    for (auto it = root.begin(); it != root.end(); ++it) {
      // Copies: yaml-cpp's operator-> returns a temporary proxy.
      const YAML::Node key = it->first;
      const YAML::Node val = it->second;
      const std::string at = file + ":" + std::to_string(line_of(key)) + ": ";
      if (!key.IsScalar()) {
        errors.push_back(at + "keys must be option names");
        continue;
      }
      std::string raw = key.Scalar();
      std::string name = raw;
      std::replace(name.begin(), name.end(), '-', '_');
      if (auto [pos, fresh] = seen.emplace(name, line_of(key)); !fresh) {
        errors.push_back(at + "key '" + raw + "' given twice (first on line " + std::to_string(pos->second) + ")");
        continue;
      }
      if (name == "job") {
        if (val.IsNull()) continue;  // as if missing: taken from the verb
        if (!val.IsScalar()) errors.push_back(at + "key 'job': expected upsampler or experts");
        else check_job(val.Scalar(), file + ":" + std::to_string(line_of(key)));
        continue;
      }
      const OptionSpec* s = cfg_.schema_.find(name);
      if (!s) {
        errors.push_back(at + "unknown key '" + raw + "'" + suggestion(cfg_.schema_, name, false));
        continue;
      }
      apply_yaml(*s, key, val, file, base);
    }
  }

  void apply_yaml(const OptionSpec& s, const YAML::Node& key, const YAML::Node& val, const std::string& file,
                  const std::string& base) {
    auto& errors = cfg_.errors_;
    auto prefix = [&](const YAML::Node& n) {
      int line = n.IsNull() || n.Mark().is_null() ? line_of(key) : line_of(n);
      return file + ":" + std::to_string(line) + ": key '" + s.name + "': ";
    };
    std::string err;
    json v;
    if (val.IsNull()) {
      if (s.type == OptType::Bool && !s.list) {
        errors.push_back(prefix(key) + "expected true or false, got nothing");
        return;
      }
      v = nullptr;
    } else if (val.IsMap()) {
      errors.push_back(prefix(val) + "expected " + (s.list ? "a list" : expected(s)) + ", got a mapping");
      return;
    } else if (val.IsSequence()) {
      if (!s.list) {
        errors.push_back(prefix(val) + "expected " + expected(s) + ", got a list");
        return;
      }
      v = json::array();
      bool bad = false;
      size_t k = 0;
      for (const auto& item : val) {
        ++k;
        std::optional<json> parsed;
        if (!item.IsScalar())
          err = "expected " + expected(s) + ", got " + (item.IsNull() ? "nothing" : "a nested value");
        else parsed = parse_option_value(s, item.Scalar(), err);
        if (!parsed) {
          errors.push_back(prefix(item) + "item " + std::to_string(k) + ": " + err);
          bad = true;
          continue;
        }
        v.push_back(*parsed);
      }
      if (bad) return;
    } else {
      const std::string& text = val.Scalar();
      if (null_word(s, text)) {
        v = nullptr;
      } else {
        auto parsed = parse_option_value(s, text, err);
        if (!parsed) {
          errors.push_back(prefix(val) + err);
          return;
        }
        v = s.list ? json::array({*parsed}) : *parsed;  // `validation_paths: a.mp4` is a list of one
      }
    }
    resolve_paths(s, v, base);
    auto& e = cfg_.entries_[index(&s)];
    e.value = std::move(v);
    e.origin = {Origin::Yaml, file, line_of(key), {}};
  }

  Config cfg_;
  std::string cwd_;
  std::vector<Flag> flags_;
  std::optional<std::string> config_arg_;
  std::vector<std::string> flag_errors_;
};

Config load_config(const OptionSchema& schema, const std::vector<std::string>& args, const std::string& cwd) {
  return ConfigLoader(schema, cwd).run(args);
}

}  // namespace ws::io
