// SPDX-License-Identifier: Apache-2.0
// The model configs' typed reads (io/json_fields): absent and null keys keep the default, 4.0 is
// an integer and 4.5 is not, and every message names the file and the key's path — directly and
// through the configs that use them (DiT, VAE, UMT5, upsampler, Qwen2.5-VL).
#include <QtTest/QtTest>

#include <nlohmann/json.hpp>

#include "io/json_fields.h"
#include "models/latent_upsampler.h"
#include "models/qwen_vl_config.h"
#include "models/umt5.h"
#include "models/wan_dit_config.h"
#include "models/wan_vae_config.h"
#include "test_util.h"

using namespace ws;
using json = nlohmann::json;
using ws::test::error_of;

class TestJsonFields : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void typedReads() {
    const json j = json::parse(R"({"n": 4.0, "half": 4.5, "flag": true, "none": null, "ids": [1, 2.0],
      "mixed": [1, "x"], "bools": [true, false], "name": "silu", "nested": {"depth": "deep"},
      "long": [1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1]})");
    const io::JsonFields f(j, "m.json: test config");
    int64_t n = 7, absent = 7, null_kept = 7;
    f.get("n", n);
    f.get("missing", absent);
    f.get("none", null_kept);
    QCOMPARE(n, int64_t{4});
    QCOMPARE(absent, int64_t{7});
    QCOMPARE(null_kept, int64_t{7});
    int64_t half = 0;
    QCOMPARE(error_of([&] { f.get("half", half); }),
             QStringLiteral("m.json: test config: 'half' must be an integer, got 4.5"));
    double d = 0;
    f.get("half", d);
    QCOMPARE(d, 4.5);
    bool flag = false;
    f.get("flag", flag);
    QVERIFY(flag);
    QVERIFY(error_of([&] { f.get("n", flag); }).contains("'n' must be true or false"));
    std::vector<int64_t> ids;
    f.get("ids", ids);
    QCOMPARE(ids, (std::vector<int64_t>{1, 2}));
    QVERIFY(error_of([&] { f.get("mixed", ids); }).contains("'mixed' must be a list of integers"));
    QCOMPARE(ids, (std::vector<int64_t>{1, 2}));  // a failed read leaves the field as it was
    std::vector<bool> bools;
    f.get("bools", bools);
    QCOMPARE(bools, (std::vector<bool>{true, false}));
    QCOMPARE(f.str("name"), std::string("silu"));
    QCOMPARE(f.str("missing"), std::string());
    QVERIFY(error_of([&] { f.require("none"); }).contains("missing required key 'none'"));
    const json* o = f.object("nested");
    QVERIFY(o != nullptr);
    int64_t depth = 0;
    QCOMPARE(error_of([&] { f.child(*o, "nested").get("depth", depth); }),
             QStringLiteral("m.json: test config: 'nested.depth' must be an integer, got \"deep\""));
    QVERIFY(error_of([&] { f.object("name"); }).contains("'name' must be an object"));
    // A long value is cut short in the message: one readable line.
    const QString e = error_of([&] { f.get("long", flag); });
    QVERIFY2(e.size() < 160 && e.contains("..."), qPrintable(e));
  }

  // Each model config reads through them: the file and key named, whole floats taken.
  void modelConfigsNameTheKey() {
    json dit{{"in_dim", 16}, {"dim", 64.0}, {"ffn_dim", 128}, {"out_dim", 16}, {"num_heads", 4}, {"num_layers", 2}};
    QCOMPARE(models::WanConfig::from_json(dit, "dit.json").dim, int64_t{64});
    dit["num_layers"] = 2.5;
    QVERIFY(error_of([&] {
              models::WanConfig::from_json(dit, "dit.json");
            }).startsWith("dit.json: 'num_layers' must be an integer"));
    dit["num_layers"] = nullptr;
    QVERIFY(
        error_of([&] { models::WanConfig::from_json(dit, "dit.json"); }).contains("missing required key 'num_layers'"));

    QVERIFY(error_of([] {
              models::WanVaeConfig::from_json(json{{"dim_mult", "1,2"}}, "vae.json");
            }).startsWith("vae.json: 'dim_mult' must be a list of integers"));
    QVERIFY(error_of([] {
              models::Umt5Config::from_json(json{{"dim", true}}, "t5.json");
            }).startsWith("t5.json: UMT5 config: 'dim' must be an integer"));
    QVERIFY(error_of([] {
              models::LatentUpsamplerConfig::from_json(json{{"spatial_upsample", 1}}, "up.json");
            }).startsWith("up.json: 'spatial_upsample' must be true or false"));
    // A null key keeps the default (the upsampler refused it before these readers).
    const auto up = models::LatentUpsamplerConfig::from_json(json{{"mid_channels", nullptr}}, "up.json");
    QCOMPARE(up.mid_channels, models::LatentUpsamplerConfig().mid_channels);
    QVERIFY(error_of([] {
              models::QwenVlConfig::from_json(json{{"vision_config", {{"depth", "x"}}}}, "qwen.json");
            }).startsWith("qwen.json: Qwen2.5-VL config: 'vision_config.depth' must be an integer"));
  }
};

QTEST_APPLESS_MAIN(TestJsonFields)
#include "test_json_fields.moc"
