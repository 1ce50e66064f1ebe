// SPDX-License-Identifier: Apache-2.0
#include "train/memory_estimate.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>

#include <torch/torch.h>

#include "models/packed_conv.h"

namespace ws::train {

void MemoryEstimate::add(std::string name, double bytes, std::string note) {
  parts.push_back({std::move(name), bytes, std::move(note)});
}

double MemoryEstimate::total() const {
  double t = 0;
  for (const auto& p : parts) t += p.bytes;
  return t;
}

double MemoryEstimate::part(const std::string& name) const {
  for (const auto& p : parts)
    if (p.name == name) return p.bytes;
  return 0;
}

nlohmann::json MemoryEstimate::to_json() const {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& p : parts) list.push_back({{"name", p.name}, {"bytes", p.bytes}, {"note", p.note}});
  return {{"parts", list}, {"total_bytes", total()}};
}

void add_expert_state(MemoryEstimate& m, const std::string& prefix, const models::WanConfig& c,
                      const ExpertStateOptions& o) {
  const double D = static_cast<double>(c.dim), F = static_cast<double>(c.ffn_dim),
               L = static_cast<double>(c.num_layers);
  const double total = static_cast<double>(c.parameter_count());
  // The block Linears: q, k, v, o of both attentions and the two FFN layers, with biases.
  const double block_linears = L * (8 * (D * D + D) + (D * F + F) + (F * D + D));
  const double P = static_cast<double>(std::max<int64_t>(1, o.zero_ranks));
  if (o.lora_rank > 0) {
    const double r = static_cast<double>(o.lora_rank);
    const double adapters = L * r * (8 * (D + D) + 2 * (D + F));
    const double block_weights = L * (8 * D * D + 2 * D * F);
    const double base = o.fp8 ? block_weights + (block_linears - block_weights) * 2 + (total - block_linears) * 4
                              : block_linears * 2 + (total - block_linears) * 4;
    m.add(prefix + "weights", base,
          o.fp8 ? "frozen base: block Linears as fp8 codes, the rest fp32"
                : "frozen base: block Linears in bf16, the rest fp32");
    m.add(prefix + "adapters", adapters * 4, "LoRA rank " + std::to_string(o.lora_rank) + ", fp32");
    m.add(prefix + "gradients", adapters * 4, "the adapters' only");
    m.add(prefix + "optimizer", adapters * 8, "AdamW moments of the adapters");
    return;
  }
  if (!o.bf16_weights) {
    m.add(prefix + "weights", total * 4, "fp32");
    m.add(prefix + "gradients", total * 4, "fp32, whole during the backward");
    m.add(prefix + "optimizer", total * 8 / P, P > 1 ? "AdamW moments, 1/P with ZeRO-2" : "AdamW moments");
    return;
  }
  const double w = block_linears * 2 + (total - block_linears) * 4;
  m.add(prefix + "weights", w, "block Linears in bf16, the rest fp32");
  m.add(prefix + "gradients", w, "as the weights, whole during the backward");
  m.add(prefix + "masters", 2 * block_linears * 4 / P, "fp32 masters of the block Linears and their gradients");
  m.add(prefix + "optimizer", total * 8 / P, P > 1 ? "AdamW moments, 1/P with ZeRO-2" : "AdamW moments");
}

void add_expert_state_swapped(MemoryEstimate& device, MemoryEstimate& host, const std::string& prefix,
                              const models::WanConfig& c, const ExpertStateOptions& o, int64_t swapped,
                              bool gradients_travel) {
  MemoryEstimate all, none;
  add_expert_state(all, prefix, c, o);
  models::WanConfig c0 = c;
  c0.num_layers = 0;
  add_expert_state(none, prefix, c0, o);
  const double L = static_cast<double>(std::max<int64_t>(1, c.num_layers));
  const double n = static_cast<double>(std::min(swapped, c.num_layers));
  // LoRA adapters (and their gradients and moments) stay on the device; a trained block's
  // gradients and moments go where its weights are.
  const bool lora = o.lora_rank > 0;
  double resident = 0;
  for (const auto& p : all.parts) {
    const std::string what = p.name.substr(prefix.size());
    const bool moves = what == "weights" || (!lora && (what == "gradients" || what == "optimizer"));
    const double per_block = (p.bytes - none.part(p.name)) / L;
    const double away = moves ? per_block * n : 0;
    device.add(p.name, p.bytes - away, p.note);
    if (away > 0) host.add(p.name, away, "blocks_to_swap: the last " + std::to_string(swapped) + " blocks' share");
    if (what == "weights" || (moves && what == "gradients" && gradients_travel)) resident += 2 * per_block;
  }
  if (n > 0)
    device.add(prefix + "swap buffers", resident,
               "two swapped blocks on the device at a time: the running one and the next one's copy");
}

DitActivations dit_activations(const models::WanConfig& c, int64_t tokens, int64_t text_tokens,
                               const DitCheckpointing& ck, int elem_bytes) {
  const double D = static_cast<double>(c.dim), F = static_cast<double>(c.ffn_dim), n = static_cast<double>(c.num_heads);
  const double Lq = static_cast<double>(tokens), T = static_cast<double>(text_tokens), e = elem_bytes;
  // Per token of one block, what autograd keeps (wan_dit.cpp WanBlock's three parts): the
  // self-attention part's modulated input, q/k/v, the RMS-normed and rotated q and k, the reshaped
  // output, the o projection and the residual sum (11·dim); cross-attention's normed input, query
  // and its norm, output, o projection and sum (6·dim); the FFN part's modulated input, output and
  // sum (4·dim) and its hidden layer before and after GELU (2·ffn). ti2v's per-token timesteps add
  // the modulation (6·dim). Attention keeps no probabilities (wan_dit_ops.cpp): its backward makes
  // them again a chunk of at most 2^25 scores at a time, with their gradient beside them.
  const double attention = std::min(2.0 * static_cast<double>(int64_t{1} << 25), 2 * n * Lq * (Lq + T)) * e;
  const double self_part = Lq * 11 * D * e + attention, cross_part = Lq * 6 * D * e,
               ffn_part = Lq * (4 * D + 2 * F) * e;
  const double modulation = c.model_type == "ti2v" ? Lq * 6 * D * e : 0;
  const double block = self_part + cross_part + ffn_part + modulation;
  // The context's k/v (2 per block) and the text embedding's MLP: small beside the blocks.
  const double text = T * (2 * D * static_cast<double>(c.num_layers) + 2 * static_cast<double>(c.text_dim) + 2 * D) * e;
  // Outside the blocks: patch embedding, time embedding, head (12·dim per token).
  const double outside = Lq * (12 * D) * e;
  const double input = Lq * D * e, inputs = static_cast<double>(c.num_layers) * input;
  // The backward's working set: gradients in flight through one block (half a block's worth).
  // With checkpointing, the recomputed block's own graph and the gradients in flight through its
  // largest part (measured: 1.3B width, 4096 tokens, +7 %); with parts, one part's graph and
  // gradients, beside the parts' two inner inputs and the modulation.
  if (!ck.on) return {static_cast<double>(c.num_layers) * block + 0.5 * block + text + outside, 0};
  const double largest = std::max({self_part, cross_part, ffn_part});
  const double working = ck.parts ? 2 * largest + 2 * input + modulation : block + largest;
  // Offloaded, the inputs wait in host memory and come back one block at a time.
  if (ck.offload) return {input + working + text + outside, inputs};
  return {inputs + working + text + outside, 0};
}

double upsampler_activation_bytes(const models::LatentUpsamplerConfig& c, int64_t batch, int64_t t, int64_t h,
                                  int64_t w, bool checkpointing) {
  // V: one mid-width tensor at the low-res latent size (fp32).
  const double V = static_cast<double>(batch * c.mid_channels * t * h * w) * 4;
  const auto [num, den] = c.use_rational_resampler ? c.ratio() : std::make_pair<int64_t, int64_t>(2, 1);
  const double up = static_cast<double>(num * num), after = up / static_cast<double>(den * den);
  const double N = static_cast<double>(c.num_blocks_per_stage);
  // latent_upsampler.cpp: the initial conv, GroupNorm and SiLU (3V); per ResBlock two convs, two
  // GroupNorms, two SiLUs and the residual sum (7 of its size); the resampler's frame-batch copy,
  // its conv and pixel shuffle (2·num²) and blur; the final conv's input.
  const double outside = 3 * V + V + 2 * up * V + 2 * after * V;
  const double blocks = 7 * N * V + 7 * N * after * V;
  const double backward = 2 * up * V;  // the largest gradient in flight (the resampler conv's)
  if (checkpointing) return outside + N * V + N * after * V + 7 * after * V + backward;
  return outside + blocks + backward;
}

double upsampler_conv_backward_bytes(const models::LatentUpsamplerConfig& c, int64_t batch, int64_t t, int64_t h,
                                     bool gpu, bool winograd) {
  if (gpu) return 0;
  if (models::packed_conv_supported()) {
    // models/packed_conv.h: the trainer's weights stay packed; backward-data reorders one kernel
    // at a time, the largest being the resampler's. On Winograd it reorders one piece (a tap, or a
    // chunk of ≤ 512 outputs) instead, and the pieces keep one scratch buffer, sized by a ResBlock
    // conv at the upsampled size.
    const auto [num, den] = c.use_rational_resampler ? c.ratio() : std::make_pair<int64_t, int64_t>(2, 1);
    const int64_t k = c.dims == 3 ? 27 : 9, C = c.in_channels, M = c.mid_channels;
    const double copy = 4.0 * static_cast<double>(std::max({k * C * M, k * M * M, 9 * num * num * M * M}));
    const int64_t up = (h * num + den - 1) / den;
    const double scratch =
        winograd ? models::winograd_taps_scratch_bytes(M, M, batch * (c.dims == 3 ? t : 1), up, up) : 0;
    if (scratch == 0) return copy;  // not asked for, or this CPU has no Winograd kernels
    const int64_t widest = std::max(M, std::min<int64_t>(num * num * M, 512));
    return 4.0 * 9 * static_cast<double>(std::max(M, C) * widest) + scratch;
  }
  // models/train_conv3d.h: batch 1 with C·D·H ≤ 20480 takes the oneDNN training conv (two copies).
  const bool onednn_train = batch == 1 && c.mid_channels * t * h <= 20480;
  return (onednn_train ? 2.0 : 1.0) * static_cast<double>(c.parameter_count()) * 4;
}

double vae_call_bytes(int64_t base_dim, int64_t h, int64_t w, int64_t patch) {
  // The causal VAE works on 4 frames at a time (1 first); its full-resolution stage holds a few
  // base_dim-channel tensors (input, norm, conv output, residual and oneDNN's blocked copies).
  const double full = static_cast<double>(base_dim) * 4 * static_cast<double>((h / patch) * (w / patch)) * 4;
  return 8 * full;
}

double dit_inference_bytes(const models::WanConfig& c, int64_t tokens, int64_t text_tokens, int elem_bytes) {
  const double D = static_cast<double>(c.dim), F = static_cast<double>(c.ffn_dim), Lq = static_cast<double>(tokens);
  const double T = static_cast<double>(text_tokens);
  // Residual stream, modulated copy, q, k, v, attention output, o projection (~8·dim per token)
  // and the FFN's hidden layer twice; ti2v's per-token modulation (6·dim).
  const double block = Lq * (8 * D + 2 * F + (c.model_type == "ti2v" ? 6 * D : 0)) * elem_bytes;
  // wan_attention's chunk: at most 2^25 scores, and their softmax beside them.
  const double scores = 2.0 * static_cast<double>(int64_t{1} << 25) * elem_bytes;
  const double text =
      T * (2 * D * static_cast<double>(c.num_layers) + 2 * static_cast<double>(c.text_dim)) * elem_bytes;
  return block + std::min(scores, 2 * Lq * (Lq + T) * static_cast<double>(c.num_heads) * elem_bytes) + text;
}

double host_memory_bytes() {
  double bytes = static_cast<double>(::sysconf(_SC_PHYS_PAGES)) * static_cast<double>(::sysconf(_SC_PAGESIZE));
  auto lower = [&](double limit) {
    if (limit > 0 && (bytes <= 0 || limit < bytes)) bytes = limit;
  };
  // cgroup v2 ("max" when unlimited), then v1 (a huge number when unlimited).
  for (const char* f : {"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}) {
    std::ifstream in(f);
    double v = 0;
    if (in >> v) lower(v);
  }
  if (const char* env = std::getenv("WANSTUDIO_MEMORY_LIMIT")) {
    char* end = nullptr;
    double v = std::strtod(env, &end);
    const std::string unit = end ? end : "";
    if (unit == "K" || unit == "k") v *= 1024;
    else if (unit == "M" || unit == "m") v *= 1024.0 * 1024;
    else if (unit == "G" || unit == "g") v *= 1024.0 * 1024 * 1024;
    else if (!unit.empty()) v = 0;  // not a size: ignored rather than guessed
    if (std::isfinite(v)) lower(v);
  }
  return bytes;
}

double runtime_bytes() {
  std::ifstream statm("/proc/self/statm");
  long pages = 0, resident = 0;
  if (!(statm >> pages >> resident)) return 0;
  return static_cast<double>(resident) * static_cast<double>(::sysconf(_SC_PAGESIZE));
}

double training_runtime_bytes() {
  auto w = torch::randn({8, 8, 3, 3, 3}, torch::requires_grad());
  auto x = torch::randn({1, 8, 4, 8, 8});
  auto y = torch::conv3d(x, w, {}, 1, 1);
  auto m = torch::randn({64, 64}, torch::requires_grad());
  (y.square().mean() + torch::mm(m, m).sum()).backward();
  return runtime_bytes();
}

}  // namespace ws::train
