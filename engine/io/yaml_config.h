// SPDX-License-Identifier: Apache-2.0
// Run configs [contract, docs/design/architecture.md "Formats" and "Command-line grammar"]: a training
// verb declares its options as a schema; load_config() resolves the run YAML (--config) and the
// command-line flags against it with precedence flag > run YAML > default, and collects every
// problem as a one-line message naming the file, line and key.
//
//   OptionSchema s("train-upsampler", "upsampler");
//   s.group("Optimizer").real("learning_rate", 2e-5, "peak learning rate").min("learning_rate", 0);
//   s.integer("max_train_steps", nullptr, "total optimizer steps (overrides num_train_epochs)");
//   s.path("train_data_meta", nullptr, "metadata.json of the dataset").required("train_data_meta");
//   s.choice("mixed_precision", {"no", "fp16", "bf16"}, "bf16", "...");
//   s.list("validation_paths", OptType::Path, json::array(), "videos rendered at validation");
//   Config cfg = load_config(s, args);
//   if (cfg.help_requested()) { print(s.help_text()); return 0; }
//   if (!cfg.is_set("vae_path") && ...) cfg.error("vae_path", "...");   // the verb's own checks
//   if (!cfg.ok()) { one `error` event per cfg.errors(); exit 1 }
//   run.write_run_yaml(cfg.to_yaml());  // and cfg.to_json() is the `started` event's config
#pragma once
#include <nlohmann/json.hpp>

#include "contract/option_values.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ws::io {

using json = nlohmann::json;

// Value types, bounds, shape rules and the text grammar are the contract's (contract/option_values.h).
using OptType = contract::ValueType;
using contract::type_name;

// One option: its value rule (type, choices, min/max, multiple_of) plus how it is presented.
struct OptionSpec : contract::ValueRule {
  std::string name;    // canonical, with underscores
  bool list = false;   // a YAML sequence / every argument up to the next `--option`
  json default_value;  // null = no value ("None"); lists default to an array
  std::string help;
  std::string group;      // section in --help and the GUI form
  bool required = false;  // null after resolution is an error
};

class OptionSchema {
 public:
  OptionSchema(std::string verb, std::string job);
  // The schema of a training job; its verb comes from the contract's job table (contract/jobs.h).
  static OptionSchema for_job(const std::string& job);

  // A paragraph for --help, after the usage line (what the verb does).
  OptionSchema& about(std::string text);
  // Options added after this belong to `name` (help sections, GUI form groups).
  OptionSchema& group(const std::string& name);
  // Adds a spec; a bad spec (duplicate or reserved name, default of the wrong type, enum
  // default not among the choices) is a programming error: std::logic_error.
  OptionSchema& add(OptionSpec spec);
  OptionSchema& boolean(const std::string& name, bool def, const std::string& help);
  OptionSchema& integer(const std::string& name, json def, const std::string& help);
  OptionSchema& real(const std::string& name, json def, const std::string& help);
  OptionSchema& string(const std::string& name, json def, const std::string& help);
  OptionSchema& path(const std::string& name, json def, const std::string& help);
  OptionSchema& choice(const std::string& name, std::vector<std::string> choices, json def, const std::string& help);
  OptionSchema& list(const std::string& name, OptType item, json def, const std::string& help,
                     std::vector<std::string> choices = {});
  // Modifiers of an option already added.
  OptionSchema& required(const std::string& name);
  OptionSchema& min(const std::string& name, double v);
  OptionSchema& max(const std::string& name, double v);
  // A shape rule: the value is multiple_of·k + remainder (frames 4k+1, pixels a multiple of 16).
  OptionSchema& shape(const std::string& name, const contract::ValueRule& rule);

  const std::string& verb() const { return verb_; }
  const std::string& job() const { return job_; }
  const std::vector<OptionSpec>& options() const { return options_; }
  const OptionSpec* find(const std::string& name) const;  // canonical name

  // {"verb", "job", "options": [{"name", "type", "list", "default", "help", "group",
  // "required", "choices"?, "min"?, "max"?, "multiple_of"?, "remainder"?}]} for `wanstudio-engine schema`.
  json to_json() const;
  std::string help_text() const;

 private:
  OptionSpec& spec(const std::string& name);
  std::string verb_, job_, group_, about_;
  std::vector<OptionSpec> options_;
};

// Where a resolved value came from.
struct Origin {
  enum Kind { Default, Yaml, Flag, Derived } kind = Default;
  std::string file;  // run YAML as given on the command line (Yaml)
  int line = 0;      // 1-based (Yaml)
  std::string note;  // what it was derived from (Derived), e.g. "model config x.yaml"
};

class Config {
 public:
  explicit Config(OptionSchema schema);

  const OptionSchema& schema() const { return schema_; }
  const std::string& job() const { return schema_.job(); }
  const std::string& config_file() const { return config_file_; }  // absolute; "" without --config
  bool help_requested() const { return help_; }

  // Typed access (by canonical name). An undeclared name or the wrong getter for the type is a
  // programming error (std::logic_error); a null value where one is needed is a ws::Error.
  const json& value(const std::string& name) const;
  bool is_set(const std::string& name) const;  // not null
  const Origin& origin(const std::string& name) const;
  bool is_default(const std::string& name) const { return origin(name).kind == Origin::Default; }
  bool boolean(const std::string& name) const;
  int64_t integer(const std::string& name) const;
  double real(const std::string& name) const;
  std::string str(const std::string& name) const;  // string, path (absolute) or enum
  std::optional<int64_t> opt_integer(const std::string& name) const;
  std::optional<double> opt_real(const std::string& name) const;
  std::optional<std::string> opt_str(const std::string& name) const;
  std::vector<std::string> strs(const std::string& name) const;  // [] when null
  std::vector<int64_t> integers(const std::string& name) const;
  std::vector<double> reals(const std::string& name) const;

  // Sets a value the verb derived (e.g. a default taken from the model YAML). Checked like a
  // YAML value; a bad value is a std::logic_error. Relative paths resolve against the cwd.
  void set(const std::string& name, const json& value, const std::string& note = "derived");

  // Problems, one line each: "FILE:LINE: key 'x': message", "--x: message", "key 'x': message".
  void error(const std::string& name, const std::string& message);
  void add_error(const std::string& line) { errors_.push_back(line); }
  const std::vector<std::string>& errors() const { return errors_; }
  bool ok() const { return errors_.empty(); }
  // "FILE:LINE: key 'x'" / "--x" / "key 'x'": where a value came from, for the verb's messages.
  std::string where(const std::string& name) const;

  // {"job": ..., every option: value}; the `started` event's config.
  json to_json() const;
  // run.yaml: `job` then every option with its final value (paths absolute), loadable again
  // with --config. Floats are written so that PyYAML also reads them as floats.
  std::string to_yaml() const;

 private:
  friend class ConfigLoader;
  struct Entry {
    json value;
    Origin origin;
  };
  const Entry& entry(const std::string& name) const;
  const OptionSpec& spec_of(const std::string& name) const;
  OptionSchema schema_;
  std::vector<Entry> entries_;  // parallel to schema_.options()
  std::string config_file_;
  bool help_ = false;
  std::vector<std::string> errors_;
};

// Resolves `args` (the verb's arguments: `--config RUN.yaml` and option flags) against the
// schema. Never throws for bad input: every problem lands in Config::errors(). `cwd` is where
// relative flag paths resolve ("" = the current directory).
Config load_config(const OptionSchema& schema, const std::vector<std::string>& args, const std::string& cwd = {});

// Text -> typed value for one option (a single item for lists); used for YAML scalars and flag
// values alike. On failure returns nullopt and sets `err` ("expected an integer, got 'abc'").
std::optional<json> parse_option_value(const OptionSpec& spec, const std::string& text, std::string& err);
// `text` as an absolute, normalised path: `~/` is $HOME, relative paths resolve against `base`
// ("" = the current directory).
std::string resolve_path(const std::string& text, const std::string& base);
// Formats a double so YAML readers (PyYAML included) read it back as the same float.
std::string yaml_float(double v);

}  // namespace ws::io
