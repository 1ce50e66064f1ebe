// SPDX-License-Identifier: Apache-2.0
// Run configs: the option schema, run YAML + flags with precedence flag > YAML > default,
// every problem reported with file, line and key, relative paths, `job`, and run.yaml that
// loads back to the same config.
#include <QtTest/QtTest>

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "io/yaml_config.h"
#include "test_paths.h"

using namespace ws::io;

namespace {

OptionSchema upsampler_like() {
  OptionSchema s("train-upsampler", "upsampler");
  s.group("Data")
      .path("train_data_meta", nullptr, "metadata.json of the dataset")
      .required("train_data_meta")
      .path("train_data_dir", nullptr, "folder the clips are relative to")
      .path("output_dir", "output_dir_wan_upsampler", "run folder")
      .list("validation_paths", OptType::Path, json::array(), "videos rendered at validation");
  s.group("Optimizer")
      .real("learning_rate", 2e-5, "peak learning rate")
      .min("learning_rate", 0)
      .integer("max_train_steps", nullptr, "total optimizer steps")
      .min("max_train_steps", 1)
      .integer("checkpointing_steps", 500, "save every N steps")
      .integer("checkpoints_total_limit", 3, "keep at most N checkpoints")
      .integer("seed", 42, "random seed")
      .boolean("use_ema", false, "keep an EMA of the weights")
      .choice("mixed_precision", {"no", "fp16", "bf16"}, "bf16", "autocast dtype")
      .string("report_to", "tensorboard", "tracker")
      .string("revision", nullptr, "hub revision (no effect)")
      .list("degradation_ops_range", OptType::Int, json::array({1, 4}), "min and max degradation ops")
      .list("trainable_modules", OptType::String, json::array({"."}), "parameter name substrings")
      .list("noise_sigmas", OptType::Float, json::array(), "sigmas")
      .real("noise_shift", nullptr, "flow shift (default from the model YAML)");
  return s;
}

struct Fixture {
  QTemporaryDir tmp;
  std::string dir() const { return tmp.path().toStdString(); }
  std::string write(const std::string& rel, const std::string& text) const {
    std::string path = dir() + "/" + rel;
    QDir().mkpath(QFileInfo(QString::fromStdString(path)).absolutePath());
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }
  std::string cwd() const {
    std::string c = dir() + "/cwd";
    QDir().mkpath(QString::fromStdString(c));
    return c;
  }
};

std::string all_errors(const Config& c) {
  std::string out;
  for (const auto& e : c.errors()) out += e + "\n";
  return out;
}

bool has_error(const Config& c, const std::string& line) {
  return std::find(c.errors().begin(), c.errors().end(), line) != c.errors().end();
}

#define EXPECT_ERROR(cfg, line) \
  QVERIFY2(has_error(cfg, line), ("missing: " + std::string(line) + "\ngot:\n" + all_errors(cfg)).c_str())

}  // namespace

class TestYamlConfig : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void defaultsAndRequired() {
    Fixture f;
    Config c = load_config(upsampler_like(), {}, f.cwd());
    QCOMPARE(c.errors().size(), size_t(1));
    EXPECT_ERROR(c, "required option --train_data_meta is missing");
    QCOMPARE(c.real("learning_rate"), 2e-5);
    QCOMPARE(c.integer("checkpointing_steps"), int64_t(500));
    QVERIFY(!c.opt_integer("max_train_steps"));
    QCOMPARE(c.boolean("use_ema"), false);
    QCOMPARE(c.str("mixed_precision"), std::string("bf16"));
    QCOMPARE(c.integers("degradation_ops_range"), (std::vector<int64_t>{1, 4}));
    QVERIFY(c.strs("validation_paths").empty());
    // A default path resolves like a flag without a run YAML: against the current folder.
    QCOMPARE(c.str("output_dir"), f.cwd() + "/output_dir_wan_upsampler");
    QVERIFY(c.is_default("output_dir"));
    QCOMPARE(c.job(), std::string("upsampler"));
  }

  void yamlValuesAndLines() {
    Fixture f;
    std::string yaml = f.write("runs/run.yaml",
                               "# my run\n"
                               "train_data_meta: data/metadata.json\n"
                               "learning_rate: 1e-4\n"
                               "max-train-steps: 40\n"  // hyphens as in flags
                               "use_ema: yes\n"
                               "checkpointing_steps: \"25\"\n"  // quoted numbers are fine
                               "validation_paths:\n"
                               "  - a.mp4\n"
                               "  - /abs/b.mp4\n"
                               "trainable_modules: blocks\n"  // one item for a list
                               "mixed_precision: no\n"        // an enum value, not a bool
                               "checkpoints_total_limit: null\n"
                               "noise_shift: None\n"
                               "output_dir: ~/wan-runs/x\n");
    qputenv("HOME", "/home/tester");
    Config c = load_config(upsampler_like(), {"--config", yaml}, f.cwd());
    QVERIFY2(c.ok(), all_errors(c).c_str());
    QCOMPARE(c.config_file(), yaml);
    // Relative paths resolve against the YAML's folder, not the current one.
    QCOMPARE(c.str("train_data_meta"), f.dir() + "/runs/data/metadata.json");
    QCOMPARE(c.strs("validation_paths"), (std::vector<std::string>{f.dir() + "/runs/a.mp4", "/abs/b.mp4"}));
    QCOMPARE(c.str("output_dir"), std::string("/home/tester/wan-runs/x"));
    QCOMPARE(c.real("learning_rate"), 1e-4);
    QCOMPARE(c.integer("max_train_steps"), int64_t(40));
    QCOMPARE(c.boolean("use_ema"), true);
    QCOMPARE(c.integer("checkpointing_steps"), int64_t(25));
    QCOMPARE(c.strs("trainable_modules"), (std::vector<std::string>{"blocks"}));
    QCOMPARE(c.str("mixed_precision"), std::string("no"));
    QVERIFY(!c.is_set("checkpoints_total_limit"));  // explicit None overrides the default 3
    QVERIFY(!c.is_set("noise_shift"));
    QCOMPARE(c.origin("max_train_steps").kind, Origin::Yaml);
    QCOMPARE(c.origin("max_train_steps").line, 4);
    QCOMPARE(c.where("learning_rate"), yaml + ":3: key 'learning_rate'");
    QVERIFY(c.is_default("seed"));
    QCOMPARE(c.integer("seed"), int64_t(42));
  }

  void precedenceFlagOverYamlOverDefault() {
    Fixture f;
    std::string yaml = f.write("cfg/run.yaml",
                               "job: upsampler\n"
                               "train_data_meta: meta.json\n"
                               "learning_rate: 1e-4\n"
                               "use_ema: true\n"
                               "checkpointing_steps: 50\n"
                               "validation_paths: [v1.mp4]\n");
    Config c = load_config(upsampler_like(),
                           {"--learning-rate", "3e-4", "--config=" + yaml, "--use_ema=false", "--train_data_meta",
                            "local/meta.json", "--validation_paths", "x.mp4", "y.mp4", "--seed=-1",
                            "--degradation_ops_range", "2", "3", "--max_train_steps", "7"},
                           f.cwd());
    QVERIFY2(c.ok(), all_errors(c).c_str());
    QCOMPARE(c.real("learning_rate"), 3e-4);                  // flag over YAML
    QCOMPARE(c.boolean("use_ema"), false);                    // --flag=false over YAML true
    QCOMPARE(c.integer("checkpointing_steps"), int64_t(50));  // YAML over default
    QCOMPARE(c.integer("checkpoints_total_limit"), int64_t(3));
    QCOMPARE(c.integer("seed"), int64_t(-1));
    QCOMPARE(c.integer("max_train_steps"), int64_t(7));
    // Flag paths resolve against the current folder.
    QCOMPARE(c.str("train_data_meta"), f.cwd() + "/local/meta.json");
    QCOMPARE(c.strs("validation_paths"), (std::vector<std::string>{f.cwd() + "/x.mp4", f.cwd() + "/y.mp4"}));
    QCOMPARE(c.integers("degradation_ops_range"), (std::vector<int64_t>{2, 3}));
    QCOMPARE(c.origin("learning_rate").kind, Origin::Flag);
    QCOMPARE(c.where("learning_rate"), std::string("--learning_rate"));
  }

  void booleanAndListGrammar() {
    Fixture f;
    auto load = [&](std::vector<std::string> args) {
      args.insert(args.begin(), {"--train_data_meta", "m.json"});
      return load_config(upsampler_like(), args, f.cwd());
    };
    QCOMPARE(load({"--use_ema"}).boolean("use_ema"), true);
    QCOMPARE(load({"--use-ema", "--seed", "3"}).boolean("use_ema"), true);
    QCOMPARE(load({"--use_ema", "false"}).boolean("use_ema"), false);
    QCOMPARE(load({"--use_ema=0"}).boolean("use_ema"), false);
    // A list ends at the next --option; an empty list is allowed.
    Config c = load({"--trainable_modules", "--use_ema"});
    QVERIFY2(c.ok(), all_errors(c).c_str());
    QVERIFY(c.strs("trainable_modules").empty());
    QCOMPARE(c.boolean("use_ema"), true);
    c = load({"--noise_sigmas", "0.5", "-1e-3", "2"});
    QCOMPARE(c.reals("noise_sigmas"), (std::vector<double>{0.5, -1e-3, 2}));
    // None from the command line for numbers.
    c = load({"--checkpoints_total_limit", "none"});
    QVERIFY2(c.ok(), all_errors(c).c_str());
    QVERIFY(!c.is_set("checkpoints_total_limit"));
    // Later flags win, as in argparse.
    QCOMPARE(load({"--seed", "1", "--seed", "2"}).integer("seed"), int64_t(2));
    QVERIFY(load({"--help"}).help_requested());
    QVERIFY(load({"--seed", "x", "-h"}).help_requested());
  }

  void everyProblemReported() {
    Fixture f;
    std::string yaml = f.write("bad.yaml",
                               "job: upsampler\n"                  // 1
                               "foo: 1\n"                          // 2
                               "max_train_steps: abc\n"            // 3
                               "learning_rate: 2e-5\n"             // 4
                               "mixed_precision: fp32\n"           // 5
                               "degradation_ops_range:\n"          // 6
                               "  - 1\n"                           // 7
                               "  - x\n"                           // 8
                               "output_dir: {a: 1}\n"              // 9
                               "use_ema: maybe\n"                  // 10
                               "learning_rate: 1e-4\n"             // 11
                               "checkpointing_stepz: 100\n"        // 12
                               "seed: [1, 2]\n"                    // 13
                               "learning_rate_x: -1\n"             // 14
                               "checkpoints_total_limit: 1.5\n");  // 15
    Config c =
        load_config(upsampler_like(),
                    {"--config", yaml, "--max_train", "40", "--checkpointing_steps", "x", "stray", "--learning_rate",
                     "-5", "--validation_paths", "a.mp4", "--degradation_ops_range", "1", "two", "--noise_shift"},
                    f.cwd());
    const std::string F = yaml;
    EXPECT_ERROR(c, F + ":2: unknown key 'foo'");
    EXPECT_ERROR(c, F + ":3: key 'max_train_steps': expected an integer of at least 1, got 'abc'");
    EXPECT_ERROR(c, F + ":5: key 'mixed_precision': expected one of no, fp16, bf16, got 'fp32'");
    EXPECT_ERROR(c, F + ":8: key 'degradation_ops_range': item 2: expected an integer, got 'x'");
    EXPECT_ERROR(c, F + ":9: key 'output_dir': expected a path, got a mapping");
    EXPECT_ERROR(c, F + ":10: key 'use_ema': expected true or false, got 'maybe'");
    EXPECT_ERROR(c, F + ":11: key 'learning_rate' given twice (first on line 4)");
    EXPECT_ERROR(c, F + ":12: unknown key 'checkpointing_stepz' (did you mean 'checkpointing_steps'?)");
    EXPECT_ERROR(c, F + ":13: key 'seed': expected an integer, got a list");
    EXPECT_ERROR(c, F + ":15: key 'checkpoints_total_limit': expected an integer, got '1.5'");
    EXPECT_ERROR(c, F + ": required key 'train_data_meta' is missing (or give --train_data_meta)");
    // Flags: no prefix abbreviations; the unknown option's value is not a second error.
    EXPECT_ERROR(c, "unknown option --max_train (did you mean --max_train_steps?)");
    EXPECT_ERROR(c, "--checkpointing_steps: expected an integer, got 'x'");
    EXPECT_ERROR(c, "unexpected argument 'stray' (options are --name value)");
    EXPECT_ERROR(c, "--learning_rate: must be at least 0, got -5");
    EXPECT_ERROR(c, "--degradation_ops_range: item 2: expected an integer, got 'two'");
    EXPECT_ERROR(c, "--noise_shift needs a value");
    QCOMPARE(c.errors().size(), size_t(18));  // the 17 above + line 14
    QVERIFY(all_errors(c).find(F + ":14: unknown key 'learning_rate_x'") != std::string::npos);
    QVERIFY(!c.ok());
    // Bad values never replace good ones.
    QCOMPARE(c.real("learning_rate"), 2e-5);
    QCOMPARE(c.integer("checkpointing_steps"), int64_t(500));
  }

  void jobKey() {
    Fixture f;
    std::vector<std::string> meta = {"--train_data_meta", "m.json"};
    auto load = [&](const std::string& yaml_text, std::vector<std::string> extra = {}) {
      std::string y = f.write("job.yaml", yaml_text);
      std::vector<std::string> args = {"--config", y};
      args.insert(args.end(), meta.begin(), meta.end());
      args.insert(args.end(), extra.begin(), extra.end());
      return load_config(upsampler_like(), args, f.cwd());
    };
    QVERIFY(load("job: upsampler\n").ok());
    Config c = load("seed: 1\n");  // missing job: taken from the verb
    QVERIFY(c.ok());
    QCOMPARE(c.to_json()["job"], json("upsampler"));
    c = load("seed: 1\njob: experts\n");
    QCOMPARE(c.errors().size(), size_t(1));
    EXPECT_ERROR(
        c, f.dir() + "/job.yaml:2: job 'experts' does not match this verb (train-upsampler runs job 'upsampler')");
    c = load("seed: 1\n", {"--job", "experts"});
    EXPECT_ERROR(c, "--job: job 'experts' does not match this verb (train-upsampler runs job 'upsampler')");
  }

  void badFiles() {
    Fixture f;
    std::vector<std::string> meta = {"--train_data_meta", "m.json"};
    auto load = [&](const std::string& path, std::vector<std::string> extra = {}) {
      std::vector<std::string> args = {"--config", path};
      args.insert(args.end(), meta.begin(), meta.end());
      args.insert(args.end(), extra.begin(), extra.end());
      return load_config(upsampler_like(), args, f.cwd());
    };
    // Syntax error: the line is 1-based, and flag problems are still reported with it.
    std::string y = f.write("syntax.yaml", "seed: 1\nvalidation_paths: [a.mp4\nuse_ema: true\n");
    Config c = load(y, {"--seed", "x"});
    QCOMPARE(c.errors().size(), size_t(2));
    QVERIFY2(c.errors()[0].rfind(y + ":3: invalid YAML: ", 0) == 0, c.errors()[0].c_str());
    EXPECT_ERROR(c, "--seed: expected an integer, got 'x'");

    c = load(f.dir() + "/missing.yaml");
    EXPECT_ERROR(c, f.dir() + "/missing.yaml: no such run config");

    y = f.write("list.yaml", "- seed\n- 1\n");
    c = load(y);
    EXPECT_ERROR(c, y + ":1: expected `option: value` lines, got a list");

    y = f.write("two.yaml", "seed: 1\n---\nseed: 2\n");
    c = load(y);
    EXPECT_ERROR(c, y + ":3: more than one YAML document");

    y = f.write("empty.yaml", "# nothing yet\n");
    c = load(y);
    QVERIFY2(c.ok(), all_errors(c).c_str());

    y = f.write("nullbool.yaml", "use_ema:\n");
    c = load(y);
    EXPECT_ERROR(c, y + ":1: key 'use_ema': expected true or false, got nothing");

    c = load(y, {"--config", "other.yaml"});
    EXPECT_ERROR(c, "--config given twice ('" + y + "' and 'other.yaml')");
  }

  void runYamlRoundTrip() {
    Fixture f;
    std::string yaml = f.write("a/run.yaml",
                               "train_data_meta: meta.json\n"
                               "learning_rate: 0.1\n"
                               "report_to: \"no\"\n"
                               "revision: \"null\"\n"
                               "noise_sigmas: [1e-10, 3, 0.30000000000000004]\n"
                               "validation_paths: [\"clip #1: a b.mp4\", \"ünïcode\\\"q.mp4\"]\n"
                               "trainable_modules: [\"true\", \"1.5\", \"\"]\n");
    Config c =
        load_config(upsampler_like(), {"--config", yaml, "--max_train_steps", "9", "--noise_shift", "5"}, f.cwd());
    QVERIFY2(c.ok(), all_errors(c).c_str());
    std::string text = c.to_yaml();
    // Plain YAML a person can read; floats that PyYAML also reads as floats.
    QVERIFY2(text.find("\njob: upsampler\n") != std::string::npos, text.c_str());
    QVERIFY2(text.find("\nlearning_rate: 0.1\n") != std::string::npos, text.c_str());
    QVERIFY2(text.find("\nnoise_shift: 5.0\n") != std::string::npos, text.c_str());
    QVERIFY2(text.find("\nnoise_sigmas: [1.0e-10, 3.0, 0.30000000000000004]\n") != std::string::npos, text.c_str());
    QVERIFY2(text.find("\nmax_train_steps: 9\n") != std::string::npos, text.c_str());
    QVERIFY2(text.find("\nreport_to: \"no\"\n") != std::string::npos, text.c_str());
    QVERIFY2(text.find("\ncheckpoints_total_limit: 3\n") != std::string::npos, text.c_str());
    // Loaded from another folder, it is the same config: paths are absolute.
    std::string again = f.write("elsewhere/deeper/run.yaml", text);
    Config d = load_config(upsampler_like(), {"--config", again}, f.dir());
    QVERIFY2(d.ok(), all_errors(d).c_str());
    QCOMPARE(QString::fromStdString(d.to_json().dump()), QString::fromStdString(c.to_json().dump()));
    QCOMPARE(d.str("revision"), std::string("null"));
    QCOMPARE(d.strs("trainable_modules"), (std::vector<std::string>{"true", "1.5", ""}));
    QCOMPARE(d.reals("noise_sigmas")[2], 0.30000000000000004);
    // Every option is written, so a later change of a default cannot change the rerun.
    YAML::Node n = YAML::Load(text);
    const OptionSchema schema = upsampler_like();
    QCOMPARE(n.size(), schema.options().size() + 1);
    for (const auto& o : schema.options()) QVERIFY2(n[o.name], o.name.c_str());
    QVERIFY(n["revision"].IsScalar());
    QVERIFY(n["max_train_steps"].IsScalar());
  }

  void yamlFloatFormatting() {
    QCOMPARE(yaml_float(2e-5), std::string("2.0e-05"));
    QCOMPARE(yaml_float(1.0), std::string("1.0"));
    QCOMPARE(yaml_float(-0.5), std::string("-0.5"));
    QCOMPARE(yaml_float(1e20), std::string("1.0e+20"));
    QCOMPARE(yaml_float(0.1), std::string("0.1"));
    for (double v : {1.0 / 3, 6.02214076e23, 1e-300, 123456789.125, 0.30000000000000004})
      QCOMPARE(std::strtod(yaml_float(v).c_str(), nullptr), v);
  }

  void startedEventConfig() {
    Fixture f;
    Config c = load_config(upsampler_like(), {"--train_data_meta", "m.json", "--learning_rate", "1"}, f.cwd());
    json j = c.to_json();
    QCOMPARE(j.size(), upsampler_like().options().size() + 1);
    QCOMPARE(j["job"], json("upsampler"));
    QVERIFY(j["learning_rate"].is_number_float());  // 1 is written as a float for a float option
    QVERIFY(j["seed"].is_number_integer());
    QVERIFY(j["max_train_steps"].is_null());
    QCOMPARE(j["degradation_ops_range"], json::array({1, 4}));
    QCOMPARE(j["train_data_meta"], json(f.cwd() + "/m.json"));
  }

  void schemaJson() {
    json s = upsampler_like().to_json();
    QCOMPARE(s["verb"], json("train-upsampler"));
    QCOMPARE(s["job"], json("upsampler"));
    auto find = [&](const std::string& name) {
      for (const auto& o : s["options"])
        if (o["name"] == name) return o;
      return json();
    };
    json mp = find("mixed_precision");
    QCOMPARE(mp["type"], json("enum"));
    QCOMPARE(mp["choices"], json::array({"no", "fp16", "bf16"}));
    QCOMPARE(mp["default"], json("bf16"));
    QCOMPARE(mp["help"], json("autocast dtype"));
    QCOMPARE(mp["group"], json("Optimizer"));
    json vp = find("validation_paths");
    QCOMPARE(vp["type"], json("path"));
    QCOMPARE(vp["list"], json(true));
    QCOMPARE(vp["default"], json::array());
    json meta = find("train_data_meta");
    QCOMPARE(meta["required"], json(true));
    QCOMPARE(meta["group"], json("Data"));
    QVERIFY(meta["default"].is_null());
    QCOMPARE(find("learning_rate")["min"], json(0.0));
    QCOMPARE(find("learning_rate")["default"], json(2e-5));
    QCOMPARE(find("use_ema")["type"], json("bool"));
    QCOMPARE(find("seed")["type"], json("int"));
    QCOMPARE(s["options"].size(), upsampler_like().options().size());
    std::string help = upsampler_like().help_text();
    QVERIFY(help.find("--learning_rate FLOAT") != std::string::npos);
    QVERIFY(help.find("(default: bf16)") != std::string::npos);
    QVERIFY(help.find("--mixed_precision {no,fp16,bf16}") != std::string::npos);
    QVERIFY(help.find("Optimizer:") != std::string::npos);
  }

  void schemaMistakesAreCaught() {
    OptionSchema s("v", "upsampler");
    s.integer("n", 1, "");
    QVERIFY_THROWS_EXCEPTION(std::logic_error, s.integer("n", 2, ""));
    QVERIFY_THROWS_EXCEPTION(std::logic_error, s.integer("m", "ten", ""));
    QVERIFY_THROWS_EXCEPTION(std::logic_error, s.integer("m2", 1.5, ""));
    QVERIFY_THROWS_EXCEPTION(std::logic_error, s.choice("e", {"a", "b"}, "c", ""));
    QVERIFY_THROWS_EXCEPTION(std::logic_error, s.path("config", nullptr, ""));
    QVERIFY_THROWS_EXCEPTION(std::logic_error, s.list("l", OptType::Int, 3, ""));
    QVERIFY_THROWS_EXCEPTION(std::logic_error, s.required("nope"));
    s.real("r", 1, "");  // an integer default for a float option is fine
    QCOMPARE(s.find("r")->default_value, json(1.0));
  }

  void derivedValuesAndVerbErrors() {
    Fixture f;
    std::string yaml = f.write("r.yaml", "train_data_meta: m.json\nseed: 7\n");
    Config c = load_config(upsampler_like(), {"--config", yaml}, f.cwd());
    QVERIFY(c.ok());
    QVERIFY(c.is_default("noise_shift"));
    c.set("noise_shift", 5, "model config wan.yaml");
    QCOMPARE(c.real("noise_shift"), 5.0);
    QCOMPARE(c.origin("noise_shift").kind, Origin::Derived);
    QVERIFY_THROWS_EXCEPTION(std::logic_error, c.set("noise_shift", "abc"));
    // The verb's own checks land in the same list, located where the value came from.
    c.error("seed", "must be positive");
    c.error("noise_shift", "out of range");
    c.error("train_data_dir", "not a folder");
    QCOMPARE(c.errors().at(0), yaml + ":2: key 'seed': must be positive");
    QCOMPARE(c.errors().at(1), std::string("key 'noise_shift' (from model config wan.yaml): out of range"));
    QCOMPARE(c.errors().at(2), std::string("key 'train_data_dir': not a folder"));
    // A null where a value is needed names the option; a wrong getter is a programming error.
    QVERIFY_THROWS_EXCEPTION(ws::Error, c.integer("max_train_steps"));
    QVERIFY_THROWS_EXCEPTION(std::logic_error, c.integer("learning_rate"));
    QVERIFY_THROWS_EXCEPTION(std::logic_error, c.str("no_such_option"));
  }

  void resolvePaths() {
    qputenv("HOME", "/home/u");
    QCOMPARE(resolve_path("~/x/../y", "/base"), std::string("/home/u/y"));
    QCOMPARE(resolve_path("a/./b", "/base/dir"), std::string("/base/dir/a/b"));
    QCOMPARE(resolve_path("../c", "/base/dir"), std::string("/base/c"));
    QCOMPARE(resolve_path("/abs//p", "/base"), std::string("/abs/p"));
    QCOMPARE(resolve_path("~user/x", "/base"), std::string("/base/~user/x"));
  }
};

QTEST_APPLESS_MAIN(TestYamlConfig)
#include "test_yaml_config.moc"
