// SPDX-License-Identifier: Apache-2.0
// `bench train-e2e`: whole upsampler training steps as a user waits for them — the real trainer
// (`train-upsampler`, in this process) on real video files: the loader's decode, resize, crop and
// low-res downsample, both VAE encodes (x_hr and x_lr) and the model step. The VAE and the
// upsampler have random weights at the given widths. The trainer's own `step` events give the
// split (data_wait_s, vae_s, model_s, step_s); the first --warmup steps are not counted. One square
// bucket (enable_bucket off): the crop edge is floor(S/A)·A with A = lcm(16, 16·scale).
#include <torch/torch.h>

#include <filesystem>
#include <sstream>
#include <thread>

#include "cli/args.h"
#include "cli/bench/bench.h"
#include "core/error.h"
#include "core/fs.h"
#include "io/safetensors.h"
#include "io/state_dict.h"
#include "models/wan_vae.h"
#include "runtime/events.h"
#include "train/upsampler/upsampler_trainer.h"

namespace ws::cli {
namespace {

using json = nlohmann::json;

// A scratch folder removed on every exit path.
struct ScratchDir {
  std::string path;
  ScratchDir() {
    std::string t = (std::filesystem::temp_directory_path() / "wanstudio-e2e-XXXXXX").string();
    if (!mkdtemp(t.data())) throw Error("bench train-e2e: cannot create a scratch folder under " + t);
    path = t;
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

// The events stream back on stdout however the run ends.
struct QuietEvents {
  QuietEvents() { runtime::EventStream::global().set_stdout(false); }
  ~QuietEvents() {
    runtime::EventStream::global().close_file();
    runtime::EventStream::global().set_stdout(true);
  }
};

double median_ms(std::vector<double> s) {
  for (double& v : s) v *= 1000.0;
  return s.empty() ? 0.0 : bench_median(s);
}

int bench_train_e2e(const std::vector<std::string>& argv) {
  Args a("bench train-e2e", "bench train-e2e --meta M.json [options]",
         "Whole upsampler training steps of the real trainer on real video: decode, both VAE encodes and\n"
         "the model step, random weights. Last line: JSON with samples_per_s, ms_per_step_median,\n"
         "data_wait_ms_median, vae_ms_median, model_ms_median, peak_rss_mb.");
  a.value("meta", "M.json", "metadata.json of the videos (required)")
      .value("data_dir", "DIR", "folder file_path values are relative to (default: the metadata's folder)")
      .value("size", "S", "video_sample_size (default 256)", int_range(48, 4096))
      .value("frames", "T", "video_sample_n_frames (default 17)", frames_upto(1025))
      .value("stride", "K", "video_sample_stride (default 2)", int_range(1, 1000))
      .value("scale", "X", "the upsampler's rational_spatial_scale (default 1.5)", real_range(1, 4))
      .value("batch", "B", "clips per step (default 1)", int_range(1, 1024))
      .value("vae_dim", "D", "VAE encoder base width (default 16, the demo's; 160 is the released)", int_range(1, 4096))
      .value("vae_dec_dim", "E", "VAE decoder base width (default 16; 256 is the released)", int_range(1, 4096))
      .value("mid_channels", "C", "upsampler hidden width (default 64; 512 is the released)", int_range(1, 4096))
      .value("blocks", "N", "upsampler ResBlocks per stage (default 1; 4 is the released)", int_range(1, 64))
      .value("steps", "S", "timed steps (default 10)", int_range(1, 100000))
      .value("warmup", "W", "untimed steps first (default 2)", int_range(0, 100000))
      .value("workers", "N", "decode threads (default 1)", int_range(0, 64))
      .value("threads", "K", "LibTorch threads (default: all cores)", int_range(1, 1024))
      .flag("cache_latents", "the trainer's latent cache (each clip window encoded once, read back after)")
      .flag("no_overlap", "encode each batch in the step itself (overlap_vae_encode false)")
      .flag("gradient_checkpointing", "recompute the upsampler's ResBlocks in backward");
  if (!a.parse(argv)) return 0;
  if (!a.has("meta")) throw UsageError("bench train-e2e needs --meta");
  const int64_t steps = a.integer("steps", 10), warmup = a.integer("warmup", 2);
  if (steps < 1 || warmup < 0) throw UsageError("--steps must be positive and --warmup not negative");
  const int threads = bench_set_threads(a.integer("threads", std::max(1u, std::thread::hardware_concurrency())));

  ScratchDir scratch;
  models::WanVaeConfig vc;  // Wan2.2 layout at the asked widths
  vc.dim = a.integer("vae_dim", 16);
  vc.dec_dim = a.integer("vae_dec_dim", 16);
  vc.validate("bench train-e2e");
  {
    auto vae = models::WanVae::random(vc, 0, models::WanVaeOptions{});
    io::write_safetensors(fs::join(scratch.path, "vae.safetensors"), io::module_state_dict(vae->net()),
                          {{"config", vc.to_json().dump()}, {"format", "pt"}});
  }
  const std::string scale = a.str("scale", "1.5");
  fs::write_file_atomic(fs::join(scratch.path, "model.yaml"),
                        "latent_upsampler_kwargs:\n  mid_channels: " + std::to_string(a.integer("mid_channels", 64)) +
                            "\n  num_blocks_per_stage: " + std::to_string(a.integer("blocks", 1)) +
                            "\n  rational_spatial_scale: " + scale + "\n");
  const std::string run = fs::join(scratch.path, "run");
  std::vector<std::string> args = {
      "--config_path",
      fs::join(scratch.path, "model.yaml"),
      "--vae_path",
      fs::join(scratch.path, "vae.safetensors"),
      "--train_data_meta",
      a.str("meta"),
      "--video_sample_size",
      std::to_string(a.integer("size", 256)),
      "--video_sample_n_frames",
      std::to_string(a.integer("frames", 17)),
      "--video_sample_stride",
      std::to_string(a.integer("stride", 2)),
      "--train_batch_size",
      std::to_string(a.integer("batch", 1)),
      "--dataloader_num_workers",
      std::to_string(a.integer("workers", 1)),
      "--max_train_steps",
      std::to_string(warmup + steps),
      "--checkpointing_steps",
      "1000000000",
      "--output_dir",
      run,
      "--report_to",
      "none",
      "--lr_warmup_steps",
      "0",
      "--seed",
      "0",
      "--enable_bucket=false",
      "--random_hw_adapt=false",
      std::string("--gradient_checkpointing=") + (a.boolean("gradient_checkpointing") ? "true" : "false")};
  if (a.has("data_dir")) args.insert(args.end(), {"--train_data_dir", a.str("data_dir")});
  if (a.boolean("cache_latents")) args.push_back("--cache_latents");
  args.push_back(a.boolean("no_overlap") ? "--overlap_vae_encode=false" : "--overlap_vae_encode=true");
  int rc = 0;
  {
    QuietEvents quiet;
    rc = train::run_train_upsampler(args);
  }
  const std::string events_path = fs::join(run, "events.jsonl");
  if (rc != 0 || !fs::exists(events_path))
    throw Error("bench train-e2e: the training run failed (exit " + std::to_string(rc) + "); its log is above");

  std::vector<double> step_s, wait_s, vae_s, model_s;
  int64_t seen = 0;
  json first;
  std::istringstream lines(fs::read_file(events_path));
  for (std::string line; std::getline(lines, line);) {
    const json e = json::parse(line, nullptr, false);
    if (e.is_discarded() || e.value("type", "") != "step") continue;
    if (seen++ < warmup) continue;
    if (first.is_null()) first = e;
    step_s.push_back(e.value("step_s", 0.0));
    wait_s.push_back(e.value("data_wait_s", 0.0));
    vae_s.push_back(e.value("vae_s", 0.0));
    model_s.push_back(e.value("model_s", 0.0));
  }
  const double samples = static_cast<double>(step_s.size() * static_cast<size_t>(a.integer("batch", 1)));
  if (step_s.empty()) throw Error("bench train-e2e: the run reported no step after the warmup");
  double total = 0;
  for (double s : step_s) total += s;
  std::vector<double> ms;
  for (double s : step_s) ms.push_back(s * 1000.0);
  json extra = {{"threads", threads},
                {"steps", step_s.size()},
                {"vae_dim", vc.dim},
                {"vae_dec_dim", vc.dec_dim},
                {"mid_channels", a.integer("mid_channels", 64)},
                {"blocks", a.integer("blocks", 1)},
                {"size_hr", first.value("size_hr", json())},
                {"size_lr", first.value("size_lr", json())},
                {"frames", first.value("frames", json())},
                {"samples_per_s", total > 0 ? samples / total : 0.0},
                {"cache_latents", a.boolean("cache_latents")},
                {"overlap_vae_encode", !a.boolean("no_overlap")},
                {"data_wait_ms_median", median_ms(wait_s)},
                {"vae_ms_median", median_ms(vae_s)},
                {"model_ms_median", median_ms(model_s)}};
  bench_report(ms, extra, "step");
  return 0;
}

}  // namespace

WS_BENCH_KIND("train-e2e", "whole upsampler training steps of the real trainer on real video (decode, VAE, model)",
              &bench_train_e2e);

}  // namespace ws::cli
