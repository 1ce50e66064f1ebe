// SPDX-License-Identifier: Apache-2.0
// Loading state dicts into modules: strict errors name the key and change nothing,
// warm start loads what fits and reports the rest, dtypes convert on load, and model
// folders (config.json + weights, single file or shards) round-trip.
#include <QtTest/QtTest>
#include <torch/torch.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "io/safetensors.h"
#include "io/state_dict.h"
#include "io/weights.h"
#include "test_paths.h"
#include "test_util.h"

using ws::io::LoadMode;
using ws::io::StateDict;

using ws::test::error_of;
using ws::test::read_bytes;
using ws::test::write_bytes;

namespace {

struct NetImpl : torch::nn::Module {
  torch::nn::Linear fc1{nullptr}, fc2{nullptr};
  torch::nn::BatchNorm1d bn{nullptr};
  NetImpl() {
    fc1 = register_module("fc1", torch::nn::Linear(4, 3));
    bn = register_module("bn", torch::nn::BatchNorm1d(3));
    fc2 = register_module("fc2", torch::nn::Linear(3, 2));
  }
};
TORCH_MODULE(Net);

// A state dict for Net with values no fresh Net has.
StateDict distinct_state(const Net& net) {
  StateDict sd = ws::io::module_state_dict(*net);
  int i = 0;
  for (auto& kv : sd) kv.second = torch::full_like(kv.second, 10.0 + i++);
  return sd;
}

StateDict snapshot(const Net& net) {
  StateDict sd;
  for (const auto& kv : ws::io::module_state_dict(*net)) sd[kv.first] = kv.second.clone();
  return sd;
}

bool same(const StateDict& a, const StateDict& b) {
  if (a.size() != b.size()) return false;
  for (const auto& [k, v] : a)
    if (!b.count(k) || !torch::equal(v, b.at(k))) return false;
  return true;
}

}  // namespace

class TestStateDict : public QObject {
  Q_OBJECT
  QTemporaryDir tmp_;
  std::string p(const char* name) { return (tmp_.path() + "/" + name).toStdString(); }

 private Q_SLOTS:
  void moduleStateDictNames() {
    Net net;
    StateDict sd = ws::io::module_state_dict(*net);
    for (const char* k : {"fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias", "bn.weight", "bn.bias", "bn.running_mean",
                          "bn.running_var", "bn.num_batches_tracked"})
      QVERIFY2(sd.count(k), k);
    QCOMPARE(sd.size(), size_t(9));
  }

  void strictLoadsEverything() {
    Net src, dst;
    StateDict sd = distinct_state(src);
    auto r = ws::io::load_state_dict(*dst, sd, LoadMode::Strict, "w.safetensors");
    QVERIFY(r.clean());
    QCOMPARE(r.loaded, size_t(9));
    QVERIFY(same(snapshot(dst), sd));
    QVERIFY(dst->fc1->weight.requires_grad());  // still a trainable parameter
  }

  void strictErrorsNameTheKey() {
    Net net;
    StateDict good = distinct_state(net);
    StateDict before = snapshot(net);

    StateDict missing = good;
    missing.erase("fc1.bias");
    QString msg = error_of([&] { ws::io::load_state_dict(*net, missing, LoadMode::Strict, "m.safetensors"); });
    QVERIFY2(msg.contains("missing") && msg.contains("fc1.bias") && msg.contains("m.safetensors"), qPrintable(msg));

    StateDict unexpected = good;
    unexpected["head.extra.weight"] = torch::zeros({2});
    msg = error_of([&] { ws::io::load_state_dict(*net, unexpected, LoadMode::Strict, "u.safetensors"); });
    QVERIFY2(msg.contains("unexpected") && msg.contains("head.extra.weight"), qPrintable(msg));

    StateDict shaped = good;
    shaped["fc2.weight"] = torch::zeros({5, 3});
    msg = error_of([&] { ws::io::load_state_dict(*net, shaped, LoadMode::Strict, "s.safetensors"); });
    QVERIFY2(msg.contains("fc2.weight") && msg.contains("[5,3]") && msg.contains("[2,3]"), qPrintable(msg));

    // A refused strict load changes nothing, not even the keys that did fit.
    QVERIFY(same(snapshot(net), before));
  }

  void warmStartSkipsAndReports() {
    Net net;
    StateDict before = snapshot(net);
    StateDict sd = distinct_state(net);
    sd["fc2.weight"] = torch::zeros({7, 3});  // a new head size
    sd.erase("fc2.bias");
    sd["old.head.weight"] = torch::zeros({1});
    auto r = ws::io::load_state_dict(*net, sd, LoadMode::WarmStart, "warm.safetensors");
    QCOMPARE(r.loaded, size_t(7));
    QCOMPARE(r.missing, std::vector<std::string>({"fc2.bias"}));
    QCOMPARE(r.unexpected, std::vector<std::string>({"old.head.weight"}));
    QCOMPARE(r.mismatched.size(), size_t(1));
    QCOMPARE(r.mismatched[0].key, std::string("fc2.weight"));
    QCOMPARE(r.mismatched[0].expected, std::vector<int64_t>({2, 3}));
    QCOMPARE(r.mismatched[0].got, std::vector<int64_t>({7, 3}));
    QVERIFY(!r.clean());
    auto now = snapshot(net);
    QVERIFY(torch::equal(now["fc1.weight"], sd["fc1.weight"]));      // loaded
    QVERIFY(torch::equal(now["fc2.weight"], before["fc2.weight"]));  // skipped, left as initialised
    QVERIFY(torch::equal(now["fc2.bias"], before["fc2.bias"]));
    QString s = QString::fromStdString(r.summary());
    QVERIFY2(s.contains("loaded 7") && s.contains("fc2.bias") && s.contains("old.head.weight") &&
                 s.contains("fc2.weight: [7,3] vs [2,3]"),
             qPrintable(s));
  }

  void dtypeConversionOnLoad() {
    Net src, dst;
    StateDict sd = distinct_state(src);
    for (auto& kv : sd)
      if (kv.second.is_floating_point()) kv.second = (kv.second + 0.1).to(torch::kBFloat16);
    ws::io::write_safetensors(p("bf16.safetensors"), sd);
    StateDict file = ws::io::read_safetensors(p("bf16.safetensors"));
    QCOMPARE(file.at("fc1.weight").scalar_type(), torch::kBFloat16);
    auto r = ws::io::load_state_dict(*dst, file, LoadMode::Strict, p("bf16.safetensors"));
    QVERIFY(r.clean());
    QCOMPARE(dst->fc1->weight.scalar_type(), torch::kFloat32);
    QVERIFY(torch::equal(dst->fc1->weight, sd.at("fc1.weight").to(torch::kFloat32)));
    QCOMPARE(dst->bn->num_batches_tracked.scalar_type(), torch::kInt64);
  }

  void modelDirRoundTrip() {
    Net net;
    StateDict sd = distinct_state(net);
    nlohmann::json config = {
        {"_class_name", "Tiny"}, {"_diffusers_version", "0.30.0"}, {"in_features", 4}, {"nested", {{"a", {1, 2}}}}};
    std::string dir = p("model");
    ws::io::write_model_dir(dir, config, sd);
    QVERIFY(QFileInfo::exists(QString::fromStdString(dir + "/config.json")));
    QVERIFY(QFileInfo::exists(QString::fromStdString(dir + "/diffusion_pytorch_model.safetensors")));
    QVERIFY(ws::io::detect_weights_format(dir) == ws::io::WeightsFormat::ModelDir);
    auto m = ws::io::read_model_dir(dir);
    QVERIFY(m.config == config);
    QVERIFY(same(m.weights, sd));
    Net back;
    QVERIFY(ws::io::load_state_dict(*back, ws::io::load_weights(dir), LoadMode::Strict, dir).clean());
    QVERIFY(same(snapshot(back), sd));

    // The sharded layout reads the same.
    std::string sharded = p("model_sharded");
    ws::io::write_sharded_safetensors(sharded, "diffusion_pytorch_model", sd, 40);
    std::ofstream(sharded + "/config.json") << config.dump();
    auto ms = ws::io::read_model_dir(sharded);
    QVERIFY(ms.config == config);
    QVERIFY(same(ms.weights, sd));

    // A folder without weights, or with a broken config, is a clear error.
    QDir().mkpath(QString::fromStdString(p("empty_model")));
    std::ofstream(p("empty_model") + "/config.json") << "{}";
    QVERIFY(error_of([&] { ws::io::read_model_dir(p("empty_model")); }).contains("diffusion_pytorch_model"));
    std::ofstream(dir + "/config.json") << "{broken";
    QVERIFY(error_of([&] { ws::io::read_model_dir(dir); }).contains("config.json"));
  }
};

QTEST_APPLESS_MAIN(TestStateDict)
#include "test_state_dict.moc"
