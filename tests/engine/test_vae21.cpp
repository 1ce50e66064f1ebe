// SPDX-License-Identifier: Apache-2.0
// Wan2.1 VAE (the A14B experts' 16-channel VAE) through the one WanVae: parity with the official
// code on the tiny fixtures, the released structure and parameter count, detection of the type
// from the weights (and the errors when a declared type disagrees), diffusers names, chunked vs
// whole-sequence streaming and causality.
#include <QtTest/QtTest>
#include <ATen/Parallel.h>
#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include <fstream>
#include <map>

#include "core/error.h"
#include "io/safetensors.h"
#include "io/weights.h"
#include "models/wan_vae.h"
#include "models/wan_vae_weights.h"
#include "cli/parity/parity_vae.h"
#include "test_paths.h"
#include "test_util.h"
#include "vae_test_util.h"

using ws::models::VaeType;
using ws::models::WanVae;
using ws::models::WanVaeConfig;
using ws::test::error_of;
using ws::test::max_abs;
using ws::test::shape;
using ws::test::tolerance;

namespace {

const std::string kDir = std::string(WS_TEST_DATA) + "/vae21";
const std::string kWeights = kDir + "/vae21_dev_weights.safetensors";
const std::string kPth = kDir + "/vae21_dev_weights.pth";
const std::string kCaseA = kDir + "/vae21_dev_a_t5_24x40";
const std::string kCaseB = kDir + "/vae21_dev_b_t9_32x16";
const std::string kWan22Weights = std::string(WS_TEST_DATA) + "/vae/vae_dev_weights.safetensors";

// diffusers' convert_vae names for official keys (docs/design/wan21-vae.md §3.3), written
// forwards here so the loader's backwards mapping is checked against an independent table.
std::string to_diffusers(const std::string& k) {
  static const std::vector<std::pair<std::string, std::string>> kBlock{{"residual.0.", "norm1."},
                                                                       {"residual.2.", "conv1."},
                                                                       {"residual.3.", "norm2."},
                                                                       {"residual.6.", "conv2."},
                                                                       {"shortcut.", "conv_shortcut."}};
  auto block = [&](std::string tail) {
    for (const auto& [a, b] : kBlock)
      if (tail.rfind(a, 0) == 0) return b + tail.substr(a.size());
    return tail;
  };
  auto after = [&](const std::string& prefix) { return k.substr(prefix.size()); };
  for (const char* side : {"encoder", "decoder"}) {
    const std::string s = side;
    if (k.rfind(s + ".conv1.", 0) == 0) return s + ".conv_in." + after(s + ".conv1.");
    if (k.rfind(s + ".head.0.", 0) == 0) return s + ".norm_out." + after(s + ".head.0.");
    if (k.rfind(s + ".head.2.", 0) == 0) return s + ".conv_out." + after(s + ".head.2.");
    if (k.rfind(s + ".middle.1.", 0) == 0) return s + ".mid_block.attentions.0." + after(s + ".middle.1.");
    if (k.rfind(s + ".middle.0.", 0) == 0) return s + ".mid_block.resnets.0." + block(after(s + ".middle.0."));
    if (k.rfind(s + ".middle.2.", 0) == 0) return s + ".mid_block.resnets.1." + block(after(s + ".middle.2."));
  }
  if (k.rfind("encoder.downsamples.", 0) == 0) {
    auto rest = after("encoder.downsamples.");
    auto dot = rest.find('.');
    return "encoder.down_blocks." + rest.substr(0, dot + 1) + block(rest.substr(dot + 1));
  }
  if (k.rfind("decoder.upsamples.", 0) == 0) {
    auto rest = after("decoder.upsamples.");
    auto dot = rest.find('.');
    const int i = std::stoi(rest.substr(0, dot));
    const std::string tail = rest.substr(dot + 1);
    if (i % 4 == 3) return "decoder.up_blocks." + std::to_string(i / 4) + ".upsamplers.0." + tail;
    return "decoder.up_blocks." + std::to_string(i / 4) + ".resnets." + std::to_string(i % 4) + "." + block(tail);
  }
  if (k.rfind("conv1.", 0) == 0) return "quant_conv." + after("conv1.");
  if (k.rfind("conv2.", 0) == 0) return "post_quant_conv." + after("conv2.");
  return k;
}

}  // namespace

class TestVae21 : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void initTestCase() { at::set_num_threads(1); }

  void releasedStructure() {
    const auto released = WanVaeConfig::released(VaeType::Wan21);
    QCOMPARE(released.parameter_count(), int64_t{126892531});
    QCOMPARE(released.spatial_factor(), int64_t{8});
    QCOMPARE(released.temporal_factor(), int64_t{4});
    QCOMPARE(released.decoder_dims(), (std::vector<int64_t>{384, 384, 384, 192, 96}));
    ws::models::vae::InitOptions meta;
    meta.tensor = torch::TensorOptions().dtype(torch::kFloat).device(torch::kMeta);
    meta.initialise = false;
    ws::models::vae::WanVAEImpl net(released, meta);
    std::map<std::string, int64_t> by;
    int64_t total = 0, tensors = 0;
    std::map<std::string, std::vector<int64_t>> shapes;
    for (const auto& p : net.named_parameters(true)) {
      total += p.value().numel();
      ++tensors;
      shapes[p.key()] = p.value().sizes().vec();
      by[p.key().substr(0, p.key().find('.'))] += p.value().numel();
    }
    // docs/design/wan21-vae.md §2 and §3.2.
    QCOMPARE(total, int64_t{126892531});
    QCOMPARE(tensors, int64_t{194});
    QCOMPARE(by["encoder"], int64_t{53595872});
    QCOMPARE(by["decoder"], int64_t{73295331});
    QCOMPARE(shapes["encoder.conv1.weight"], (std::vector<int64_t>{96, 3, 3, 3, 3}));
    QCOMPARE(shapes["encoder.head.2.weight"], (std::vector<int64_t>{32, 384, 3, 3, 3}));
    QCOMPARE(shapes["decoder.upsamples.3.time_conv.weight"], (std::vector<int64_t>{768, 384, 3, 1, 1}));
    QCOMPARE(shapes["decoder.upsamples.3.resample.1.weight"], (std::vector<int64_t>{192, 384, 3, 3}));
    QCOMPARE(shapes["decoder.upsamples.4.shortcut.weight"], (std::vector<int64_t>{384, 192, 1, 1, 1}));
    QCOMPARE(shapes["decoder.upsamples.11.resample.1.weight"], (std::vector<int64_t>{96, 192, 3, 3}));
    QCOMPARE(shapes["decoder.head.2.weight"], (std::vector<int64_t>{3, 96, 3, 3, 3}));
    QVERIFY(!shapes.count("decoder.upsamples.8.shortcut.weight"));
  }

  void stateDictKeysMatchTheFixture() {
    auto file = ws::io::read_safetensors(kWeights);
    auto cfg = WanVae::resolve_config(kWeights, nlohmann::json::object());
    QVERIFY(cfg.type == VaeType::Wan21);
    QCOMPARE(cfg.dim, int64_t{4});
    QCOMPARE(cfg.z_dim, int64_t{16});
    auto mine = WanVae::random(cfg, 0)->state_dict();
    QCOMPARE(mine.size(), file.size());
    for (const auto& [k, t] : file) {
      QVERIFY2(mine.count(k), k.c_str());
      QCOMPARE(shape(mine.at(k)), shape(t));
    }
    QCOMPARE(cfg.parameter_count(), int64_t{243583});
  }

  void parityCases() {
    for (const auto& base : {kCaseA, kCaseB}) {
      auto c = ws::cli::check_vae_parity_case(base + ".json", VaeType::Wan21);
      QVERIFY2(c.pass, c.line().c_str());
      QCOMPARE(c.tensors.size(), size_t{7});  // dec_chunk0 included
      QVERIFY(c.pth_checked);
      // The same case under the Wan2.2 kind fails, naming both.
      auto wrong = ws::cli::check_vae_parity_case(base + ".json", VaeType::Wan22);
      QVERIFY(!wrong.pass);
      QVERIFY2(wrong.reason.find("wan2.1 case") != std::string::npos, wrong.reason.c_str());
    }
  }

  void normalisationConstants() {
    auto vae = WanVae::load(kWeights);
    auto x = ws::io::read_safetensors(kCaseA + ".case.safetensors").at("x");
    auto e = vae->encode_full(x);
    // latent = (mu − mean) · (1/std) with the 16 published constants.
    const auto& mean = ws::models::wan21_latent_mean();
    const auto& sd = ws::models::wan21_latent_std();
    QCOMPARE(mean.size(), size_t{16});
    for (int c : {0, 7, 15}) {
      auto expect = (e.mu.select(1, c) - static_cast<float>(mean[c])) * (1.0f / static_cast<float>(sd[c]));
      QVERIFY(max_abs(expect, e.latent.select(1, c)) < 1e-6);
    }
  }

  void pthSafetensorsAndDiffusersAgree() {
    auto a = WanVae::load(kWeights);
    auto b = WanVae::load(kPth);  // no metadata: type and widths from the shapes
    ws::io::StateDict renamed;
    for (const auto& [k, t] : ws::io::read_safetensors(kWeights)) renamed[to_diffusers(k)] = t;
    QVERIFY(renamed.count("decoder.up_blocks.1.resnets.0.conv_shortcut.weight"));
    QVERIFY(renamed.count("encoder.mid_block.attentions.0.to_qkv.weight"));
    auto official = ws::models::official_vae_keys(renamed, "diffusers");
    auto c = WanVae::from_state_dict(official, WanVae::resolve_config(kWeights, nlohmann::json::object()), "diffusers");
    auto x = ws::io::read_safetensors(kCaseB + ".case.safetensors").at("x");
    auto za = a->encode(x);
    // The models compute on the loaded tensors where they lie (a mapped file is not held twice), and
    // LibTorch 2.x's kernels round by the data's address: the same weights from another file (or a
    // copy) agree to rounding, not bit for bit (1 ulp seen, .pth against .safetensors).
    QVERIFY2(max_abs(za, b->encode(x)) < 1e-6, qPrintable(QString::number(max_abs(za, b->encode(x)))));
    QVERIFY(max_abs(za, c->encode(x)) < 1e-6);
    QVERIFY(max_abs(a->decode(za, false), c->decode(za, false)) < 1e-6);
    QVERIFY(za.abs().max().item<double>() > 0.1);  // the tolerance is far below the values
    // A `model.` prefix on every key is dropped.
    ws::io::StateDict prefixed;
    for (const auto& [k, t] : ws::io::read_safetensors(kWeights)) prefixed["model." + k] = t;
    QCOMPARE(ws::models::official_vae_keys(prefixed, "p").size(), prefixed.size());
    QVERIFY(ws::models::official_vae_keys(prefixed, "p").count("encoder.conv1.weight"));
  }

  void typeDetectionAndErrors() {
    auto sd = ws::io::read_safetensors(kWeights);
    QCOMPARE(QString::fromStdString(ws::models::detect_vae_type(sd, "f").evidence),
             QString("encoder.conv1.weight is [4,3,3,3,3]: a Wan2.1 VAE"));
    // A declared type that disagrees with the weights names the file, the type and the evidence.
    QString err = error_of([] { WanVae::load(kWeights, {{"vae_type", "wan2.2"}}); });
    QVERIFY2(
        err.contains("vae_type wan2.2") && err.contains("[4,3,3,3,3]: a Wan2.1 VAE") && err.contains(kWeights.c_str()),
        qPrintable(err));
    err = error_of([] { WanVae::load(kWan22Weights, {{"vae_type", "AutoencoderKLWan"}}); });
    QVERIFY2(err.contains("vae_type wan2.1") && err.contains("a Wan2.2 VAE"), qPrintable(err));
    // VideoX-Fun's class name for the Wan2.1 VAE is accepted; an unknown name lists the accepted.
    QVERIFY(WanVae::load(kWeights, {{"vae_type", "AutoencoderKLWan"}})->type() == VaeType::Wan21);
    err = error_of([] { WanVae::load(kWeights, {{"vae_type", "AutoencoderKLWan2"}}); });
    QVERIFY2(err.contains("wan2.1, wan2.2"), qPrintable(err));
    // dec_dim is a Wan2.2 key.
    err = error_of([] { WanVae::load(kWeights, {{"dec_dim", 8}}); });
    QVERIFY2(err.contains("dec_dim"), qPrintable(err));
    // Not a Wan VAE.
    auto bad = sd;
    bad["encoder.conv1.weight"] = torch::zeros({4, 4, 3, 3, 3});
    err = error_of([&] { ws::models::detect_vae_type(bad, "x.safetensors"); });
    QVERIFY2(err.contains("not a Wan VAE: encoder.conv1.weight is [4,4,3,3,3]"), qPrintable(err));
    // Shapes: H, W multiples of 8 (not 16), channels 16.
    auto vae = WanVae::load(kWeights);
    vae->check_video(torch::zeros({1, 3, 5, 24, 40}));
    err = error_of([&] { vae->check_video(torch::zeros({1, 3, 5, 36, 40})); });
    QVERIFY2(err.contains("multiples of 8"), qPrintable(err));
    err = error_of([&] { vae->check_latent(torch::zeros({1, 48, 2, 3, 5})); });
    QVERIFY2(err.contains("48 channels but the VAE is wan2.1 (z_dim 16)"), qPrintable(err));
  }

  void chunkedEqualsWholeSequenceAndCausal() {
    auto vae = WanVae::load(kWeights);
    torch::manual_seed(4);
    auto x = torch::rand({1, 3, 13, 16, 24}) * 2 - 1;  // 4 latent frames
    auto z_ref = vae->encode(x);
    QCOMPARE(shape(z_ref), (std::vector<int64_t>{1, 16, 4, 2, 3}));
    vae->options().schedule.encode_frames = 0;
    auto z_whole = vae->encode(x);
    vae->options().schedule.encode_frames = 4;
    QVERIFY(max_abs(z_whole, z_ref) <= tolerance(kCaseA, "latent"));
    auto y_ref = vae->decode(z_ref, false);
    QCOMPARE(shape(y_ref), shape(x));
    vae->options().schedule.decode_frames = 0;
    auto y_whole = vae->decode(z_ref, false);
    vae->options().schedule.decode_frames = 1;
    QVERIFY(max_abs(y_whole, y_ref) <= tolerance(kCaseA, "decoded"));
    // Causality (docs/design/wan21-vae.md §4): the first 1 + 4k frames give the first k + 1
    // latent frames, and those decode to the first 1 + 4k frames.
    auto z_head = vae->encode(x.narrow(2, 0, 5));
    QVERIFY(max_abs(z_head, z_ref.narrow(2, 0, 2)) <= tolerance(kCaseA, "latent"));
    QVERIFY(max_abs(vae->decode(z_ref.narrow(2, 0, 2), false), y_ref.narrow(2, 0, 5)) <= tolerance(kCaseA, "decoded"));
  }
};

QTEST_APPLESS_MAIN(TestVae21)
#include "test_vae21.moc"
