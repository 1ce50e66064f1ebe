// `bench dit-train`: whole WanModel optimizer steps through the trainer's own ExpertStep
// (flow-matching loss, backward, clipping, AdamW) on random latents and text, fresh weights.
// `--layers` overrides the depth, so a released width (the 1.3B's dim 1536) can be timed per
// block on a machine without room for the whole model.
#include <torch/torch.h>

#include <thread>

#include "core/error.h"
#include "models/wan_dit.h"
#include "cli/args.h"
#include "train/training_device.h"
#include "cli/bench.h"
#include "train/expert_step.h"

namespace ws::cli {
namespace {

int bench_dit_train(const std::vector<std::string>& argv) {
  Args a("bench dit-train", "bench dit-train --config C [options]",
         "Fresh WanModel weights (seed 0), random latents and text; times whole optimizer steps of\n"
         "train::ExpertStep. Last line: JSON with ms_per_step_median, peak_rss_mb, params.");
  a.value("config", "C", "WanModel config (.yaml or config.json)")
      .value("tokens", "N", "latent tokens per sample (default 1024)")
      .value("batch", "B", "samples per step (default 1)")
      .value("steps", "S", "timed steps (default 3)")
      .value("warmup", "W", "untimed steps first (default 1)")
      .value("threads", "K", "CPU threads (default: all cores)")
      .value("layers", "L", "override num_layers (time a released width with fewer blocks)")
      .value("text_tokens", "T", "rows of the text context (default text_len)")
      .flag("gradient_checkpointing", "recompute each block in backward")
      .flag("fp8", "block Linears read fp8 e4m3 copies of their weights (re-quantised after each update)")
      .flag("bf16", "bf16 matmuls and attention from fp32 master weights (the trainer's GPU mixed precision)");
  if (!a.parse(argv)) return 0;
  if (!a.has("config")) throw UsageError("bench dit-train needs --config");
  models::WanConfig cfg = models::load_wan_config(a.str("config"));
  if (a.has("layers")) cfg.num_layers = a.integer("layers", cfg.num_layers);
  cfg.validate(a.str("config"));
  const int64_t tokens = a.integer("tokens", 1024), batch = a.integer("batch", 1);
  const int64_t steps = a.integer("steps", 3), warmup = a.integer("warmup", 1);
  const int64_t text = a.integer("text_tokens", cfg.text_len);
  if (tokens < 1 || batch < 1 || steps < 1 || text < 1 || text > cfg.text_len)
    throw UsageError("--tokens, --batch and --steps must be positive; --text_tokens 1..text_len");
  const int threads = bench_set_threads(a.integer("threads", std::max(1u, std::thread::hardware_concurrency())));
  const auto g = bench_token_grid(tokens);

  torch::manual_seed(0);
  models::WanModel model(cfg);
  model->set_gradient_checkpointing(a.boolean("gradient_checkpointing"));
  model->set_fp8(a.boolean("fp8"));
  if (a.boolean("bf16")) model->set_compute_dtype(torch::kBFloat16);
  const torch::Device device = train::training_device(0);
  train::ExpertStepOptions o;
  o.learning_rate = 1e-5;
  o.clip.max_grad_norm = 1.0;
  train::ExpertStep step(model, o);
  step.to(device);
  std::vector<train::ExpertStepInput> in(static_cast<size_t>(batch));
  for (auto& s : in) {
    s.x0 = torch::randn({cfg.in_dim, g[0], g[1], g[2]});
    s.noise = torch::randn({cfg.in_dim, g[0], g[1], g[2]});
    s.sigma = 0.5f;
    s.t = 500;
    s.context = torch::randn({text, cfg.text_dim});
  }
  auto ms = bench_time("dit-train", warmup, steps, [&] {
    step.begin_accumulation();
    for (auto& s : in) step.accumulate(s, 1.0 / static_cast<double>(batch));
    step.finish_gradients();
    step.update();
  });
  int64_t params = 0;
  for (const auto& p : model->parameters()) params += p.numel();
  bench_report(ms,
               {{"params", params}, {"threads", threads}, {"tokens", tokens}, {"batch", batch},
                {"latent", {cfg.in_dim, g[0], g[1], g[2]}}, {"dim", cfg.dim}, {"layers", cfg.num_layers},
                {"text_tokens", text}, {"gradient_checkpointing", a.boolean("gradient_checkpointing")},
                {"fp8_bytes", model->fp8_bytes()}, {"bf16", a.boolean("bf16")}, {"device", device.str()}},
               "step");
  return 0;
}

}  // namespace

WS_BENCH_KIND("dit-train", "WanModel optimizer steps through train::ExpertStep (loss, backward, clip, AdamW)",
              &bench_dit_train);

}  // namespace ws::cli
