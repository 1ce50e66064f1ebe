// SPDX-License-Identifier: Apache-2.0
// `bench caption`: the engine's Qwen2.5-VL captioner on synthetic frames — the vision tower, the
// time to the first token, and greedy decoding per token — from a release folder (or the test's
// tiny model). On a lent GPU the device check also compares its greedy ids with the CPU's.
#include <torch/torch.h>

#include <thread>

#include "cli/args.h"
#include "cli/bench/bench.h"
#include "cli/device_option.h"
#include "core/error.h"
#include "core/fs.h"
#include "models/qwen_vl.h"
#include "models/qwen_vl_preprocess.h"
#include "text/qwen_tokenizer.h"

namespace ws::cli {
namespace {

int bench_caption(const std::vector<std::string>& argv) {
  Args a("bench caption", "bench caption --model_path DIR [options]",
         "Greedy captions of synthetic frames by Qwen2.5-VL in the engine (a release folder). Times the\n"
         "vision tower alone, then whole captions of 1 token (the time to the first token: the tower,\n"
         "the prefill, one step) and of --new_tokens tokens (a decoding step: the difference per\n"
         "token). Last line: JSON with vision_ms, first_token_ms, decode_ms_per_token, the ids, peak_rss_mb.");
  a.value("model_path", "DIR", "a Qwen2.5-VL folder: config.json, *.safetensors, tokenizer.json (required)")
      .value("device", "DEV", "cpu (default), auto, cuda or cuda:N")
      .value("dtype", "fp32|bf16", "compute dtype (default fp32)")
      .value("frames", "N", "frames of the clip (default 4)", int_range(1, 64))
      .value("size", "HxW", "frame size, multiples of 28 (default 280x504)")
      .value("new_tokens", "N", "tokens generated per caption (default 16)", int_range(2, 4096))
      .value("reps", "R", "timed runs of each (default 3)", int_range(1, 1000))
      .value("warmup", "W", "untimed runs first (default 1)", int_range(0, 1000))
      .value("threads", "K", "CPU threads (default: all cores)", int_range(1, 1024));
  if (!a.parse(argv)) return 0;
  if (!a.has("model_path")) throw UsageError("bench caption needs --model_path");
  const std::string dir = a.str("model_path");
  const int threads = bench_set_threads(a.integer("threads", std::max(1u, std::thread::hardware_concurrency())));
  const torch::Device device = parse_device_option(a.str("device", "cpu"));
  const std::string dt = a.str("dtype", "fp32");
  if (dt != "fp32" && dt != "bf16") throw UsageError("--dtype: fp32 or bf16");
  int64_t h = 280, w = 504;
  if (a.has("size") &&
      (std::sscanf(a.str("size").c_str(), "%ldx%ld", &h, &w) != 2 || h < 28 || w < 28 || h > 4096 || w > 4096))
    throw UsageError("--size: HxW from 28 to 4096, multiples of 28, e.g. 280x504");

  const models::QwenVl model = models::QwenVl::load(dir, dt == "bf16" ? torch::kBFloat16 : torch::kFloat, device);
  const text::QwenTokenizer tokenizer(fs::join(dir, "tokenizer.json"));
  torch::manual_seed(0);
  models::QwenVideoInput video;
  video.patches = models::qwen_video_patches(torch::randint(0, 256, {a.integer("frames", 4), h, w, 3}, torch::kUInt8),
                                             model.config().vision, &video.grid);
  const int64_t pads = video.grid[0] * video.grid[1] * video.grid[2] / model.config().vision.merge_unit();
  const auto ids = tokenizer.encode(models::qwen_chat_prompt("Describe this video.", {pads}));
  const int64_t n = a.integer("new_tokens", 16), reps = a.integer("reps", 3), warmup = a.integer("warmup", 1);
  auto sync = [&] {
    if (device.is_cuda()) torch::cuda::synchronize();
  };
  auto caption = [&](int64_t tokens) {
    models::QwenGenerateOptions o;
    o.max_new_tokens = tokens;
    o.stop_at_eos = false;
    auto out = model.generate(ids, {video}, o);
    sync();
    return out;
  };
  const auto vision = bench_time("vision tower", warmup, reps, [&] {
    torch::NoGradGuard no_grad;
    (void)model.vision().forward(video.patches, video.grid);
    sync();
  });
  const auto one = bench_time("caption of 1 token", warmup, reps, [&] { (void)caption(1); });
  std::vector<int64_t> out;
  const auto full = bench_time("caption of " + std::to_string(n) + " tokens", warmup, reps, [&] { out = caption(n); });
  nlohmann::json extra{{"device", device.str()},
                       {"dtype", dt},
                       {"threads", threads},
                       {"grid", video.grid},
                       {"prompt_tokens", ids.size()},
                       {"vision_ms", bench_median(vision)},
                       {"first_token_ms", bench_median(one)},
                       {"decode_ms_per_token", (bench_median(full) - bench_median(one)) / static_cast<double>(n - 1)},
                       {"ids", out}};
  std::printf("%s\n", bench_report(full, extra, "caption").dump().c_str());
  return 0;
}

}  // namespace

WS_BENCH_KIND("caption", "Qwen2.5-VL captions in the engine: vision tower, prefill, decoding per token",
              &bench_caption);

}  // namespace ws::cli
