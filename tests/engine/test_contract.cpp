// SPDX-License-Identifier: Apache-2.0
// The contract between the worker and the studio (contract/): the option value grammar and
// shape rules, the run-folder names, the job table and the event stream's writer and reader.
// The studio's side of the same rules is tested in tests/app (test_config_form, test_run_events).
#include <QtTest/QtTest>

#include <cmath>
#include <limits>
#include <string>

#include "contract/events.h"
#include "contract/jobs.h"
#include "contract/log_lines.h"
#include "contract/option_values.h"
#include "contract/run_layout.h"
#include "io/yaml_config.h"
#include "train/experts/experts_options.h"
#include "train/upsampler/upsampler_options.h"
#include "train/vae/vae_options.h"

using namespace ws;
using contract::json;

namespace {

std::optional<json> parse(contract::ValueType t, const std::string& text, std::string* err = nullptr) {
  contract::ValueRule r;
  r.type = t;
  r.choices = {"no", "bf16"};
  std::string e;
  auto v = contract::parse_value(r, text, e);
  if (err) *err = e;
  return v;
}

}  // namespace

class TestContract : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void booleanWords() {
    for (const char* t : {"1", "true", "True", "YES", "on"})
      QCOMPARE(contract::parse_bool(t), std::optional<bool>(true));
    for (const char* t : {"0", "false", "No", "OFF"}) QCOMPARE(contract::parse_bool(t), std::optional<bool>(false));
    for (const char* t : {"", "2", "maybe", "truee"}) QVERIFY2(!contract::parse_bool(t), t);
  }

  void numbersAreDecimalAndFinite() {
    using T = contract::ValueType;
    QCOMPARE(parse(T::Int, "42")->get<int64_t>(), int64_t(42));
    QCOMPARE(parse(T::Int, "-7")->get<int64_t>(), int64_t(-7));
    for (const char* bad : {"1.0", "0x10", "1e3", "", "12a", "99999999999999999999"})
      QVERIFY2(!parse(T::Int, bad), bad);
    QCOMPARE(parse(T::Float, "2e-05")->get<double>(), 2e-05);
    for (const char* bad : {"nan", "inf", "-inf", "0x1p3", "1.0.0", ""}) QVERIFY2(!parse(T::Float, bad), bad);
    std::string err;
    QVERIFY(!parse(T::Int, "abc", &err));
    QCOMPARE(QString::fromStdString(err), QStringLiteral("expected an integer, got 'abc'"));
  }

  void nullWordsOnlyForNumbers() {
    using T = contract::ValueType;
    for (const char* w : {"None", "none", "null", "~"}) {
      QVERIFY(contract::is_null_word(T::Int, w));
      QVERIFY(contract::is_null_word(T::Float, w));
      QVERIFY(!contract::is_null_word(T::Path, w));  // a folder may be named so
      QVERIFY(!contract::is_null_word(T::String, w));
    }
  }

  void enumsAndPaths() {
    using T = contract::ValueType;
    QCOMPARE(parse(T::Enum, "bf16")->get<std::string>(), std::string("bf16"));
    std::string err;
    QVERIFY(!parse(T::Enum, "fp8", &err));
    QVERIFY(err.find("one of no, bf16") != std::string::npos);
    QVERIFY(!parse(T::Path, ""));
    QCOMPARE(contract::canonical_option("--max-train-steps"), std::string("max_train_steps"));
  }

  void shapeRules() {
    std::string err;
    const auto frames = contract::frames_rule();
    QVERIFY(contract::parse_value(frames, "17", err));
    QVERIFY(!contract::parse_value(frames, "16", err));
    QVERIFY2(err.find("4k+1") != std::string::npos, err.c_str());
    QVERIFY(!contract::parse_value(frames, "0", err));  // 4k+1 starts at 1
    const auto pixels = contract::pixels_rule();
    QVERIFY(contract::parse_value(pixels, "256", err));
    QVERIFY(!contract::parse_value(pixels, "250", err));
    QVERIFY2(err.find("multiple of 16") != std::string::npos, err.c_str());
    QVERIFY(contract::is_4k_plus_1(81) && !contract::is_4k_plus_1(80));
    QVERIFY(contract::is_multiple_of_16(32) && !contract::is_multiple_of_16(0) && !contract::is_multiple_of_16(24));
  }

  // The `schema` JSON carries the rules, so the studio's form checks with the worker's own.
  void schemasPublishTheirShapeRules() {
    auto rule = [](const io::OptionSchema& s, const char* name) {
      const json j = s.to_json();
      for (const auto& o : j["options"])
        if (o["name"] == name)
          return std::make_pair(o.value("multiple_of", int64_t(0)), o.value("remainder", int64_t(-1)));
      return std::make_pair(int64_t(-1), int64_t(-1));
    };
    for (const auto& s : {train::upsampler_option_schema(), train::experts_option_schema(), train::vae_option_schema()})
      QCOMPARE(rule(s, "video_sample_n_frames"), std::make_pair(int64_t(4), int64_t(1)));
    QCOMPARE(rule(train::vae_option_schema(), "video_sample_size"), std::make_pair(int64_t(16), int64_t(0)));
    QCOMPARE(rule(train::vae_option_schema(), "random_crop_size"), std::make_pair(int64_t(16), int64_t(0)));
    // And the config loader applies them.
    io::Config cfg =
        io::load_config(train::vae_option_schema(), {"--video_sample_n_frames", "16", "--video_sample_size", "250"});
    auto said = [&](const char* what) {
      for (const auto& e : cfg.errors())
        if (e.find(what) != std::string::npos) return true;
      return false;
    };
    QVERIFY(said("--video_sample_n_frames: must be 4k+1"));
    QVERIFY(said("--video_sample_size: must be a multiple of 16"));
  }

  void checkpointNames() {
    int64_t step = -1;
    QVERIFY(contract::parse_checkpoint_name("checkpoint-500", &step));
    QCOMPARE(step, int64_t(500));
    for (const char* bad : {"checkpoint-", "checkpoint-final", "checkpoint-5.tmp", ".checkpoint-5.tmp", "checkpoint--1",
                            "checkpoint-1234567890123456789"})
      QVERIFY2(!contract::parse_checkpoint_name(bad), bad);
    QCOMPARE(contract::checkpoint_name(7), std::string("checkpoint-7"));
    QCOMPARE(contract::checkpoint_temp_name(7), std::string(".checkpoint-7.tmp"));
    QCOMPARE(contract::checkpoint_old_name(7), std::string(".checkpoint-7.old"));
    QCOMPARE(contract::parse_hidden_checkpoint_name(".checkpoint-7.old", ".old"), std::optional<int64_t>(7));
    QVERIFY(!contract::parse_hidden_checkpoint_name(".checkpoint-7.old", ".tmp"));
    QVERIFY(!contract::parse_hidden_checkpoint_name("checkpoint-7.old", ".old"));
    QCOMPARE(contract::validation_video_name(20, 1, "upsampled"), std::string("sample/step20_val1_upsampled.mp4"));
  }

  void jobTable() {
    QCOMPARE(contract::verb_for_job("experts"), std::string("train-experts"));
    QCOMPARE(contract::job_for_verb("train-vae"), std::string("vae"));
    QVERIFY(contract::verb_for_job("nope").empty());
    // Each training schema is the job table's verb.
    QCOMPARE(train::upsampler_option_schema().verb(), contract::verb_for_job("upsampler"));
    QCOMPARE(train::experts_option_schema().verb(), contract::verb_for_job("experts"));
    QCOMPARE(train::vae_option_schema().verb(), contract::verb_for_job("vae"));
  }

  void stepEventRoundTrip() {
    contract::StepEvent e;
    e.step = 12;
    e.expert = "high";
    e.expert_step = 7;
    e.loss = 0.25;
    e.lr = 1e-4;
    e.grad_norm = 3.5;
    e.grad_clip = 0.05;
    e.samples_per_s = 2.0;
    e.eta_s = 60;
    e.extra = {{"clips", json::array({{{"row", 3}}})}, {"loss", 99}};  // a typed field wins over an extra one
    const std::string line = contract::format_event(e, 1700000000.5);
    QVERIFY(line.back() == '\n');
    auto parsed = contract::parse_event_line(line);
    QVERIFY(parsed);
    QCOMPARE(parsed->type, std::string("step"));
    QCOMPARE(parsed->time, 1700000000.5);
    const auto back = contract::StepEvent::from_json(parsed->fields);
    QCOMPARE(back.step, int64_t(12));
    QCOMPARE(back.expert, std::string("high"));
    QCOMPARE(back.expert_step, int64_t(7));
    QCOMPARE(back.loss, 0.25);
    QCOMPARE(back.grad_clip, std::optional<double>(0.05));
    QCOMPARE(back.extra["clips"][0]["row"].get<int>(), 3);
    QVERIFY(!back.extra.contains("type") && !back.extra.contains("time") && !back.extra.contains("loss"));
  }

  void readerRules() {
    // A step without expert_step counts it as the step; a non-finite number was written as null.
    contract::StepEvent nan;
    nan.step = 3;
    nan.loss = std::numeric_limits<double>::infinity();
    auto line = contract::format_event(nan, 1.0);
    QVERIFY(line.find("\"loss\":null") != std::string::npos);
    auto ev = contract::StepEvent::from_json(contract::parse_event_line(line)->fields);
    QVERIFY(std::isnan(ev.loss));
    auto old = contract::parse_event_line("{\"type\":\"step\",\"time\":1,\"step\":5,\"loss\":0.5}");
    QCOMPARE(contract::StepEvent::from_json(old->fields).expert_step, int64_t(5));
    // Skipped, never an error: blank, torn, foreign and typeless lines, and absurd nesting.
    // (Plain escaped strings: moc's lexer loses its way in raw strings with unbalanced quotes.)
    for (const std::string bad :
         {"", "   ", "{\"type\":\"step\",\"ti", "[1,2]", "{\"time\":1}", "{\"type\":\"\"}", "not json", "{\"type\":5}"})
      QVERIFY2(!contract::parse_event_line(bad), bad.c_str());
    std::string deep = "{\"type\":\"x\",\"a\":" + std::string(100, '[') + std::string(100, ']') + "}";
    QVERIFY(!contract::parse_event_line(deep));
    QVERIFY(contract::parse_event_line("  {\"type\":\"log\",\"time\":2,\"message\":\"a [ { \\\" \"}\r\n"));
  }

  void stderrLogLines() {
    auto l = contract::parse_stderr_log_line("[12:00:01] [warning] the VAE stays on the CPU");
    QVERIFY(l);
    QCOMPARE(l->level, std::string("warning"));
    QCOMPARE(l->message, std::string("the VAE stays on the CPU"));
    auto coloured = contract::parse_stderr_log_line("[23:59:59] [\x1b[33mwarning\x1b[0m] x [y]");
    QVERIFY(coloured && coloured->level == "warning" && coloured->message == "x [y]");
    for (const char* bad :
         {"error: no VAE", "[1:00:00] [info] x", "[12:00:00] [rank 1] [info] x", "[12:00:00] info x", ""})
      QVERIFY2(!contract::parse_stderr_log_line(bad), bad);
  }

  void supervisorRecords() {
    auto f = contract::parse_event_line(contract::format_event(contract::FinishedEvent{"failed", 4, true}, 2.0));
    const auto fin = contract::FinishedEvent::from_json(f->fields);
    QVERIFY(fin.supervisor);
    QCOMPARE(fin.step, int64_t(4));
    QCOMPARE(fin.status, std::string("failed"));
    auto e = contract::ErrorEvent::from_json(
        contract::parse_event_line(contract::format_event(contract::ErrorEvent{"boom", "", false}, 1))->fields);
    QVERIFY(!e.supervisor);
    QCOMPARE(e.message, std::string("boom"));
  }
};

QTEST_APPLESS_MAIN(TestContract)
#include "test_contract.moc"
