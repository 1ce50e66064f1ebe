// SPDX-License-Identifier: Apache-2.0
// Wan2.2 VAE: parity with the official code on the tiny fixtures, identical results from the
// .pth and the .safetensors, strict loading, shape errors, round-trip shapes, chunked vs
// whole-sequence streaming, tiled decoding and the released parameter count.
#include <QtTest/QtTest>
#include <QScopeGuard>
#include <ATen/Parallel.h>
#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include <cmath>
#include <fstream>
#include <set>

#include "core/error.h"
#include "io/safetensors.h"
#include "io/weights.h"
#include "models/packed_conv.h"
#include "models/wan_vae.h"
#include "models/wan_vae_blocks.h"
#include "cli/parity/parity_vae.h"
#include "test_paths.h"
#include "test_util.h"
#include "vae_test_util.h"

using ws::models::WanVae;
using ws::models::WanVaeConfig;

using ws::test::error_of;
using ws::test::max_abs;
using ws::test::read_bytes;
using ws::test::shape;
using ws::test::tolerance;
using ws::test::write_bytes;

namespace {

const std::string kDir = std::string(WS_TEST_DATA) + "/vae";
const std::string kWeights = kDir + "/vae_dev_weights.safetensors";
const std::string kPth = kDir + "/vae_dev_weights.pth";
const std::string kCaseA = kDir + "/vae_dev_a_t5_32x32";
const std::string kCaseB = kDir + "/vae_dev_b_t9_64x64";
const std::string kConfigs = std::string(WS_TEST_DATA) + "/../../configs";

double psnr(const torch::Tensor& a, const torch::Tensor& b) {
  // Signal range 2 (video in [-1, 1]).
  double mse = (a.to(torch::kDouble) - b.to(torch::kDouble)).pow(2).mean().item<double>();
  return 10.0 * std::log10(4.0 / std::max(mse, 1e-30));
}

WanVaeConfig tiny() {
  WanVaeConfig c;
  c.dim = 4;
  c.dec_dim = 6;
  return c;
}

}  // namespace

class TestVae : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void initTestCase() { at::set_num_threads(1); }  // tests may run side by side

  void parameterCounts() {
    WanVaeConfig released;
    QCOMPARE(released.parameter_count(), int64_t{704688668});
    QCOMPARE(tiny().parameter_count(), int64_t{486082});
    // The analytic count agrees with a real tiny instantiation...
    auto t = WanVae::random(tiny(), 0);
    QCOMPARE(t->parameter_count(), tiny().parameter_count());
    QCOMPARE(t->state_dict().size(), size_t{196});
    // ...and the released structure, built on the meta device (nothing allocated), matches the
    // spec's per-component table.
    ws::models::vae::InitOptions meta;
    meta.tensor = torch::TensorOptions().dtype(torch::kFloat).device(torch::kMeta);
    meta.initialise = false;
    ws::models::vae::WanVAEImpl net(released, meta);
    std::map<std::string, int64_t> by_prefix;
    int64_t total = 0, tensors = 0;
    for (const auto& p : net.named_parameters(true)) {
      total += p.value().numel();
      ++tensors;
      const std::string& k = p.key();
      by_prefix[k.substr(0, k.find('.'))] += p.value().numel();
      if (k.rfind("encoder.downsamples.", 0) == 0 || k.rfind("decoder.upsamples.", 0) == 0)
        by_prefix[k.substr(0, k.find('.', k.find('.') + 1) + 2)] += p.value().numel();
    }
    QCOMPARE(total, int64_t{704688668});
    QCOMPARE(tensors, int64_t{196});
    QCOMPARE(by_prefix["encoder"], int64_t{149627776});
    QCOMPARE(by_prefix["decoder"], int64_t{555049228});
    QCOMPARE(by_prefix["conv1"], int64_t{9312});
    QCOMPARE(by_prefix["conv2"], int64_t{2352});
    QCOMPARE(by_prefix["encoder.downsamples.1"], int64_t{10960160});
    QCOMPARE(by_prefix["decoder.upsamples.0"], int64_t{185613312});
    QCOMPARE(by_prefix["decoder.upsamples.3"], int64_t{12520960});
  }

  void stateDictKeysMatchTheCheckpoint() {
    auto file = ws::io::read_safetensors(kWeights);
    auto mine = WanVae::random(tiny(), 0)->state_dict();
    QCOMPARE(mine.size(), file.size());
    for (const auto& [k, t] : file) {
      QVERIFY2(mine.count(k), k.c_str());
      QCOMPARE(shape(mine.at(k)), shape(t));
    }
    QVERIFY(file.count("encoder.downsamples.1.downsamples.2.time_conv.weight"));
    QCOMPARE(shape(file.at("decoder.upsamples.0.upsamples.3.time_conv.weight")),
             (std::vector<int64_t>{48, 24, 3, 1, 1}));
  }

  void parityCases() {
    for (const auto& base : {kCaseA, kCaseB}) {
      auto c = ws::cli::check_vae_parity_case(base + ".json");
      QVERIFY2(c.pass, c.line().c_str());
      QCOMPARE(c.tensors.size(), size_t{7});
      QVERIFY(c.pth_checked);
      for (const auto& t : c.tensors)
        qInfo("%s %s max_abs=%.3g tol=%.3g", c.name.c_str(), t.name.c_str(), t.max_abs, t.tol);
    }
  }

  void pthAndSafetensorsGiveIdenticalResults() {
    auto a = WanVae::load(kWeights);
    auto b = WanVae::load(kPth, tiny().to_json());  // a .pth has no metadata: widths given
    auto x = ws::io::read_safetensors(kCaseA + ".case.safetensors").at("x");
    auto za = a->encode(x), zb = b->encode(x);
    QVERIFY(torch::equal(za, zb));
    QVERIFY(torch::equal(a->decode(za, false), b->decode(za, false)));
  }

  void configPrecedence() {
    // Nothing given: the weights' __metadata__ config (the tiny widths).
    QCOMPARE(WanVae::resolve_config(kWeights, nlohmann::json::object()).dim, int64_t{4});
    // An explicit key wins over the metadata; the mismatch is a strict-load error naming a key.
    QString err = error_of([] { WanVae::load(kWeights, {{"dec_dim", 8}}); });
    QVERIFY2(err.contains("decoder."), qPrintable(err));
    // A .pth carries no metadata: the widths come from the tensors' shapes.
    auto from_shapes = WanVae::resolve_config(kPth, nlohmann::json::object());
    QCOMPARE(from_shapes.dim, int64_t{4});
    QCOMPARE(from_shapes.dec_dim, int64_t{6});
    QCOMPARE(from_shapes.z_dim, int64_t{48});
    QVERIFY(from_shapes.type == ws::models::VaeType::Wan22);
    // The YAML configs.
    auto tiny_yaml = ws::models::read_vae_config_yaml(kConfigs + "/tiny/vae.yaml");
    auto c = WanVaeConfig::from_json(tiny_yaml, "tiny/vae.yaml");
    QCOMPARE(c.dim, int64_t{4});
    QCOMPARE(c.dec_dim, int64_t{6});
    QCOMPARE(c.parameter_count(), int64_t{486082});
    auto rel = WanVaeConfig::from_json(ws::models::read_vae_config_yaml(kConfigs + "/wan2.2/vae.yaml"), "vae.yaml");
    QCOMPARE(rel.to_json(), WanVaeConfig().to_json());
    QCOMPARE(rel.parameter_count(), int64_t{704688668});
    // Wrong types name the key.
    err = error_of([] { WanVaeConfig::from_json({{"dim_mult", "1,2,4,4"}}, "x.yaml"); });
    QVERIFY2(err.contains("dim_mult") && err.contains("x.yaml"), qPrintable(err));
  }

  void shapeErrors() {
    auto vae = WanVae::load(kWeights);
    QString err = error_of([&] { vae->encode(torch::zeros({1, 3, 6, 32, 32})); });
    QVERIFY2(err.contains("T=6") && err.contains("[1,3,6,32,32]"), qPrintable(err));
    err = error_of([&] { vae->encode(torch::zeros({1, 3, 4, 32, 32})); });
    QVERIFY2(err.contains("T=4"), qPrintable(err));
    err = error_of([&] { vae->encode(torch::zeros({1, 3, 5, 24, 32})); });
    QVERIFY2(err.contains("24x32") && err.contains("16"), qPrintable(err));
    err = error_of([&] { vae->encode(torch::zeros({1, 3, 5, 32, 40})); });
    QVERIFY2(err.contains("32x40"), qPrintable(err));
    err = error_of([&] { vae->encode(torch::zeros({3, 5, 32, 32})); });
    QVERIFY2(err.contains("[3,5,32,32]"), qPrintable(err));
    err = error_of([&] { vae->decode(torch::zeros({1, 16, 2, 2, 2})); });
    QVERIFY2(err.contains("[1,16,2,2,2]"), qPrintable(err));
  }

  void strictLoadErrors() {
    auto sd = ws::io::read_safetensors(kWeights);
    const auto cfg = tiny();
    auto missing = sd;
    missing.erase("encoder.downsamples.1.downsamples.2.time_conv.weight");
    QString err = error_of([&] { WanVae::from_state_dict(missing, cfg, "w.safetensors"); });
    QVERIFY2(err.contains("encoder.downsamples.1.downsamples.2.time_conv.weight") && err.contains("w.safetensors"),
             qPrintable(err));
    auto bad = sd;
    bad["decoder.head.2.bias"] = torch::zeros({13});
    err = error_of([&] { WanVae::from_state_dict(bad, cfg, "w.safetensors"); });
    QVERIFY2(err.contains("decoder.head.2.bias"), qPrintable(err));
    auto extra = sd;
    extra["decoder.head.3.weight"] = torch::zeros({1});
    err = error_of([&] { WanVae::from_state_dict(extra, cfg, "w.safetensors"); });
    QVERIFY2(err.contains("decoder.head.3.weight"), qPrintable(err));
    // BF16 weights are accepted and cast to the model's fp32.
    auto half = sd;
    for (auto& kv : half) kv.second = kv.second.to(torch::kBFloat16);
    auto v = WanVae::from_state_dict(half, cfg, "bf16");
    QCOMPARE(v->state_dict().at("conv1.weight").scalar_type(), torch::kFloat);
  }

  void roundTripShapes() {
    auto vae = WanVae::load(kWeights);
    torch::manual_seed(3);
    for (int64_t t : {1, 5, 9, 13}) {
      auto x = torch::rand({1, 3, t, 32, 48}) * 2 - 1;
      auto z = vae->encode(x);
      QCOMPARE(shape(z), (std::vector<int64_t>{1, 48, 1 + (t - 1) / 4, 2, 3}));
      auto y = vae->decode(z);
      QCOMPARE(shape(y), shape(x));
      QVERIFY(y.abs().max().item<double>() <= 1.0);
      QVERIFY(torch::isfinite(y).all().item<bool>());
    }
  }

  void batchItemsAreIndependent() {
    auto vae = WanVae::load(kWeights);
    torch::manual_seed(6);
    auto a = torch::rand({1, 3, 5, 32, 32}) * 2 - 1, b = torch::rand({1, 3, 5, 32, 32}) * 2 - 1;
    auto z = vae->encode(torch::cat({a, b}, 0));
    QVERIFY(max_abs(z.narrow(0, 1, 1), vae->encode(b)) <= tolerance(kCaseA, "latent"));
    auto y = vae->decode(z, false);
    QVERIFY(max_abs(y.narrow(0, 0, 1), vae->decode(z.narrow(0, 0, 1), false)) <= tolerance(kCaseA, "decoded"));
  }

  void chunkedEqualsWholeSequence() {
    auto vae = WanVae::load(kWeights);
    torch::manual_seed(4);
    auto x = torch::rand({1, 3, 21, 32, 32}) * 2 - 1;  // 6 latent frames
    // Encoder: the reference schedule (1, then 4) against one chunk and chunks of 8.
    auto z_ref = vae->encode(x);
    vae->options().schedule.encode_frames = 0;
    auto z_whole = vae->encode(x);
    vae->options().schedule.encode_frames = 8;
    auto z_8 = vae->encode(x);
    vae->options().schedule.encode_frames = 4;
    const double tol_latent = tolerance(kCaseA, "latent"), tol_decoded = tolerance(kCaseA, "decoded");
    qInfo("encode: whole vs chunked %.3g, 8-frame vs chunked %.3g", max_abs(z_whole, z_ref), max_abs(z_8, z_ref));
    QVERIFY(max_abs(z_whole, z_ref) <= tol_latent);
    QVERIFY(max_abs(z_8, z_ref) <= tol_latent);
    // Decoder: one latent frame at a time against the whole sequence and pairs of frames.
    auto y_ref = vae->decode(z_ref, false);
    vae->options().schedule.decode_frames = 0;
    auto y_whole = vae->decode(z_ref, false);
    vae->options().schedule.decode_frames = 2;
    auto y_2 = vae->decode(z_ref, false);
    vae->options().schedule.decode_frames = 1;
    qInfo("decode: whole vs chunked %.3g, 2-frame vs chunked %.3g", max_abs(y_whole, y_ref), max_abs(y_2, y_ref));
    QCOMPARE(shape(y_ref), shape(x));
    QVERIFY(max_abs(y_whole, y_ref) <= tol_decoded);
    QVERIFY(max_abs(y_2, y_ref) <= tol_decoded);
    // Streaming state never leaks between calls: the same call twice is bit-identical.
    QVERIFY(torch::equal(vae->decode(z_ref, false), y_ref));
  }

  void tiledDecode() {
    auto vae = WanVae::load(kWeights);
    torch::manual_seed(5);
    // 40×40 latent: 2×2 default tiles (32, overlap 8), the last one flush with the border.
    auto z = torch::randn({1, 48, 2, 40, 40}) * 0.5;
    auto ref = vae->decode(z);
    vae->options().tiled_decode = true;
    auto tiled = vae->decode(z);
    QCOMPARE(shape(tiled), shape(ref));
    const double p = psnr(tiled, ref);
    qInfo("tiled (32/8) vs untiled: PSNR %.1f dB, max_abs %.3g", p, max_abs(tiled, ref));
    QVERIFY2(p >= 30.0, qPrintable(QString::number(p)));
    // Smaller tiles (more seams) stay close too; a clip that fits one tile is exact.
    vae->options().tile = 16;
    vae->options().tile_overlap = 4;
    const double p_small = psnr(vae->decode(z), ref);
    qInfo("tiled (16/4) vs untiled: PSNR %.1f dB", p_small);
    QVERIFY2(p_small >= 25.0, qPrintable(QString::number(p_small)));
    vae->options().tile = 32;
    auto small = z.narrow(3, 0, 8).narrow(4, 0, 8).contiguous();
    auto small_tiled = vae->decode(small);
    vae->options().tiled_decode = false;
    QVERIFY(torch::equal(small_tiled, vae->decode(small)));
  }

  void packedWeightsRoundTripAndAgree() {
    // On the CPU conv weights live in oneDNN's layout; state_dict() still returns the file's
    // tensors bit for bit, and results match the dense path (which upsamples before its conv).
    auto packed = WanVae::load(kWeights);
    auto file = ws::io::read_safetensors(kWeights);
    auto sd = packed->state_dict();
    QCOMPARE(sd.size(), file.size());
    for (const auto& [k, t] : file) QVERIFY2(torch::equal(sd.at(k), t), k.c_str());
    ws::models::WanVaeOptions o;
    o.pack_weights = false;
    auto dense = WanVae::load(kWeights, nlohmann::json::object(), o);
    auto x = ws::io::read_safetensors(kCaseB + ".case.safetensors").at("x");
    auto z = packed->encode(x);
    QVERIFY(max_abs(z, dense->encode(x)) <= tolerance(kCaseB, "latent"));
    const double d = max_abs(packed->decode(z, false), dense->decode(z, false));
    qInfo("packed vs dense decode: %.3g", d);
    QVERIFY(d <= tolerance(kCaseB, "decoded"));
  }

  // The causal form of a Winograd-taps conv (no temporal padding: the first two frames are the
  // cache) against LibTorch's conv3d in double: on Winograd (frames ≥ 512 pixels), on the direct
  // kernels (smaller), N = 1 and 2, ragged sizes; with the scratch limit lowered, in bands of rows
  // (1 MB) and on the direct kernels again (1 KB: not even 8 rows fit).
  void causalTapsConvMatchesConv3d() {
    enum Path { Whole, Bands, Direct };
    struct Case {
      int64_t n, c, k, t, h, w;
      size_t limit;
      Path path;
    };
    const size_t normal = ws::models::causal_conv_scratch_limit();
    const auto restore = qScopeGuard([normal] { ws::models::causal_conv_scratch_limit() = normal; });
    // The banded cases' limits sit between the scratch of a whole frame and of a few rows (oneDNN
    // keeps about 6.5 MB whatever the rows; at 16 → 32 channels the rest grows with them).
    for (const Case& cs :
         {Case{1, 16, 32, 6, 16, 16, normal, Whole}, Case{2, 32, 16, 3, 32, 32, normal, Whole},
          Case{1, 32, 32, 3, 8, 8, normal, Direct}, Case{1, 16, 32, 6, 30, 20, normal, Whole},
          Case{1, 16, 32, 6, 128, 64, size_t{11} << 20, Bands}, Case{2, 16, 32, 6, 64, 64, size_t{11} << 20, Bands},
          Case{1, 16, 32, 4, 32, 32, 1024, Direct}}) {
      torch::manual_seed(3);
      auto w = torch::randn({cs.k, cs.c, 3, 3, 3}) * 0.1;
      auto b = torch::randn({cs.k});
      auto x = torch::randn({cs.n, cs.c, cs.t, cs.h, cs.w});
      const auto want =
          at::conv3d(x.to(torch::kDouble), w.to(torch::kDouble), b.to(torch::kDouble), {1, 1, 1}, {0, 1, 1});
      auto layout = ws::models::choose_packed_layout(w, true);
      if (!layout || !ws::models::layout_is_winograd(*layout)) {
        // No Winograd kernels on this CPU (AVX-512): then no VAE conv may claim to run on them.
        qInfo("no Winograd taps on this CPU: checking that a packed VAE does not use them");
        WanVaeConfig wide;
        wide.dim = 16;
        wide.dec_dim = 16;
        auto vae = WanVae::random(wide, 1);
        for (const auto& m : vae->net().modules(false))
          if (auto conv = std::dynamic_pointer_cast<ws::models::vae::CausalConv3dImpl>(m))
            QVERIFY(!conv->on_winograd_taps());
        return;
      }
      auto packed = w.clone();
      ws::models::pack_(packed, *layout);
      ws::models::causal_conv_scratch_limit() = cs.limit;
      const int64_t rows = ws::models::causal_conv_band_rows(x.sizes(), *layout);
      const Path path = rows == 0 ? Direct : rows < cs.h ? Bands : Whole;
      QVERIFY2(path == cs.path, qPrintable(QStringLiteral("band rows %1").arg(rows)));
      torch::NoGradGuard no_grad;
      const auto got = ws::models::packed_conv_causal(x, packed, b, layout);
      QCOMPARE(shape(got), shape(want));
      const double err = max_abs(got.to(torch::kDouble), want), scale = want.abs().max().item<double>();
      qInfo("n %d c %d k %d t %d %dx%d, bands of %d rows: max_abs %.3g of %.3g", int(cs.n), int(cs.c), int(cs.k),
            int(cs.t), int(cs.h), int(cs.w), int(rows), err, scale);
      QVERIFY2(err <= 2e-5 * scale, qPrintable(QString::number(err)));
    }
  }

  // At widths in 16s the causal 3×3×3 convs of a packed VAE run on Winograd's taps (on a CPU with
  // oneDNN's Winograd kernels): encode and decode agree with the dense convs to within Winograd's
  // rounding, and the state dict gives back the same tensors bit for bit.
  void winogradTapsAgreeWithTheDenseConvs() {
    WanVaeConfig c;
    c.dim = 16;
    c.dec_dim = 16;
    auto packed = WanVae::random(c, 7);
    ws::models::WanVaeOptions o;
    o.pack_weights = false;
    auto dense = WanVae::random(c, 7, o);
    int taps = 0;
    for (const auto& m : packed->net().modules(false))
      if (auto conv = std::dynamic_pointer_cast<ws::models::vae::CausalConv3dImpl>(m); conv && conv->on_winograd_taps())
        ++taps;
    qInfo("%d causal convs on Winograd taps", taps);
    // `winograd` false keeps them on oneDNN's 3-D direct kernels.
    ws::models::WanVaeOptions direct;
    direct.winograd = false;
    for (const auto& m : WanVae::random(c, 7, direct)->net().modules(false))
      if (auto conv = std::dynamic_pointer_cast<ws::models::vae::CausalConv3dImpl>(m))
        QVERIFY(!conv->on_winograd_taps());
    const auto sd = packed->state_dict(), want = dense->state_dict();
    QCOMPARE(sd.size(), want.size());
    for (const auto& [k, t] : want) QVERIFY2(torch::equal(sd.at(k), t), k.c_str());
    torch::manual_seed(5);
    auto x = torch::rand({1, 3, 5, 64, 64}) * 2 - 1;
    const auto z = dense->encode(x), zp = packed->encode(x);
    const double ez = max_abs(zp, z), sz = z.abs().max().item<double>();
    const auto y = dense->decode(z, false), yp = packed->decode(z, false);
    const double ey = max_abs(yp, y), sy = y.abs().max().item<double>();
    qInfo("packed vs dense: latent max_abs %.3g of %.3g, decoded %.3g of %.3g", ez, sz, ey, sy);
    QVERIFY2(ez <= 2e-5 * sz, qPrintable(QString::number(ez)));
    QVERIFY2(ey <= 2e-5 * sy, qPrintable(QString::number(ey)));
  }

  void decoderOnlyDecodesTheSameWithoutTheEncoder() {
    // decoder_only drops the encoder's weights (the decode never reads them): the same decode,
    // fewer parameters, and encode() is an error that says why.
    auto full = WanVae::load(kWeights);
    ws::models::WanVaeOptions o;
    o.decoder_only = true;
    auto dec = WanVae::load(kWeights, nlohmann::json::object(), o);
    auto z = full->encode(ws::io::read_safetensors(kCaseB + ".case.safetensors").at("x"));
    QVERIFY(torch::equal(dec->decode(z, false), full->decode(z, false)));
    int64_t encoder = 0;
    for (const auto& [k, t] : ws::io::read_safetensors(kWeights))
      if (k.rfind("encoder.", 0) == 0 || k.rfind("conv1.", 0) == 0) encoder += t.numel();
    QVERIFY(encoder > 0);
    QCOMPARE(dec->parameter_count(), full->parameter_count() - encoder);
    const QString err = error_of([&] { dec->encode(z); });
    QVERIFY2(err.contains("opened for decoding only"), qPrintable(err));
    // Random weights the same way: the decoder's count, no encoder initialised.
    auto rnd = WanVae::random(tiny(), 0, o);
    QCOMPARE(rnd->parameter_count(), full->parameter_count() - encoder);
  }

  void encoderOnlyEncodesTheSameWithoutTheDecoder() {
    // encoder_only, the mirror image: the same latents, no decoder weights, decode() refused, and
    // both halves left out at once is an error.
    auto full = WanVae::load(kWeights);
    ws::models::WanVaeOptions o;
    o.encoder_only = true;
    auto enc = WanVae::load(kWeights, nlohmann::json::object(), o);
    auto x = ws::io::read_safetensors(kCaseB + ".case.safetensors").at("x");
    auto z = enc->encode(x);
    QVERIFY(torch::equal(z, full->encode(x)));
    int64_t decoder = 0;
    for (const auto& [k, t] : ws::io::read_safetensors(kWeights))
      if (k.rfind("decoder.", 0) == 0 || k.rfind("conv2.", 0) == 0) decoder += t.numel();
    QVERIFY(decoder > 0);
    QCOMPARE(enc->parameter_count(), full->parameter_count() - decoder);
    QString err = error_of([&] { enc->decode(z); });
    QVERIFY2(err.contains("opened for encoding only"), qPrintable(err));
    QCOMPARE(WanVae::random(tiny(), 0, o)->parameter_count(), full->parameter_count() - decoder);
    o.decoder_only = true;
    err = error_of([&] { WanVae::random(tiny(), 0, o); });
    QVERIFY2(err.contains("leave nothing to run"), qPrintable(err));
  }

  void gpuOptionsFallBackOnCpu() {
    ws::models::WanVaeOptions o;
    o.bf16 = true;
    o.low_vram = true;
    auto vae = WanVae::load(kWeights, nlohmann::json::object(), o);
    auto x = ws::io::read_safetensors(kCaseA + ".case.safetensors").at("x");
    auto ref = WanVae::load(kWeights)->encode(x);
    QVERIFY(torch::equal(vae->encode(x), ref));  // fp32 on the CPU, same result
  }
};

QTEST_APPLESS_MAIN(TestVae)
#include "test_vae.moc"
