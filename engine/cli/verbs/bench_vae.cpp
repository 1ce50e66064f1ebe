// SPDX-License-Identifier: Apache-2.0
// `bench vae-encode` / `bench vae-decode`: either Wan VAE with random weights (seed 0) or a
// weights file, on random clips of a given size.
#include <ATen/Parallel.h>
#include <torch/cuda.h>

#include <cstdio>

#include "core/error.h"
#include "models/wan_vae.h"
#include "cli/args.h"
#include "cli/bench/bench.h"
#include "runtime/allocator.h"

namespace {
using namespace ws::cli;  // the option rules (int_range, ...)

using ws::models::WanVae;

struct VaeBench {
  std::unique_ptr<WanVae> vae;
  int64_t frames = 0, height = 0, width = 0, reps = 0, warmup = 0;
  int threads = 0;
  double init_ms = 0;
};

VaeBench setup(const std::string& kind, const std::vector<std::string>& argv, bool* help) {
  ws::cli::Args a(
      "bench " + kind,
      "bench " + kind + " [--vae-type T] [--dim D --dec-dim E] [--frames T] [--size H,W] [--reps R] [--threads K]",
      "Times a Wan VAE on one random clip; random weights (seed 0) unless --weights.");
  a.value("vae_type", "TYPE", "wan2.2 (default) or wan2.1; with --weights: auto, from the file");
  a.value("dim", "D", "encoder base width (default 160 for wan2.2, 96 for wan2.1: the released)", int_range(1, 4096));
  a.value("dec_dim", "E", "decoder base width (wan2.2 only; default 256, released)", int_range(1, 4096));
  a.value("weights", "FILE", "real weights instead of random ones");
  a.value("frames", "T", "pixel frames, 1 + 4k (default 5)", frames_upto(1025));
  a.value("size", "H,W", "pixel size, multiples of 16 (wan2.1: 8) (default 128,128)");
  a.value("reps", "R", "timed repetitions (default 3)", int_range(1, 100000));
  a.value("warmup", "N", "untimed repetitions first (default 1)", int_range(0, 100000));
  a.value("threads", "K", "CPU threads (default 2)", int_range(1, 1024));
  a.value("seed", "S", "weights seed (default 0)", int_range(0, 9007199254740991.0));
  a.value("decode_chunk", "N", "latent frames per decoder chunk (default 1, the reference; 0 = all)",
          int_range(0, 1024));
  a.flag("tiled", "tiled decode (32x32 latent tiles)");
  a.flag("no_pack", "keep conv weights dense (oneDNN reorders them on every call)");
  a.flag("direct_convs", "packed: oneDNN's direct conv kernels, not Winograd's temporal taps");
  a.flag("bf16", "bf16 weights and activations (on a GPU; the VAE runs on the first GPU when there is one)");
  a.flag("no_channels_last", "on a GPU, keep the convs in LibTorch's default (NCDHW) order");
  *help = !a.parse(argv);
  VaeBench b;
  if (*help) return b;
  b.threads = ws::cli::bench_set_threads(a.integer("threads", 2));
  b.frames = a.integer("frames", 5);
  auto hw = ws::cli::parse_size(a.str("size", "128,128"));
  b.height = hw.first, b.width = hw.second;
  b.reps = a.integer("reps", 3);
  b.warmup = a.integer("warmup", 1);
  if (b.reps < 1 || b.warmup < 0) throw ws::UsageError("--reps must be >= 1 and --warmup >= 0");
  ws::models::WanVaeOptions opts;
  opts.tiled_decode = a.boolean("tiled");
  opts.schedule.decode_frames = a.integer("decode_chunk", 1);
  opts.pack_weights = !a.boolean("no_pack");
  opts.winograd = !a.boolean("direct_convs");
  opts.decoder_only = kind == "vae-decode";  // a decode needs only the decoder's weights
  opts.encoder_only = kind == "vae-encode";  // and an encode only the encoder's
  opts.channels_last = !a.boolean("no_channels_last");
  ws::runtime::return_large_blocks_to_system();  // as `vae encode|decode` do
  if (torch::cuda::is_available()) opts.device = "cuda:0";
  if (a.boolean("bf16") && opts.device == "cpu") throw ws::UsageError("--bf16 needs a GPU (the CPU path runs fp32)");
  opts.bf16 = a.boolean("bf16");
  const std::string type = a.str("vae_type", a.has("weights") ? "auto" : "wan2.2");
  if (type == "auto" && !a.has("weights")) throw ws::UsageError("--vae-type auto needs --weights");
  const auto vt = type == "auto" ? ws::models::VaeType::Wan22 : ws::models::parse_vae_type(type, "--vae-type");
  if (vt == ws::models::VaeType::Wan21 && a.has("dec_dim"))
    throw ws::UsageError("--dec-dim is a Wan2.2 VAE width; the Wan2.1 VAE decodes at --dim");
  const double t0 = ws::cli::bench_now_ms();
  if (a.has("weights")) {
    nlohmann::json cfg = nlohmann::json::object();
    cfg["vae_type"] = type;
    if (a.has("dim")) cfg["dim"] = a.integer("dim", 160);
    if (a.has("dec_dim")) cfg["dec_dim"] = a.integer("dec_dim", 256);
    b.vae = WanVae::load(a.str("weights"), cfg, opts);
  } else {
    auto cfg = ws::models::WanVaeConfig::released(vt);
    cfg.dim = a.integer("dim", cfg.dim);
    cfg.dec_dim = a.integer("dec_dim", cfg.dec_dim);
    b.vae = WanVae::random(cfg, static_cast<uint64_t>(a.integer("seed", 0)), opts);
  }
  b.init_ms = ws::cli::bench_now_ms() - t0;
  std::fprintf(stderr, "bench %s: %lld params, init %.0f ms, %d threads, clip %lldx%lldx%lld\n", kind.c_str(),
               static_cast<long long>(b.vae->parameter_count()), b.init_ms, b.threads, static_cast<long long>(b.frames),
               static_cast<long long>(b.height), static_cast<long long>(b.width));
  return b;
}

nlohmann::json common(const std::string& kind, const VaeBench& b) {
  const auto& c = b.vae->config();
  nlohmann::json j = {{"kind", kind}, {"params", b.vae->parameter_count()}, {"threads", b.threads}};
  j.update({{"vae_type", ws::models::vae_type_name(c.type)}, {"dim", c.dim}, {"z_dim", c.z_dim}});
  if (!c.wan21()) j["dec_dim"] = c.dec_dim;
  j.update({{"frames", b.frames}, {"height", b.height}, {"width", b.width}});
  j.update({{"reps", b.reps}, {"init_ms", b.init_ms}, {"packed", b.vae->options().pack_weights}});
  j["winograd"] = b.vae->options().pack_weights && b.vae->options().winograd;
  j.update({{"device", b.vae->options().device}, {"bf16", b.vae->options().bf16}});
  // The layout only matters (and is applied) on a GPU.
  j["channels_last"] = b.vae->options().device != "cpu" && b.vae->options().channels_last;
  return j;
}

int bench_encode(const std::vector<std::string>& argv) {
  bool help = false;
  VaeBench b = setup("vae-encode", argv, &help);
  if (help) return 0;
  torch::manual_seed(1);
  auto x = torch::rand({1, 3, b.frames, b.height, b.width}) * 2 - 1;
  b.vae->check_video(x, "bench vae-encode");
  torch::NoGradGuard no_grad;
  auto ms = ws::cli::bench_time("bench vae-encode", b.warmup, b.reps, [&] { b.vae->encode(x); });
  ws::cli::bench_report(ms, common("vae-encode", b));
  return 0;
}

int bench_decode(const std::vector<std::string>& argv) {
  bool help = false;
  VaeBench b = setup("vae-decode", argv, &help);
  if (help) return 0;
  const auto& c = b.vae->config();
  // Shapes as the matching encode would give them.
  const int64_t f = c.spatial_factor(), n = 1 + (b.frames - 1) / c.temporal_factor();
  b.vae->check_video(torch::empty({1, 3, b.frames, b.height, b.width}, torch::kMeta), "bench vae-decode");
  torch::manual_seed(1);
  auto z = torch::randn({1, c.z_dim, n, b.height / f, b.width / f});
  torch::NoGradGuard no_grad;
  auto ms = ws::cli::bench_time("bench vae-decode", b.warmup, b.reps, [&] { b.vae->decode(z); });
  ws::cli::bench_report(ms, common("vae-decode", b));
  return 0;
}

}  // namespace

WS_BENCH_KIND("vae-encode", "Wan VAE (2.2 or 2.1) encode of one random clip", &bench_encode);
WS_BENCH_KIND("vae-decode", "Wan VAE (2.2 or 2.1) decode of one random latent clip", &bench_decode);
