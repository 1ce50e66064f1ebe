// SPDX-License-Identifier: Apache-2.0
// `bench sample-step`: denoising steps of the sampler (two forward passes for classifier-free
// guidance and one UniPC update) with fresh WanModel weights, random noise and text. `--layers`
// overrides the depth, so a released width (the 1.3B's dim 1536) is timed per block.
#include <torch/torch.h>

#include <thread>

#include "cli/args.h"
#include "cli/bench/bench.h"
#include "core/error.h"
#include "models/wan_dit.h"
#include "runtime/allocator.h"
#include "sampling/expert_sampler.h"

namespace ws::cli {
namespace {

int bench_sample_step(const std::vector<std::string>& argv) {
  Args a("bench sample-step", "bench sample-step --config C [options]",
         "Fresh WanModel weights (seed 0); times denoising steps (2 forward passes + the solver) on\n"
         "random noise and text. Last line: JSON with ms_per_step_median, peak_rss_mb, params.");
  a.value("config", "C", "WanModel config (.yaml or config.json)")
      .value("tokens", "N", "latent tokens (default 1024)", int_range(1, 1000000))
      .value("steps", "S", "denoising steps per timed run (default 4)", int_range(1, 1000))
      .value("reps", "R", "timed runs (default 3)", int_range(1, 100000))
      .value("threads", "K", "CPU threads (default: all cores)", int_range(1, 1024))
      .value("layers", "L", "override num_layers", int_range(1, 1000))
      .value("text_tokens", "T", "rows of the text context (default text_len)", int_range(1, 4096))
      .value("sample_solver", "S", "unipc (default) or dpm++", one_of({"unipc", "dpm++"}))
      .flag("glibc_default_allocator",
            "leave glibc's malloc policy as it is (as the reference runs) instead of keeping freed blocks")
      .flag("recompute_text", "recompute the text embedding and cross-attention keys/values at every step");
  if (!a.parse(argv)) return 0;
  if (!a.has("config")) throw UsageError("bench sample-step needs --config");
  models::WanConfig cfg = models::load_wan_config(a.str("config"));
  if (a.has("layers")) cfg.num_layers = a.integer("layers", cfg.num_layers);
  cfg.validate(a.str("config"));
  const int64_t tokens = a.integer("tokens", 1024), steps = a.integer("steps", 4), reps = a.integer("reps", 3);
  const int64_t text = a.integer("text_tokens", cfg.text_len);
  if (tokens < 1 || steps < 1 || reps < 1 || text < 1 || text > cfg.text_len)
    throw UsageError("--tokens, --steps and --reps must be positive; --text_tokens 1..text_len");
  if (cfg.model_type == "i2v") throw UsageError("bench sample-step times t2v/ti2v layouts");
  const int threads = bench_set_threads(a.integer("threads", std::max(1u, std::thread::hardware_concurrency())));
  if (!a.boolean("glibc_default_allocator"))
    ws::runtime::keep_large_blocks_for_reuse();  // as `sample` does while it steps
  const auto g = bench_token_grid(tokens);
  torch::manual_seed(0);
  sampling::SamplerModels m;
  m.low = models::WanModel(cfg);
  m.low->eval();
  sampling::SamplerInputs in;
  in.noise = torch::randn({cfg.out_dim, g[0], g[1], g[2]});
  in.context = torch::randn({text, cfg.text_dim});
  in.context_null = torch::randn({text, cfg.text_dim});
  sampling::SamplerOptions o;
  o.solver = sampling::parse_solver(a.str("sample_solver", "unipc"));
  o.steps = steps;
  o.shift = 5.0;
  o.guide_low = o.guide_high = 5.0;
  o.cache_text = !a.boolean("recompute_text");
  auto ms = bench_time("sample-step", 1, reps, [&] { sampling::sample_latents(m, in, o); });
  for (double& v : ms) v /= static_cast<double>(steps);  // per denoising step
  int64_t params = 0;
  for (const auto& p : m.low->parameters()) params += p.numel();
  bench_report(ms,
               {{"params", params},
                {"threads", threads},
                {"tokens", tokens},
                {"latent", {cfg.out_dim, g[0], g[1], g[2]}},
                {"dim", cfg.dim},
                {"layers", cfg.num_layers},
                {"text_tokens", text},
                {"steps_per_run", steps},
                {"text_cache", o.cache_text},
                {"allocator", a.boolean("glibc_default_allocator") ? "glibc default" : "freed blocks kept"},
                {"solver", sampling::solver_name(o.solver)}},
               "step");
  return 0;
}

}  // namespace

WS_BENCH_KIND("sample-step", "sampler denoising steps (2 WanModel forwards for CFG + the UniPC/DPM++ update)",
              &bench_sample_step);

}  // namespace ws::cli
