// SPDX-License-Identifier: Apache-2.0
// train-vae (docs/design/wan22-vae.md §12): gradients reach every part of the network through the chunked
// encode/decode path (and agree with finite differences), a few steps lower the loss, the
// KL weight acts, the saved file loads with the normal loader, the inference path is unchanged
// by training, the clip sampler is deterministic per step, and the committed demo VAE still
// reconstructs the demo data.
#include <QtTest/QtTest>
#include <QFileInfo>
#include <QTemporaryDir>
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Parallel.h>
#include <torch/torch.h>

#include <cmath>
#include <cstdlib>

#include "core/error.h"
#include "data/demo_data.h"
#include "dataset/metadata.h"
#include "dataset/row_check.h"
#include "data/clip_tensor.h"
#include "dataset/frame_sampling.h"
#include "io/safetensors.h"
#include "video/video_encode.h"
#include "models/wan_vae.h"
#include "train/vae/vae_trainer.h"
#include "test_paths.h"
#include "test_util.h"

using ws::models::WanVae;
using ws::models::WanVaeOptions;
using ws::models::vae::Schedule;

namespace {

WanVaeOptions trainable() {
  WanVaeOptions o;
  o.pack_weights = false;
  return o;
}

// Smooth colour ramps plus a square that moves one pixel per frame: learnable structure.
torch::Tensor synthetic_clips(int64_t b, int64_t t, int64_t s, torch::Dtype dtype = torch::kFloat) {
  auto ramp = torch::linspace(-1, 1, s, torch::kDouble);
  auto x = torch::zeros({b, 3, t, s, s}, torch::kDouble);
  for (int64_t i = 0; i < b; ++i)
    for (int64_t f = 0; f < t; ++f) {
      x[i][0][f] = ramp.view({s, 1}).expand({s, s}) * (0.5 + 0.1 * i);
      x[i][1][f] = ramp.view({1, s}).expand({s, s}) * -0.4;
      x[i][2][f].fill_(0.2 * i - 0.1);
      x[i].narrow(1, f, 1).narrow(2, 4 + f + i, 8).narrow(3, 6 + f, 8).fill_(0.9);
    }
  return x.to(dtype);
}

std::vector<torch::Tensor> as_clips(const torch::Tensor& x) {
  std::vector<torch::Tensor> v;
  for (int64_t i = 0; i < x.size(0); ++i) v.push_back(x[i]);
  return v;
}

torch::Tensor param(WanVae& v, const std::string& name) {
  for (const auto& p : v.net().named_parameters(true))
    if (p.key() == name) return p.value();
  throw std::runtime_error("no parameter " + name);
}

double loss_value(WanVae& v, const torch::Tensor& x, double kl_weight, uint64_t seed, const Schedule& s) {
  torch::NoGradGuard no_grad;
  at::Generator g = at::detail::createCPUGenerator(seed);
  return ws::train::vae_loss(v.net(), x, kl_weight, g, s).loss.item<double>();
}

// The committed weights measured 20.15 dB mean (19.5-21.2 per clip); random weights give
// about 10. The margin allows for other CPUs and LibTorch versions.
constexpr double kDemoPsnrFloor = 18.5;
const std::string kDemoWeights = std::string(WS_TEST_DATA) + "/../../configs/demo/demo_vae.safetensors";

// [3, H, W] in [-1, 1] into `sheet` at (x0, y0).
void paste(ws::video::RgbFrame& sheet, const torch::Tensor& frame, int x0, int y0) {
  auto px = ((frame.clamp(-1, 1) + 1) * 127.5).round().to(torch::kUInt8).permute({1, 2, 0}).contiguous();
  const int h = static_cast<int>(px.size(0)), w = static_cast<int>(px.size(1));
  const uint8_t* src = px.data_ptr<uint8_t>();
  for (int y = 0; y < h; ++y) std::copy(src + y * w * 3, src + (y + 1) * w * 3, sheet.pixel(x0, y0 + y));
}

double psnr(const torch::Tensor& a, const torch::Tensor& b) {
  double mse = (a.to(torch::kDouble) - b.to(torch::kDouble)).pow(2).mean().item<double>();
  return 10.0 * std::log10(4.0 / std::max(mse, 1e-30));
}

}  // namespace

class TestVaeTrain : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void initTestCase() { at::set_num_threads(1); }  // tests may run side by side

  void gradientReachesEncoderAndDecoder() {
    auto vae = WanVae::random(ws::train::tiny_vae_config(), 3, trainable());
    auto x = synthetic_clips(1, 9, 32);
    // The reference schedule: encoder frame 0 then chunks of 4, decoder one latent frame at a
    // time, so every gradient into early frames crosses the per-conv caches.
    for (const Schedule& s : {Schedule{4, 1}, Schedule{0, 0}}) {
      vae->net().zero_grad();
      at::Generator g = at::detail::createCPUGenerator(7);
      auto l = ws::train::vae_loss(vae->net(), x, 1e-6, g, s);
      l.loss.backward();
      for (const char* name : {"encoder.conv1.weight", "encoder.downsamples.1.downsamples.2.time_conv.weight",
                               "encoder.head.2.weight", "conv1.weight", "conv2.weight", "decoder.conv1.weight",
                               "decoder.upsamples.0.upsamples.3.time_conv.weight", "decoder.head.2.weight"}) {
        auto grad = param(*vae, name).grad();
        QVERIFY2(grad.defined(), name);
        QVERIFY2(grad.abs().sum().item<double>() > 0, name);
        QVERIFY2(torch::isfinite(grad).all().item<bool>(), name);
      }
      size_t with_grad = 0, total = 0;
      for (const auto& p : vae->net().parameters()) {
        ++total;
        with_grad += p.grad().defined();
      }
      QCOMPARE(with_grad, total);
    }
    // Frame 0 of the clip influences the gradient only through the caches: a loss on the last
    // output frame alone still reaches the input's first frame.
    vae->net().zero_grad();
    auto xi = x.clone().requires_grad_(true);
    auto m = vae->net().moments(vae->net().encode_raw(xi, {4, 1}));
    auto out = vae->net().decode_raw(m.first, {4, 1});
    out.narrow(2, out.size(2) - 1, 1).square().mean().backward();
    QVERIFY(xi.grad().narrow(2, 0, 1).abs().sum().item<double>() > 0);
  }

  void chunkedAndWholeClipGradientsAgree() {
    auto vae = WanVae::random(ws::train::tiny_vae_config(), 4, trainable());
    auto x = synthetic_clips(1, 9, 32);
    std::map<std::string, torch::Tensor> grads[2];
    int i = 0;
    for (const Schedule& s : {Schedule{4, 1}, Schedule{0, 0}}) {
      vae->net().zero_grad();
      at::Generator g = at::detail::createCPUGenerator(11);
      ws::train::vae_loss(vae->net(), x, 1e-3, g, s).loss.backward();
      for (const auto& p : vae->net().named_parameters(true)) grads[i][p.key()] = p.value().grad().clone();
      ++i;
    }
    for (const auto& [k, a] : grads[0]) {
      const auto& b = grads[1][k];
      const double scale = std::max(1e-6, a.abs().max().item<double>());
      QVERIFY2((a - b).abs().max().item<double>() <= 1e-3 * scale, k.c_str());
    }
  }

  void gradientMatchesFiniteDifferences() {
    // fp64 end to end, so a central difference is accurate to ~1e-9.
    auto vae = WanVae::random(ws::train::tiny_vae_config(), 5, trainable());
    vae->net().to(torch::kDouble);
    auto x = synthetic_clips(1, 5, 32, torch::kDouble);
    const Schedule s{4, 1};
    const double kl = 0.1;
    vae->net().zero_grad();
    {
      at::Generator g = at::detail::createCPUGenerator(21);
      ws::train::vae_loss(vae->net(), x, kl, g, s).loss.backward();
    }
    for (const char* name :
         {"encoder.conv1.weight", "encoder.middle.1.to_qkv.weight", "conv1.bias", "decoder.conv1.weight",
          "decoder.upsamples.1.upsamples.3.time_conv.weight", "decoder.head.0.gamma"}) {
      auto p = param(*vae, name);
      const double analytic = p.grad().view(-1)[0].item<double>();
      const double h = 1e-5;
      double plus, minus;
      {
        torch::NoGradGuard ng;
        p.view(-1)[0] += h;
        plus = loss_value(*vae, x, kl, 21, s);
        p.view(-1)[0] -= 2 * h;
        minus = loss_value(*vae, x, kl, 21, s);
        p.view(-1)[0] += h;
      }
      const double numeric = (plus - minus) / (2 * h);
      QVERIFY2(std::abs(analytic - numeric) <= 1e-6 + 1e-4 * std::abs(numeric),
               qPrintable(QString("%1: autograd %2, finite difference %3").arg(name).arg(analytic).arg(numeric)));
    }
  }

  void fewStepsLowerTheLoss() {
    auto vae = WanVae::random(ws::train::tiny_vae_config(), 6, trainable());
    ws::train::VaeUpdateOptions o;
    o.learning_rate = 3e-3;
    o.schedule.name = "constant";
    o.schedule.base_lr = o.learning_rate;
    ws::train::VaeUpdater up(*vae, o);
    auto clips = as_clips(synthetic_clips(2, 5, 32));
    const double before = loss_value(*vae, torch::stack(clips), o.kl_weight, 99, o.chunking);
    ws::train::VaeStepRecord r;
    for (int i = 0; i < 40; ++i) r = up.step(clips, 100 + i);
    const double after = loss_value(*vae, torch::stack(clips), o.kl_weight, 99, o.chunking);
    qInfo("loss %.4f -> %.4f (last step recon %.4f kl %.3f grad_norm %.3f)", before, after, r.recon, r.kl, r.grad_norm);
    QCOMPARE(r.step, int64_t{40});
    QCOMPARE(r.clips, int64_t{2});
    QCOMPARE(up.global_step(), int64_t{40});
    QCOMPARE(up.optimizer().step_count(), int64_t{40});
    QVERIFY(std::isfinite(r.loss) && std::isfinite(r.grad_norm) && r.grad_norm > 0);
    QVERIFY2(after < 0.5 * before, qPrintable(QString("%1 -> %2").arg(before).arg(after)));
  }

  void mixedLengthsInOneBatch() {
    // An image row (T = 1) and a video clip in one step: each runs as its own batch.
    auto vae = WanVae::random(ws::train::tiny_vae_config(), 7, trainable());
    ws::train::VaeUpdater up(*vae, {});
    auto v = synthetic_clips(1, 5, 32);
    auto r = up.step({v[0], v[0].narrow(1, 0, 1)}, 1);
    QVERIFY(std::isfinite(r.loss));
    QCOMPARE(r.clips, int64_t{2});
    QVERIFY(ws::test::error_of([&] { up.step({v[0].narrow(1, 0, 4)}, 1); }).contains("T=4"));
    QVERIFY(ws::test::error_of([&] { up.step({}, 1); }).contains("empty batch"));
  }

  void klWeightActs() {
    auto x = synthetic_clips(1, 5, 32);
    auto make = [] { return WanVae::random(ws::train::tiny_vae_config(), 8, trainable()); };
    // The loss is recon + kl_weight · KL with the same KL whatever the weight.
    {
      auto vae = make();
      torch::NoGradGuard ng;
      at::Generator g0 = at::detail::createCPUGenerator(5), g1 = at::detail::createCPUGenerator(5);
      auto a = ws::train::vae_loss(vae->net(), x, 0.0, g0);
      auto b = ws::train::vae_loss(vae->net(), x, 0.25, g1);
      QCOMPARE(a.kl.item<double>(), b.kl.item<double>());
      QCOMPARE(a.recon.item<double>(), b.recon.item<double>());
      QCOMPARE(a.loss.item<double>(), a.recon.item<double>());
      QVERIFY(a.kl.item<double>() > 0);
      QVERIFY(std::abs(b.loss.item<double>() - (b.recon.item<double>() + 0.25 * b.kl.item<double>())) <
              1e-6 * b.loss.item<double>());
    }
    // Training with a large weight pulls the posterior towards N(0, 1): a smaller KL than
    // training without it, from the same start, data and noise.
    double kl_end[2];
    int i = 0;
    for (double w : {0.0, 1.0}) {
      auto vae = make();
      ws::train::VaeUpdateOptions o;
      o.learning_rate = 3e-3;
      o.kl_weight = w;
      o.schedule.name = "constant";
      ws::train::VaeUpdater up(*vae, o);
      ws::train::VaeStepRecord r;
      for (int s = 0; s < 10; ++s) r = up.step(as_clips(x), 200 + s);
      QVERIFY(std::abs(r.loss - (r.recon + w * r.kl)) < 1e-9 + 1e-6 * r.loss);
      kl_end[i++] = r.kl;
    }
    qInfo("KL after 10 steps: weight 0 -> %.4f, weight 1 -> %.4f", kl_end[0], kl_end[1]);
    QVERIFY(kl_end[1] < 0.8 * kl_end[0]);
  }

  void savedWeightsLoadAndRunInference() {
    QTemporaryDir tmp;
    auto vae = WanVae::random(ws::train::tiny_vae_config(), 9, trainable());
    ws::train::VaeUpdater up(*vae, {});
    auto x = synthetic_clips(1, 5, 32);
    up.step(as_clips(x), 1);
    const std::string path = tmp.filePath("sub/vae.safetensors").toStdString();
    QDir().mkpath(tmp.filePath("sub"));
    ws::train::save_vae_weights(*vae, path);
    auto meta = ws::io::read_safetensors_metadata(path);
    QVERIFY(meta.count("config"));
    auto cfg = nlohmann::json::parse(meta.at("config"));
    QCOMPARE(cfg["dim"].get<int64_t>(), int64_t{4});
    QCOMPARE(cfg["dec_dim"].get<int64_t>(), int64_t{6});
    auto file = ws::io::read_safetensors(path);
    QCOMPARE(file.size(), size_t{196});
    QVERIFY(file.count("encoder.downsamples.1.downsamples.2.time_conv.weight"));
    QVERIFY(file.count("decoder.head.2.bias"));
    QVERIFY(torch::equal(file.at("encoder.conv1.weight"), param(*vae, "encoder.conv1.weight").detach()));

    // The normal loader (packed oneDNN weights) reads it without any config and gives the
    // trained network's inference results.
    auto loaded = WanVae::load(path);
    QCOMPARE(loaded->config().dim, int64_t{4});
    QCOMPARE(loaded->config().dec_dim, int64_t{6});
    auto z = loaded->encode(x);
    QCOMPARE(z.sizes().vec(), (std::vector<int64_t>{1, 48, 2, 2, 2}));
    auto y = loaded->decode(z);
    QCOMPARE(y.sizes().vec(), x.sizes().vec());
    QVERIFY(y.abs().max().item<double>() <= 1.0);
    QVERIFY((vae->encode(x) - z).abs().max().item<double>() < 1e-4);
    QVERIFY((vae->decode(z) - y).abs().max().item<double>() < 1e-4);

    // Warm start for training: writable, unpacked, same values.
    auto warm = ws::train::load_vae_for_training(path, nlohmann::json::object());
    QVERIFY(torch::equal(param(*warm, "decoder.head.2.weight").detach(), file.at("decoder.head.2.weight")));
    ws::train::VaeUpdater up2(*warm, {});
    QVERIFY(std::isfinite(up2.step(as_clips(x), 2).loss));
    QVERIFY(!torch::equal(param(*warm, "decoder.head.2.weight").detach(), file.at("decoder.head.2.weight")));
  }

  void inferenceIsUnchangedByTrainingMode() {
    // The same weights, packed for inference and unpacked for training, encode alike; and a
    // grad-mode call of the network equals the no-grad one.
    auto a = WanVae::random(ws::train::tiny_vae_config(), 10);
    auto b = WanVae::random(ws::train::tiny_vae_config(), 10, trainable());
    auto x = synthetic_clips(1, 9, 48);
    auto za = a->encode(x), zb = b->encode(x);
    QVERIFY((za - zb).abs().max().item<double>() < 1e-5);
    auto y = b->decode(zb, false);
    torch::Tensor enc_grad = b->net().encode_raw(x, {});
    QVERIFY(enc_grad.requires_grad());
    QVERIFY((enc_grad.detach() - b->encode_full(x).enc_raw).abs().max().item<double>() < 1e-5);
    QVERIFY(psnr(a->decode(za, false), y) > 80);
  }

  void samplerIsDeterministicPerStep() {
    if (!ws::dataset::video_support_built()) QSKIP("no video support");
    QTemporaryDir tmp;
    const std::string dir = tmp.path().toStdString();
    ws::data::write_demo_dataset(dir, 1);
    auto meta = ws::dataset::read_metadata(dir + "/metadata.json");
    ws::train::VaeDataOptions o;
    o.size = 32;
    o.n_frames = 5;
    o.stride = 1;
    o.batch = 3;
    o.seed = 4;
    ws::train::VaeClipSampler s(meta, o);
    QCOMPARE(s.rows() + s.skipped(), meta.rows.size());
    QVERIFY(s.rows() >= 10);
    auto b0 = s.batch(0), again = s.batch(0), b1 = s.batch(1);
    QCOMPARE(b0.size(), size_t{3});
    for (size_t i = 0; i < b0.size(); ++i) {
      QVERIFY(torch::equal(b0[i], again[i]));
      QCOMPARE(b0[i].size(0), int64_t{3});
      QVERIFY(b0[i].size(1) == 5 || b0[i].size(1) == 1);
      QCOMPARE(b0[i].size(2), int64_t{32});
      QCOMPARE(b0[i].size(3), int64_t{32});
      QVERIFY(b0[i].min().item<double>() >= -1.0 && b0[i].max().item<double>() <= 1.0);
    }
    QVERIFY(!torch::equal(b0[0], b1[0]) || !torch::equal(b0[1], b1[1]));
    // A random window of the same frames: content at the same scale, a smaller tensor.
    ws::train::VaeDataOptions cropped = o;
    cropped.crop = 16;
    auto c0 = ws::train::VaeClipSampler(meta, cropped).batch(0);
    QCOMPARE(c0[0].size(2), int64_t{16});
    QCOMPARE(c0[0].size(3), int64_t{16});
    bool inside = false;
    for (int64_t y = 0; y <= 16 && !inside; ++y)
      for (int64_t x = 0; x <= 16 && !inside; ++x)
        inside = torch::equal(c0[0], b0[0].narrow(2, y, 16).narrow(3, x, 16));
    QVERIFY(inside);
    // One epoch visits every row once: the first rows() clips cover all rows, and image rows
    // come as one-frame clips.
    ws::train::VaeDataOptions one = o;
    one.batch = 1;
    ws::train::VaeClipSampler s1(meta, one);
    int images = 0;
    for (int64_t step = 0; step < static_cast<int64_t>(s1.rows()); ++step) images += s1.batch(step)[0].size(1) == 1;
    int image_rows = 0;
    for (const auto& r : meta.rows) image_rows += r.is_image();
    QCOMPARE(images, image_rows);
  }

  void demoWeightsReconstructDemoClips() {
    // The committed demo VAE (configs/demo/vae-train.yaml) must keep reconstructing the demo
    // data: a regression guard for the weights, the VAE code and the data generator together.
    // WS_VAE_CONTACT_SHEET=FILE.png writes originals above reconstructions for a look.
    if (!QFile::exists(QString::fromStdString(kDemoWeights)))
      QFAIL("configs/demo/demo_vae.safetensors is missing (it is committed)");
    if (!ws::dataset::video_support_built()) QSKIP("no video support");
    QVERIFY(QFileInfo(QString::fromStdString(kDemoWeights)).size() < 3'000'000);
    auto vae = WanVae::load(kDemoWeights);  // no config: the widths come from the metadata
    QCOMPARE(vae->config().dim, int64_t{4});
    QCOMPARE(vae->config().dec_dim, int64_t{6});
    QTemporaryDir tmp;
    const std::string dir = tmp.path().toStdString();
    ws::data::write_demo_dataset(dir, 42);  // the demo's seed
    auto meta = ws::dataset::read_metadata(dir + "/metadata.json");
    // Square crops at the demo upsampler's sizes and a whole frame of a 16:9 clip.
    struct Case {
      size_t row;
      int64_t h, w;
    };
    const std::vector<Case> cases{{0, 240, 240}, {3, 160, 160}, {5, 240, 240}, {9, 256, 256}, {2, 144, 256}};
    const std::vector<int64_t> show{0, 8, 16};
    const char* sheet_path = std::getenv("WS_VAE_CONTACT_SHEET");
    int sheet_w = 0, sheet_h = 0;
    for (const auto& c : cases) {
      sheet_w = std::max<int>(sheet_w, static_cast<int>(c.w * show.size()));
      sheet_h += static_cast<int>(2 * c.h);
    }
    ws::video::RgbFrame sheet(sheet_w, sheet_h);
    int y0 = 0;
    double total = 0;
    for (const auto& c : cases) {
      auto rep = ws::dataset::check_row(meta, c.row);
      QVERIFY2(rep.problems.empty(), meta.rows[c.row].file_path.c_str());
      auto idx = ws::dataset::sample_frame_indices(rep.frames, 17, 2, 0);
      idx.resize((idx.size() - 1) / 4 * 4 + 1);  // short clips: the longest 4k + 1 prefix
      auto x = ws::data::read_clip(meta.resolve(meta.rows[c.row]), idx, c.h, c.w).unsqueeze(0);
      auto y = vae->decode(vae->encode(x));  // the inference path: packed weights, clamped
      const double p = psnr(x, y);
      total += p;
      qInfo("%s %lldx%lld, %zu frames: PSNR %.2f dB", meta.rows[c.row].file_path.c_str(), static_cast<long long>(c.h),
            static_cast<long long>(c.w), idx.size(), p);
      for (size_t i = 0; i < show.size(); ++i) {
        const int64_t f = std::min<int64_t>(show[i], x.size(2) - 1);
        paste(sheet, x[0].select(1, f), static_cast<int>(i * c.w), y0);
        paste(sheet, y[0].select(1, f), static_cast<int>(i * c.w), y0 + static_cast<int>(c.h));
      }
      y0 += static_cast<int>(2 * c.h);
    }
    const double mean = total / static_cast<double>(cases.size());
    qInfo("mean reconstruction PSNR %.2f dB", mean);
    if (sheet_path) ws::video::write_png(sheet_path, sheet);
    QVERIFY2(mean > kDemoPsnrFloor, qPrintable(QString("mean PSNR %1 dB").arg(mean)));
  }
};

QTEST_APPLESS_MAIN(TestVaeTrain)
#include "test_vae_train.moc"
