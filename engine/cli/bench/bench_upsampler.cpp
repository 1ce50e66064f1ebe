// SPDX-License-Identifier: Apache-2.0
// `bench upsampler-forward` and `bench upsampler-train`: the latent upsampler alone on random
// latents with random weights (seed 0) — a forward pass, or whole optimizer steps through the
// trainer's own update (loss, backward, clipping, AdamW, EMA).
#include <torch/torch.h>

#include <cstdio>
#include <thread>

#include "core/error.h"
#include "runtime/allocator.h"
#include "models/latent_upsampler.h"
#include "models/train_conv3d.h"
#include "cli/args.h"
#include "cli/bench/bench.h"
#include "train/training_device.h"
#include "train/memory_estimate.h"
#include "train/upsampler/upsampler_update.h"

namespace ws::cli {
namespace {

struct UpsamplerBenchSetup {
  models::LatentUpsamplerConfig cfg;
  int64_t batch = 1, frames = 21, h = 20, w = 34, reps = 5, warmup = 1;
  int threads = 1;
  bool checkpointing = false, ema = false, torch_conv = false, plain_weights = false, direct_convs = false,
       bf16 = false;
  torch::Device device{torch::kCPU};  // the first GPU when there is one
};

Args bench_args(const std::string& kind) {
  Args a("bench " + kind, "bench " + kind + " [options]",
         "Random weights (seed 0) and random normalised latents [B, 48, F, h, w] (low-res size).");
  a.value("mid_channels", "M", "hidden width (default 512)", int_range(1, 4096))
      .value("blocks", "N", "ResBlocks per stage (default 4)", int_range(1, 64))
      .value("scale", "S", "rational_spatial_scale (default 1.5)", real_range(1, 4))
      .value("batch", "B", "clips per step (default 1)", int_range(1, 1024))
      .value("latent_frames", "F", "latent frames (default 21 = 81 video frames)", int_range(1, 1025))
      .value("latent_size", "HxW", "low-res latent size as WxH or H,W (default 34x20 = the 640 bucket of 16:9)")
      .value("latent", "F,H,W", "low-res latent frames and size at once (overrides the two above)")
      .value("reps", "R", "timed repetitions (default 5)", int_range(1, 100000))
      .value("steps", "S", "the same as --reps", int_range(1, 100000))
      .value("warmup", "W", "untimed repetitions first (default 1)", int_range(0, 100000))
      .value("threads", "K", "CPU threads (default: all cores)", int_range(1, 1024))
      .flag("gradient_checkpointing", "recompute ResBlocks in backward (train only)")
      .flag("use_ema", "update an EMA each step (train only)")
      .flag("torch_conv", "train: LibTorch's own conv3d path instead of the oneDNN training conv")
      .flag("plain_weights", "train: conv weights in the plain order between steps (not oneDNN's blocked one)")
      .flag("direct_convs", "train: oneDNN's direct conv kernels, not Winograd (winograd_convs false)")
      .flag("bf16", "bf16 compute from fp32 master weights, as the trainer on a GPU (GPU only)");
  return a;
}

bool parse_setup(const std::string& kind, const std::vector<std::string>& argv, UpsamplerBenchSetup& s) {
  Args a = bench_args(kind);
  if (!a.parse(argv)) return false;
  s.cfg.mid_channels = a.integer("mid_channels", 512);
  s.cfg.num_blocks_per_stage = a.integer("blocks", 4);
  s.cfg.rational_spatial_scale = a.real("scale", 1.5);
  s.cfg.validate();
  s.batch = a.integer("batch", 1);
  s.frames = a.integer("latent_frames", 21);
  if (a.has("latent_size")) std::tie(s.h, s.w) = parse_size(a.str("latent_size"));
  if (a.has("latent")) {
    const std::string v = a.str("latent");
    int64_t f = 0, h = 0, w = 0;
    if (std::sscanf(v.c_str(), "%ld,%ld,%ld", &f, &h, &w) != 3 || f < 1 || h < 1 || w < 1)
      throw UsageError("--latent wants F,H,W (e.g. 5,16,16), got '" + v + "'");
    s.frames = f, s.h = h, s.w = w;
  }
  s.reps = a.integer("steps", a.integer("reps", 5));
  s.warmup = a.integer("warmup", 1);
  s.threads = bench_set_threads(a.integer("threads", std::max(1u, std::thread::hardware_concurrency())));
  ws::runtime::keep_large_blocks_for_reuse();  // as the trainers do
  s.checkpointing = a.boolean("gradient_checkpointing");
  s.ema = a.boolean("use_ema");
  s.torch_conv = a.boolean("torch_conv");
  models::set_train_conv3d_enabled(!s.torch_conv);
  s.plain_weights = a.boolean("plain_weights") || s.torch_conv;
  s.direct_convs = a.boolean("direct_convs");
  s.device = train::training_device(0);
  s.bf16 = a.boolean("bf16");
  if (s.bf16 && !s.device.is_cuda()) throw UsageError("--bf16 needs a GPU (the CPU path runs fp32)");
  return true;
}

nlohmann::json setup_json(const UpsamplerBenchSetup& s) {
  return {{"params", s.cfg.parameter_count()},
          {"threads", s.threads},
          {"mid_channels", s.cfg.mid_channels},
          {"blocks", s.cfg.num_blocks_per_stage},
          {"input", {s.batch, 48, s.frames, s.h, s.w}},
          {"device", s.device.str()},
          {"bf16", s.bf16}};
}

int bench_forward(const std::vector<std::string>& argv) {
  UpsamplerBenchSetup s;
  if (!parse_setup("upsampler-forward", argv, s)) return 0;
  torch::manual_seed(0);
  models::LatentUpsampler model(s.cfg);
  model->eval();
  model->to(s.device);
  if (s.bf16) model->set_compute_dtype(torch::kBFloat16);
  auto x = torch::randn({s.batch, 48, s.frames, s.h, s.w}).to(s.device);
  torch::NoGradGuard no_grad;
  auto ms = bench_time("upsampler-forward", s.warmup, s.reps, [&] { model->forward(x); });
  bench_report(ms, setup_json(s), "step");
  return 0;
}

int bench_train(const std::vector<std::string>& argv) {
  UpsamplerBenchSetup s;
  if (!parse_setup("upsampler-train", argv, s)) return 0;
  const double runtime = train::training_runtime_bytes();
  torch::manual_seed(0);
  models::LatentUpsampler model(s.cfg);
  model->set_gradient_checkpointing(s.checkpointing);
  model->to(s.device);
  if (s.bf16) model->set_compute_dtype(torch::kBFloat16);
  train::UpsamplerUpdateOptions o;
  o.learning_rate = 1e-4;
  o.use_ema = s.ema;
  o.schedule.name = "constant";
  o.pack_conv_weights = !s.plain_weights;
  o.winograd_convs = !s.direct_convs;
  train::UpsamplerUpdater up(model, o);
  auto [num, den] = s.cfg.ratio();
  auto z_lr = torch::randn({s.batch, 48, s.frames, s.h, s.w}).to(s.device);
  auto z_hr =
      torch::randn({s.batch, 48, s.frames, (num * s.h + den - 1) / den, (num * s.w + den - 1) / den}).to(s.device);
  std::optional<train::UpdateRecord> rec;
  auto ms = bench_time("upsampler-train", s.warmup, s.reps, [&] { up.micro_step(z_lr, z_hr, &rec); });
  auto extra = setup_json(s);
  extra["gradient_checkpointing"] = s.checkpointing;
  extra["use_ema"] = s.ema;
  extra["conv_path"] = s.torch_conv ? "libtorch" : "onednn-train";
  extra["packed_convs"] = up.packed_convs();
  extra["winograd_convs"] = up.winograd_convs();
  // The estimate the `estimate` verb would make for this step, beside the measured peak.
  const double P = static_cast<double>(s.cfg.parameter_count());
  const double est =
      runtime + P * (4 + 4 + 8 + (s.ema ? 4 : 0)) +
      train::upsampler_activation_bytes(s.cfg, s.batch, s.frames, s.h, s.w, s.checkpointing) +
      (s.torch_conv ? (s.device.is_cuda() ? 0.0 : P * 4)  // LibTorch's conv: one copy
                    : train::upsampler_conv_backward_bytes(s.cfg, s.batch, s.frames, s.h, s.device.is_cuda(),
                                                           !s.plain_weights && !s.direct_convs));
  extra["estimate_mb"] = est / (1024.0 * 1024.0);
  bench_report(ms, extra, "step");
  return 0;
}

}  // namespace

WS_BENCH_KIND("upsampler-forward", "latent upsampler forward pass on random latents", &bench_forward);
WS_BENCH_KIND("upsampler-train", "whole upsampler optimizer steps (loss, backward, clip, AdamW)", &bench_train);

}  // namespace ws::cli
