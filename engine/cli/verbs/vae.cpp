// SPDX-License-Identifier: Apache-2.0
// `wanstudio-engine vae encode|decode`: either Wan VAE (the weights say which) on tensors in
// .safetensors files. encode: video [3, T, H, W] (or [1, 3, T, H, W]) in [-1, 1] -> `latents`
// [z, F, h, w] with __metadata__ (VAE type, z_dim, sha256, frame indices, pixel size). decode:
// the reverse, clamped.
// Video files come through the data pipeline; --video is the seam for it.
#include <ATen/Parallel.h>

#include <cstdio>

#include "core/error.h"
#include "core/log.h"
#include "data/clip_tensor.h"
#include "io/safetensors.h"
#ifdef WANSTUDIO_HAVE_VIDEO
#include "video/video_decode.h"
#include "video/video_encode.h"
#endif
#include "runtime/cancel.h"
#include "models/vae_latent_file.h"
#include "models/wan_vae.h"
#include "cli/args.h"
#include "cli/verb.h"
#include "cli/vae_cli.h"
#include "contract/option_values.h"
#include "runtime/allocator.h"

namespace {
using namespace ws::cli;  // the option rules (int_range, ...)

using ws::models::WanVae;

void add_model_options(ws::cli::Args& a) {
  a.value("vae", "WEIGHTS", "VAE weights (.safetensors or .pth; Wan2.2_VAE.pth or Wan2.1_VAE.pth)");
  a.value("vae_type", "TYPE", "auto (default: from the weights), wan2.1 or wan2.2; must match the weights");
  a.value("config", "YAML", "model YAML with the VAE widths (default: the weights' metadata, else released)");
  a.value("threads", "N", "CPU threads (default: all cores)", int_range(0, 1024));
  a.value("device", "DEV", "cpu (default) or cuda[:N] in CUDA builds");
  a.flag("bf16", "bf16 compute (CUDA builds; fp32 elsewhere, with a warning)");
  a.flag("low_vram", "keep weights on the CPU between calls (CUDA builds)");
}

// Threads, then the config (flag YAML > weights metadata > released) without loading weights,
// so a clip of the wrong shape fails before the 2.8 GB load.
ws::models::WanVaeConfig vae_config(const ws::cli::Args& a, nlohmann::json* keys) {
  if (!a.has("vae")) throw ws::UsageError("--vae WEIGHTS is required");
  ws::cli::vae_cli_threads(a.integer("threads", 0));
  // SIGINT/SIGTERM end an encode or decode within one stage; the output is written only at the end.
  ws::runtime::install_cancel_handlers(false);
  ws::runtime::stop_inside_computations();
  *keys = a.has("config") ? ws::models::read_vae_config_yaml(a.str("config")) : nlohmann::json::object();
  if (a.has("vae_type")) {
    const std::string t = a.str("vae_type");
    if (t != "auto") ws::models::parse_vae_type(t, "--vae_type");
    (*keys)["vae_type"] = t;  // the flag wins over the model YAML's
  }
  return WanVae::resolve_config(a.str("vae"), *keys);
}

std::unique_ptr<WanVae> open_vae(const ws::cli::Args& a, const nlohmann::json& keys, ws::models::WanVaeOptions opts) {
  opts.device = a.str("device", "cpu");
  opts.bf16 = a.boolean("bf16");
  opts.low_vram = a.boolean("low_vram");
  return WanVae::load(a.str("vae"), keys, opts);
}

// A video file through the data pipeline: frames 0, s, 2s, ... resized to cover and cropped.
torch::Tensor read_video_clip(const ws::cli::Args& a, const std::string& path, int64_t f,
                              std::vector<int64_t>* frames) {
#ifndef WANSTUDIO_HAVE_VIDEO
  (void)a;
  (void)f;
  (void)frames;
  throw ws::Error(path + ": video support is not built into this wanstudio-engine");
#else
  ws::video::VideoInfo info = ws::video::probe_video(path, true);
  const int64_t stride = a.integer("stride", 1);
  if (stride < 1) throw ws::UsageError("--stride must be at least 1");
  const int64_t available = info.still_image ? 1 : (info.frames + stride - 1) / stride;
  int64_t n = a.integer("frames", available);
  if (!ws::contract::is_4k_plus_1(n)) {
    if (a.has("frames")) throw ws::UsageError("--frames must be 4k+1 (1, 5, 9, ...)");
    n = (n - 1) / 4 * 4 + 1;
  }
  if (n > available)
    throw ws::Error(path + ": has " + std::to_string(available) + " frames at stride " + std::to_string(stride) +
                    ", asked for " + std::to_string(n));
  std::vector<int64_t> idx;
  for (int64_t i = 0; i < n; ++i) idx.push_back(i * stride);
  *frames = idx;
  int64_t h = info.height / f * f, w = info.width / f * f;  // f: the VAE's spatial factor
  if (a.has("size")) std::tie(h, w) = ws::cli::parse_size(a.str("size"));
  if (h < f || w < f || h % f || w % f)
    throw ws::UsageError("--size must be multiples of " + std::to_string(f) + " for this VAE, got " +
                         std::to_string(w) + "x" + std::to_string(h) + " (WxH)");
  return ws::data::read_clip(path, idx, h, w).unsqueeze(0);
#endif
}

int run_encode(const std::vector<std::string>& argv) {
  ws::cli::Args a("vae encode", "vae encode --vae WEIGHTS --input X.safetensors --out Z.safetensors",
                  "Encodes one clip: the input's `video` (or `x`, or only) tensor [3, T, H, W] in [-1, 1],\n"
                  "T = 1 + 4k, H and W multiples of 16 (Wan2.2 VAE) or 8 (Wan2.1 VAE), into normalised\n"
                  "latents [48, F, H/16, W/16] or [16, F, H/8, W/8].");
  add_model_options(a);
  a.value("input", "X.safetensors", "input video tensor");
  a.value("video", "FILE", "a video or image file instead of --input");
  a.value("size", "WxH",
          "--video: resize to cover and center crop to width x height (or H,W; default: the file's, floored to the "
          "VAE's factor)");
  a.value("frames", "N", "--video: frames to take, 4k+1 (default: as many as the file has, floored to 4k+1)",
          frames_upto(4001));
  a.value("stride", "S", "--video: frame stride (default 1)", int_range(1, 1000));
  a.value("out", "Z.safetensors", "output latents");
  if (!a.parse(argv)) return 0;
  if ((!a.has("input") && !a.has("video")) || !a.has("out"))
    throw ws::UsageError("vae encode needs --input or --video, and --out");
  const std::string in = a.has("video") ? a.str("video") : a.str("input"), out = a.str("out");
  std::vector<int64_t> frames;
  nlohmann::json keys;
  const auto cfg = vae_config(a, &keys);
  torch::Tensor x = a.has("video") ? read_video_clip(a, in, cfg.spatial_factor(), &frames)
                                   : ws::cli::read_clip_tensor(in, {"video", "x"}, 3);  // [1, 3, T, H, W]
  WanVae::check_video(cfg, x, in);
  ws::runtime::return_large_blocks_to_system();  // one call: no transient is reused
  ws::models::WanVaeOptions opts;
  opts.encoder_only = true;  // the decoder's weights are never read
  auto vae = open_vae(a, keys, opts);
  ws::log::info("vae encode: {} {} with {} threads", in, ws::io::shape_str(x.sizes().vec()), at::get_num_threads());
  torch::Tensor z = vae->encode(x);
  auto meta = ws::cli::latent_metadata(a.str("vae"), vae->config(), x, frames);
  ws::io::write_safetensors(out, {{"latents", z.squeeze(0).contiguous()}}, meta);
  std::printf("%s\n", nlohmann::json{{"out", out}, {"latents", z.squeeze(0).sizes().vec()}}.dump().c_str());
  return 0;
}

int run_decode(const std::vector<std::string>& argv) {
  ws::cli::Args a("vae decode", "vae decode --vae WEIGHTS --input Z.safetensors --out X.safetensors",
                  "Decodes normalised latents [z, F, h, w] (`latents`) into a video tensor `video`\n"
                  "[3, 1 + 4(F-1), f·h, f·w] clamped to [-1, 1] (z 48, f 16: Wan2.2 VAE; z 16, f 8: Wan2.1).");
  add_model_options(a);
  // --input as in `vae encode`; --latents is the older name, still accepted.
  a.value("input", "Z.safetensors", "input latents");
  a.value("latents", "Z.safetensors", "the same as --input");
  a.value("out", "X.safetensors|X.mp4", "output video tensor, or an MP4 when the name ends in .mp4");
  a.value("fps", "F", "frame rate of an MP4 output (default 16)", real_range(1, 240));
  a.flag("tiled", "decode in 32x32 latent tiles (overlap 8): less memory, not exact");
  a.flag("no_clamp", "keep values outside [-1, 1]");
  if (!a.parse(argv)) return 0;
  if (a.has("input") && a.has("latents")) throw ws::UsageError("give the latents once: --input or --latents");
  if ((!a.has("input") && !a.has("latents")) || !a.has("out"))
    throw ws::UsageError("vae decode needs --input and --out");
  const std::string in = a.has("input") ? a.str("input") : a.str("latents"), out = a.str("out");
  torch::Tensor z = ws::cli::read_clip_tensor(in, {"latents"}, -1);  // [1, C, F, h, w]
  nlohmann::json keys;
  const auto cfg = vae_config(a, &keys);
  ws::models::check_latent_file_type(in, z.size(1), cfg);
  WanVae::check_latent(cfg, z, in);
  ws::models::WanVaeOptions opts;
  opts.tiled_decode = a.boolean("tiled");
  opts.decoder_only = true;
  ws::runtime::return_large_blocks_to_system();  // one call: no transient is reused
  auto vae = open_vae(a, keys, opts);
  ws::log::info("vae decode: {} {} with {} threads", in, ws::io::shape_str(z.sizes().vec()), at::get_num_threads());
  torch::Tensor x = vae->decode(z, !a.boolean("no_clamp")).squeeze(0).contiguous();
  if (out.size() > 4 && out.compare(out.size() - 4, 4, ".mp4") == 0) {
#ifdef WANSTUDIO_HAVE_VIDEO
    ws::video::EncodeOptions eo;
    eo.fps = a.real("fps", 16.0);
    ws::video::write_video(out, ws::data::clip_to_frames(x), eo);
#else
    throw ws::Error(out + ": writing MP4 needs video support in this wanstudio-engine");
#endif
  } else {
    ws::io::write_safetensors(out, {{"video", x}},
                              {{"format", "wanstudio-video"}, {"layout", "[C,T,H,W]"}, {"range", "[-1,1]"}});
  }
  std::printf("%s\n", nlohmann::json{{"out", out}, {"video", x.sizes().vec()}}.dump().c_str());
  return 0;
}

int run_vae(const std::vector<std::string>& argv) {
  if (argv.empty() || argv[0] == "--help" || argv[0] == "-h") {
    std::printf(
        "usage: wanstudio-engine vae encode|decode [options]\n\n"
        "  encode   video tensor (.safetensors) -> normalised latents\n"
        "  decode   latents -> video tensor\n\n`wanstudio-engine vae encode --help` for options.\n");
    return argv.empty() ? 1 : 0;
  }
  if (argv[0] == "--print-schema") {
    ws::cli::print_subverbs_schema("vae", {"encode", "decode"});
    return 0;
  }
  std::vector<std::string> rest(argv.begin() + 1, argv.end());
  if (argv[0] == "encode") return run_encode(rest);
  if (argv[0] == "decode") return run_decode(rest);
  throw ws::UsageError("vae: unknown action '" + argv[0] + "' (encode or decode)");
}

}  // namespace

WS_VERB("vae", "Wan VAE (2.2 or 2.1): encode a video tensor to latents, decode latents", &run_vae);
