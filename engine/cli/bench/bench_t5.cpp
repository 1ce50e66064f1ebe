// SPDX-License-Identifier: Apache-2.0
// `bench t5-encode`: UMT5 encoder forwards on random ids with seeded random weights held as the
// release holds them (bf16 by default), computed in fp32 (or bf16). `--layers` and `--vocab`
// shrink a released width to what fits, so a per-block figure can be scaled to 24 layers.
#include <torch/torch.h>

#include <thread>

#include "cli/args.h"
#include "cli/bench/bench.h"
#include "core/error.h"
#include "io/model_yaml.h"
#include "models/umt5.h"

namespace ws::cli {
namespace {

int bench_t5_encode(const std::vector<std::string>& argv) {
  Args a("bench t5-encode", "bench t5-encode --config C [options]",
         "Seeded random UMT5 weights, random ids; times encoder forwards of B captions of N tokens.\n"
         "Last line: JSON with ms_per_batch_median, tokens_per_s, peak_rss_mb, params.");
  a.value("config", "C", "UMT5 sizes (.yaml/.json: vocab, dim, dim_attn, dim_ffn, num_heads, num_layers, num_buckets)")
      .value("tokens", "N", "tokens per caption, EOS included (default 128)", int_range(1, 4096))
      .value("batch", "B", "captions per forward (default 1)", int_range(1, 1024))
      .value("steps", "S", "timed forwards (default 3)", int_range(1, 100000))
      .value("warmup", "W", "untimed forwards first (default 1)", int_range(0, 100000))
      .value("threads", "K", "CPU threads (default: all cores)", int_range(1, 1024))
      .value("layers", "L", "override num_layers", int_range(1, 1000))
      .value("vocab", "V", "override vocab (the embedding table's rows)", int_range(1, 10000000))
      .value("weights", "fp32|bf16", "dtype the weights are held in (default bf16, as released)")
      .flag("bf16", "compute in bf16 (Wan's dtype) instead of fp32");
  if (!a.parse(argv)) return 0;
  if (!a.has("config")) throw UsageError("bench t5-encode needs --config");
  models::Umt5Config cfg = models::Umt5Config::from_json(io::read_model_yaml(a.str("config")).doc, a.str("config"));
  if (a.has("layers")) cfg.num_layers = a.integer("layers", cfg.num_layers);
  if (a.has("vocab")) cfg.vocab = a.integer("vocab", cfg.vocab);
  cfg.validate(a.str("config"));
  const int64_t tokens = a.integer("tokens", 128), batch = a.integer("batch", 1);
  const int64_t steps = a.integer("steps", 3), warmup = a.integer("warmup", 1);
  if (tokens < 1 || batch < 1 || steps < 1) throw UsageError("--tokens, --batch and --steps must be positive");
  const std::string wdt = a.str("weights", "bf16");
  if (wdt != "bf16" && wdt != "fp32") throw UsageError("--weights: fp32 or bf16");
  const int threads = bench_set_threads(a.integer("threads", std::max(1u, std::thread::hardware_concurrency())));

  // Weights straight in their dtype, one tensor at a time (no fp32 copy of a bf16 model).
  torch::manual_seed(0);
  const auto dt = wdt == "bf16" ? torch::kBFloat16 : torch::kFloat;
  io::StateDict sd;
  auto add = [&](const std::string& k, std::vector<int64_t> shape, double std) {
    // In slices of rows, so a 256k-row bf16 table never exists in fp32.
    torch::Tensor t = torch::empty(shape, torch::TensorOptions().dtype(dt));
    const int64_t rows = shape[0],
                  per = std::max<int64_t>(1, (int64_t{1} << 24) / std::max<int64_t>(1, t.numel() / rows));
    for (int64_t r = 0; r < rows; r += per) {
      const int64_t n = std::min(per, rows - r);
      auto sub_shape = shape;
      sub_shape[0] = n;
      t.narrow(0, r, n).copy_(torch::randn(sub_shape, torch::kFloat).mul_(std));
    }
    sd[k] = t;
  };
  add("token_embedding.weight", {cfg.vocab, cfg.dim}, 1.0);
  add("norm.weight", {cfg.dim}, 0.1);
  for (int64_t i = 0; i < cfg.num_layers; ++i) {
    const std::string b = "blocks." + std::to_string(i) + ".";
    add(b + "norm1.weight", {cfg.dim}, 0.1);
    add(b + "norm2.weight", {cfg.dim}, 0.1);
    for (const char* k : {"attn.q.weight", "attn.k.weight", "attn.v.weight"}) add(b + k, {cfg.dim_attn, cfg.dim}, 0.02);
    add(b + "attn.o.weight", {cfg.dim, cfg.dim_attn}, 0.02);
    add(b + "pos_embedding.embedding.weight", {cfg.num_buckets, cfg.num_heads}, 1.0);
    add(b + "ffn.gate.0.weight", {cfg.dim_ffn, cfg.dim}, 0.02);
    add(b + "ffn.fc1.weight", {cfg.dim_ffn, cfg.dim}, 0.02);
    add(b + "ffn.fc2.weight", {cfg.dim, cfg.dim_ffn}, 0.02);
  }
  models::Umt5Encoder enc(cfg, std::move(sd), "bench weights");
  if (a.boolean("bf16")) enc.set_compute_dtype(torch::kBFloat16);
  auto ids = torch::randint(3, cfg.vocab, {batch, tokens}, torch::kInt64);
  ids.select(1, tokens - 1).fill_(1);
  const auto mask = torch::ones({batch, tokens}, torch::kInt64);
  auto ms = bench_time("t5-encode", warmup, steps, [&] { (void)enc.forward(ids, mask); });
  const double median = bench_median(ms);  // the report's own median
  bench_report(ms,
               {{"params", cfg.parameter_count()},
                {"threads", threads},
                {"tokens", tokens},
                {"batch", batch},
                {"dim", cfg.dim},
                {"layers", cfg.num_layers},
                {"vocab", cfg.vocab},
                {"weights", wdt},
                {"compute", a.boolean("bf16") ? "bf16" : "fp32"},
                {"tokens_per_s", median > 0 ? static_cast<double>(batch * tokens) / (median / 1000.0) : 0.0}},
               "batch");
  return 0;
}

}  // namespace

WS_BENCH_KIND("t5-encode", "UMT5 text encoder forwards (random weights as released, random ids)", &bench_t5_encode);

}  // namespace ws::cli
