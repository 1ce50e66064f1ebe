// SPDX-License-Identifier: Apache-2.0
// Memory of a training run by formula, before anything is loaded (docs/design/estimate.md): the
// parameters, gradients, optimizer state and activations of each model from its config, the
// sizes and the options (gradient checkpointing, low_vram, fp8, LoRA, bf16, ZeRO). The `estimate`
// verb prints it for a run file; the benches print it beside their measured peak, which is how
// the formulas are checked.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/latent_upsampler.h"
#include "models/wan_dit_config.h"

namespace ws::train {

struct MemoryPart {
  std::string name;  // "weights", "gradients", ...
  double bytes = 0;
  std::string note;  // how it was counted, for the reader
};

struct MemoryEstimate {
  std::vector<MemoryPart> parts;
  void add(std::string name, double bytes, std::string note);
  double total() const;
  double part(const std::string& name) const;  // 0 when absent
  nlohmann::json to_json() const;              // {"parts": [...], "total_bytes": ...}
};

// One expert's resident training state (no activations): weights, gradients, AdamW moments and,
// with bf16 weights, the fp32 masters; a LoRA base in bf16 or fp8 with fp32 adapters. The
// moments (and, between steps, gradients and masters) are divided over `zero_ranks`.
struct ExpertStateOptions {
  int64_t lora_rank = 0;  // 0: full fine-tuning
  bool fp8 = false;       // a LoRA base kept as 1-byte codes
  bool bf16_weights = false;
  int64_t zero_ranks = 1;
};
void add_expert_state(MemoryEstimate& m, const std::string& prefix, const models::WanConfig& c,
                      const ExpertStateOptions& o);

// add_expert_state with block swap (docs/design/block-swap.md): the state of the last `swapped`
// blocks waits in `host` (the frozen base's weights under LoRA; weights, gradients and moments when
// training them), and `device` holds the rest plus two blocks' copies (the running block and the
// next one's) while they run: their weights and, on a GPU where earlier micro-batches' gradients
// join them, their gradients (`gradients_travel`; on the CPU a block's gradient is made on its copy
// and taken home, never held twice).
void add_expert_state_swapped(MemoryEstimate& device, MemoryEstimate& host, const std::string& prefix,
                              const models::WanConfig& c, const ExpertStateOptions& o, int64_t swapped,
                              bool gradients_travel = true);

// How a DiT's blocks keep their activations: all of them, or (checkpointing) each block's input
// only, recomputing one block at a time in backward; `offload` keeps those inputs in host memory,
// `parts` recomputes one of a block's three parts at a time.
struct DitCheckpointing {
  bool on = false;
  bool offload = false;
  bool parts = false;
};
struct DitActivations {
  double device = 0, host = 0;
};

// What one sample's forward keeps for its backward through the WanBlocks (tokens after patchify,
// `text_tokens` of context), in `elem_bytes` per value (4 fp32, 2 bf16), and what of it waits in
// host memory.
DitActivations dit_activations(const models::WanConfig& c, int64_t tokens, int64_t text_tokens,
                               const DitCheckpointing& checkpointing, int elem_bytes = 4);
inline double dit_activation_bytes(const models::WanConfig& c, int64_t tokens, int64_t text_tokens, bool checkpointing,
                                   int elem_bytes = 4) {
  return dit_activations(c, tokens, text_tokens, {checkpointing, false, false}, elem_bytes).device;
}

// The same for one latent upsampler step on a [batch, C, T, h, w] latent.
double upsampler_activation_bytes(const models::LatentUpsamplerConfig& c, int64_t batch, int64_t t, int64_t h,
                                  int64_t w, bool checkpointing);

// What the allocator holds for the backward of the upsampler's 3-D convs on the CPU: each conv's
// backward makes weight-sized copies (the flipped kernel and the weight gradient's transpose with
// the oneDNN training conv, one with LibTorch's), and glibc keeps the freed blocks for reuse. Zero
// on a GPU.
double upsampler_conv_backward_bytes(const models::LatentUpsamplerConfig& c, int64_t batch, int64_t t, int64_t h,
                                     bool gpu, bool winograd = true);

// The peak of a Wan VAE encode or decode of one clip chunk at pixel size h×w: the widest stage's
// few live tensors (docs/design/estimate.md §3), in fp32.
double vae_call_bytes(int64_t base_dim, int64_t h, int64_t w, int64_t patch);

// The peak of one denoising forward without autograd at `tokens` (after patchify): one block at
// a time holds the residual stream and its modulated copy, q/k/v and the attention output, the
// FFN's hidden layer before and after GELU, and one chunk of attention scores (wan_dit_ops.cpp
// bounds it); the text context's k/v for every block besides.
double dit_inference_bytes(const models::WanConfig& c, int64_t tokens, int64_t text_tokens, int elem_bytes = 4);

// The memory a host process may use: the physical memory, or less where a cgroup (a container,
// a systemd slice) limits it, or less again where WANSTUDIO_MEMORY_LIMIT (bytes, K/M/G suffixes)
// says so: a budget on a shared server. 0 when unknown.
double host_memory_bytes();

// This process's resident memory now: LibTorch, the allocator and the code, which every run
// pays before it loads anything.
double runtime_bytes();
// The same after a tiny training step has woken what every training step wakes (the OpenMP
// threads and their allocator arenas, oneDNN's kernels): the baseline of a training worker.
double training_runtime_bytes();

}  // namespace ws::train
