// SPDX-License-Identifier: Apache-2.0
// `bench dit-train`: whole WanModel optimizer steps through the trainer's own ExpertStep
// (flow-matching loss, backward, clipping, AdamW) on random latents and text, fresh weights.
// `--layers` overrides the depth, so a released width (the 1.3B's dim 1536) can be timed per
// block on a machine without room for the whole model. `--lora_rank` times LoRA training instead;
// the report adds the memory per rank of the config's full depth (LoRA, or full fine-tuning with
// ZeRO-2 over `--zero_ranks`), from the tensors' sizes (docs/design/lora.md, zero.md).
#include <torch/torch.h>

#include <memory>
#include <thread>

#include "core/error.h"
#include "models/fp8.h"
#include "models/wan_dit.h"
#include "models/wan_dit_ops.h"
#include "cli/args.h"
#include "train/training_device.h"
#include "cli/bench/bench.h"
#include "cli/bench/bench_dit_parts.h"
#include "runtime/allocator.h"
#include "runtime/events.h"
#include "models/wan_lora.h"
#include "train/experts/expert_lora.h"
#include "train/experts/expert_step.h"
#include "train/memory_estimate.h"

namespace ws::cli {
namespace {

// Bytes per rank of one expert at the config's depth: frozen bf16 block Linears plus fp32 adapters
// with their gradients and moments (LoRA), or weights with gradients and moments, the moments
// (and, between steps, the gradients) divided over P ranks (ZeRO-2). With bf16 weights the block
// Linears and their gradients take 2 bytes on every rank, and their fp32 masters (with the masters'
// gradients) are divided over P like the moments. A LoRA base with fp8 keeps 1-byte weight codes.
nlohmann::json memory_per_rank(const models::WanConfig& c, int64_t lora_rank, int64_t ranks, bool bf16_weights,
                               bool fp8) {
  const int64_t D = c.dim, F = c.ffn_dim, L = c.num_layers;
  const int64_t total = c.parameter_count();
  const int64_t block_linears = L * (8 * (D * D + D) + (D * F + F) + (F * D + D));
  nlohmann::json j = {{"layers", L}, {"parameters", total}};
  if (lora_rank > 0) {
    const int64_t adapters = L * lora_rank * (8 * (D + D) + 2 * (D + F));
    // With fp8 the base's block Linear weights are 1-byte codes (their biases stay bf16).
    const int64_t block_weights = L * (8 * D * D + 2 * D * F);
    const int64_t base = fp8 ? block_weights + (block_linears - block_weights) * 2 + (total - block_linears) * 4
                             : block_linears * 2 + (total - block_linears) * 4;
    j["lora"] = {{"rank", lora_rank},
                 {"base_dtype", fp8 ? "fp8 e4m3 codes" : "bf16"},
                 {"trainable_parameters", adapters},
                 {"base_bytes", base},
                 {"adapter_bytes", adapters * 16},
                 {"bytes_per_rank", base + adapters * 16}};
  } else {
    const int64_t m = total * 8;
    if (!bf16_weights) {
      const int64_t w = total * 4, g = total * 4;
      j["full"] = {{"ranks", ranks},
                   {"weight_dtype", "fp32"},
                   {"weight_bytes", w},
                   {"gradient_bytes", g},
                   {"moment_bytes_per_rank", m / ranks},
                   {"bytes_per_rank_between_steps", w + (g + m) / ranks},
                   {"bytes_per_rank_backward_peak", w + g + m / ranks}};
    } else {
      const int64_t w = block_linears * 2 + (total - block_linears) * 4, g = w;
      const int64_t masters = block_linears * 4;  // and as much again for their gradients
      j["full"] = {{"ranks", ranks},
                   {"weight_dtype", "bf16"},
                   {"weight_bytes", w},
                   {"gradient_bytes", g},
                   {"moment_bytes_per_rank", m / ranks},
                   {"master_bytes_per_rank", masters / ranks},
                   {"bytes_per_rank_between_steps", w + (masters + m) / ranks},
                   {"bytes_per_rank_backward_peak", w + g + (2 * masters + m) / ranks}};
    }
  }
  return j;
}

int bench_dit_train(const std::vector<std::string>& argv) {
  Args a("bench dit-train", "bench dit-train --config C [options]",
         "Fresh WanModel weights (seed 0), random latents and text; times whole optimizer steps of\n"
         "train::ExpertStep. Last line: JSON with ms_per_step_median, peak_rss_mb, params.");
  a.value("config", "C", "WanModel config (.yaml or config.json)")
      .value("tokens", "N", "latent tokens per sample (default 1024)", int_range(1, 1000000))
      .value("batch", "B", "samples per step (default 1)", int_range(1, 1024))
      .value("steps", "S", "timed steps (default 3)", int_range(1, 100000))
      .value("warmup", "W", "untimed steps first (default 1)", int_range(0, 100000))
      .value("threads", "K", "CPU threads (default: all cores)", int_range(1, 1024))
      .value("layers", "L", "override num_layers (time a released width with fewer blocks)", int_range(1, 1000))
      .value("text_tokens", "T", "rows of the text context (default text_len)", int_range(1, 4096))
      .flag("gradient_checkpointing", "recompute each block in backward")
      .flag("gradient_checkpointing_offload", "keep each block's input in host memory (implies checkpointing)")
      .flag("gradient_checkpointing_parts", "recompute a block's three parts one at a time (implies checkpointing)")
      .value("blocks_to_swap", "N",
             "the last N blocks wait in host memory and are copied in before they run (implies checkpointing)",
             int_range(0, 1000))
      .flag("glibc_default_allocator",
            "leave glibc's malloc policy as it is (as the reference runs) instead of keeping freed blocks")
      .flag("breakdown", "then time each part of the step alone (attention, Linears, norms, RoPE, AdamW, clipping)")
      .flag("fp8", "block Linears read fp8 e4m3 copies of their weights (re-quantised after each update)")
      .flag("bf16", "bf16 matmuls and attention from fp32 master weights (the trainer's GPU mixed precision)")
      .value("lora_rank", "R", "train LoRA adapters of rank R on every block Linear, the base frozen in bf16",
             int_range(0, 4096))
      .value("zero_ranks", "P", "full fine-tuning: report the memory per rank with ZeRO-2 over P ranks (default 1)",
             int_range(1, 65536))
      .value("weight_dtype", "D",
             "full fine-tuning: fp32 (default) or bf16 block Linears trained through fp32 masters");
  if (!a.parse(argv)) return 0;
  if (!a.has("config")) throw UsageError("bench dit-train needs --config");
  models::WanConfig cfg = models::load_wan_config(a.str("config"));
  const models::WanConfig full_depth = cfg;
  const int64_t lora_rank = a.integer("lora_rank", 0), zero_ranks = a.integer("zero_ranks", 1);
  if (lora_rank < 0 || zero_ranks < 1) throw UsageError("--lora_rank must be ≥ 1 and --zero_ranks ≥ 1");
  const std::string weight_dtype = a.str("weight_dtype", "fp32");
  if (weight_dtype != "fp32" && weight_dtype != "bf16") throw UsageError("--weight_dtype is fp32 or bf16");
  const bool bf16_weights = weight_dtype == "bf16";
  if (bf16_weights && lora_rank > 0)
    throw UsageError("--weight_dtype bf16 is for full fine-tuning (LoRA's base is bf16 already)");
  if (a.has("layers")) cfg.num_layers = a.integer("layers", cfg.num_layers);
  cfg.validate(a.str("config"));
  const int64_t tokens = a.integer("tokens", 1024), batch = a.integer("batch", 1);
  const int64_t steps = a.integer("steps", 3), warmup = a.integer("warmup", 1);
  const int64_t text = a.integer("text_tokens", cfg.text_len);
  if (tokens < 1 || batch < 1 || steps < 1 || text < 1 || text > cfg.text_len)
    throw UsageError("--tokens, --batch and --steps must be positive; --text_tokens 1..text_len");
  const int threads = bench_set_threads(a.integer("threads", std::max(1u, std::thread::hardware_concurrency())));
  // As train-experts does (TrainerHooks::kept_block_bytes): freed blocks up to 32 MB kept.
  if (!a.boolean("glibc_default_allocator"))
    ws::runtime::keep_large_blocks_for_reuse(std::size_t{32} << 20, std::size_t{64} << 20);
  const auto g = bench_token_grid(tokens);
  const int64_t swap = a.integer("blocks_to_swap", 0);
  if (swap > cfg.num_layers)
    throw UsageError("--blocks_to_swap: the model has " + std::to_string(cfg.num_layers) + " blocks");
  const train::DitCheckpointing ck{
      a.boolean("gradient_checkpointing") || swap > 0 || a.boolean("gradient_checkpointing_offload") ||
          a.boolean("gradient_checkpointing_parts"),
      a.boolean("gradient_checkpointing_offload"), a.boolean("gradient_checkpointing_parts")};
  const bool checkpointing = ck.on;
  const torch::Device device = train::training_device(0);
  // The estimate the `estimate` verb would make for this step, beside the measured peak.
  train::MemoryEstimate estimate;
  estimate.add("runtime", train::training_runtime_bytes(), "");
  train::MemoryEstimate host;
  const train::ExpertStateOptions state{lora_rank, a.boolean("fp8"), bf16_weights, 1};
  if (swap > 0 && device.is_cuda()) {
    train::add_expert_state_swapped(estimate, host, "", cfg, state, swap);
  } else {
    train::add_expert_state(estimate, "", cfg, state);
    if (swap > 0) {  // one memory on the CPU: the swap adds the two blocks' copies
      train::MemoryEstimate dev;
      train::add_expert_state_swapped(dev, host, "", cfg, state, swap, /*gradients_travel=*/false);
      estimate.add("swap copies", dev.part("swap buffers"), "");
    }
  }
  // Offloaded inputs are in the same memory on the CPU.
  const train::DitActivations act = train::dit_activations(cfg, tokens, text, ck, a.boolean("bf16") ? 2 : 4);
  estimate.add("activations", act.device + (device.is_cuda() ? 0 : act.host), "");
  if (device.is_cuda() && act.host > 0) host.add("activations", act.host, "");

  torch::manual_seed(0);
  models::WanModel model(cfg);
  model->set_gradient_checkpointing(checkpointing);
  model->set_checkpoint_offload(ck.offload);
  model->set_checkpoint_parts(ck.parts);
  model->set_fp8(a.boolean("fp8"));
  if (a.boolean("bf16")) model->set_compute_dtype(torch::kBFloat16);
  train::ExpertStepOptions o;
  o.learning_rate = 1e-5;
  o.clip.max_grad_norm = 1.0;
  std::unique_ptr<train::ExpertStep> owned;
  if (lora_rank > 0)
    owned = std::make_unique<train::ExpertStep>(
        model, o,
        // With fp8 the frozen base keeps only its codes, as train-experts keeps a pretrained base (and
        // as the estimate counts it): a bench's fresh weights are never saved.
        train::make_expert_lora(model, models::LoraSpec{lora_rank, static_cast<double>(lora_rank), 0.0, {}}, true, 0,
                                true, /*fp8_only=*/a.boolean("fp8")));
  else owned = std::make_unique<train::ExpertStep>(model, o);
  train::ExpertStep& step = *owned;
  if (bf16_weights) step.keep_master_weights();
  if (swap > 0 && bf16_weights) throw UsageError("--blocks_to_swap does not combine with --weight_dtype bf16");
  model->set_blocks_to_swap(swap);
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
    step.fold_gradients();
    step.finish_gradients();
    step.update();
  });
  // The steps' peak, before the breakdown's own tensors.
  const double step_peak_mb = static_cast<double>(runtime::peak_rss_bytes()) / (1024.0 * 1024.0);
  nlohmann::json breakdown;
  if (a.boolean("breakdown")) {
    if (lora_rank > 0 || a.boolean("bf16") || a.boolean("fp8") || bf16_weights || device.is_cuda())
      throw UsageError("--breakdown times the fp32 CPU step of full fine-tuning");
    step.release_gradients();
    breakdown = dit_step_parts(model, step, tokens, text, 3);
    double parts = 0;
    for (const auto& [k, v] : breakdown["per_block_ms"].items()) parts += v.get<double>() * cfg.num_layers;
    for (const auto& [k, v] : breakdown["whole_model_ms"].items()) parts += v.get<double>();
    breakdown["step_ms"] = bench_median(ms);
    breakdown["rest_ms"] = bench_median(ms) - parts;  // embeddings, head, loss, autograd's own work
  }
  int64_t params = 0, trainable = 0;
  for (const auto& p : model->parameters()) params += p.numel();
  for (const auto& p : step.parameters()) trainable += p.numel();
  bench_report(
      ms,
      {{"params", params},
       {"threads", threads},
       {"tokens", tokens},
       {"batch", batch},
       {"latent", {cfg.in_dim, g[0], g[1], g[2]}},
       {"dim", cfg.dim},
       {"ffn_dim", cfg.ffn_dim},
       {"layers", cfg.num_layers},
       {"text_tokens", text},
       {"gradient_checkpointing", checkpointing},
       {"gradient_checkpointing_offload", ck.offload},
       {"gradient_checkpointing_parts", ck.parts},
       {"blocks_to_swap", swap},
       {"swap_copies_per_step",
        static_cast<double>(model->block_swap_stats().copies) / static_cast<double>(warmup + steps)},
       {"swap_wait_ms_per_step", model->block_swap_stats().wait_s * 1000 / static_cast<double>(warmup + steps)},
       {"host_estimate_mb", host.total() / (1024.0 * 1024.0)},
       {"fp8_bytes", model->fp8_bytes()},
       // How the fp8 forward ran: one scaled fp8 matmul, or the copy dequantised first.
       {"fp8_matmul", !a.boolean("fp8")                                         ? "none"
                      : device.is_cuda() && models::fp8_scaled_matmul_enabled() ? "scaled"
                                                                                : "dequantised"},
       {"bf16", a.boolean("bf16")},
       {"device", device.str()},
       {"attention", device.is_cuda() && models::fused_attention_available() ? "sdpa" : "chunked"},
       {"trainable_params", trainable},
       {"optimizer_bytes", step.optimizer_bytes()},
       {"memory_at_full_depth", memory_per_rank(full_depth, lora_rank, zero_ranks, bf16_weights, a.boolean("fp8"))},
       {"weight_dtype", weight_dtype},
       {"estimate_mb", estimate.total() / (1024.0 * 1024.0)},
       {"breakdown", breakdown},
       {"allocator", a.boolean("glibc_default_allocator") ? "glibc default" : "freed blocks up to 32 MB kept"},
       {"peak_rss_mb", step_peak_mb}},
      "step");
  return 0;
}

}  // namespace

WS_BENCH_KIND("dit-train", "WanModel optimizer steps through train::ExpertStep (loss, backward, clip, AdamW)",
              &bench_dit_train);

}  // namespace ws::cli
