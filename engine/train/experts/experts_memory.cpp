// SPDX-License-Identifier: Apache-2.0
#include "train/experts/experts_memory.h"

#include <string>

namespace ws::train {

TrainingMemory experts_training_memory(const ExpertsSetup& s, int64_t ranks, const MemoryTarget& target) {
  TrainingMemory e;
  auto& m = e.parts;
  add_runtime_memory(m, target);
  const int64_t zero = s.zero2 ? ranks : 1;
  // low_vram on a GPU: only the routed expert is on the device; the other waits in host memory.
  const bool split = target.gpu && s.run.low_vram;
  for (const auto* ex : {&s.high, &s.low}) {
    const bool high = ex == &s.high;
    ExpertStateOptions o;
    o.lora_rank = s.lora.on ? (high ? s.lora.high.rank : s.lora.low.rank) : 0;
    o.fp8 = s.fp8;
    o.bf16_weights = s.bf16_weights;
    o.zero_ranks = zero;
    const char* prefix = high ? "high: " : "low: ";
    if (split && !high) add_expert_state(e.host, prefix, ex->config, o);
    else if (s.blocks_to_swap > 0 && target.gpu)
      add_expert_state_swapped(m, e.host, prefix, ex->config, o, s.blocks_to_swap);
    else add_expert_state(m, prefix, ex->config, o);
  }
  const auto& c = s.high.config;
  if (s.blocks_to_swap > 0 && !target.gpu) {
    // On the CPU "host" and "device" are one memory: the swap only adds the two blocks' copies.
    MemoryEstimate dev, host;
    ExpertStateOptions o;
    o.lora_rank = s.lora.on ? s.lora.high.rank : 0;
    o.fp8 = s.fp8;
    add_expert_state_swapped(dev, host, "", c, o, s.blocks_to_swap, /*gradients_travel=*/false);
    m.add("swap copies", dev.part("swap buffers"), "two swapped blocks copied while they run (blocks_to_swap)");
  }
  // Latent files without a VAE: 16 channels are the Wan2.1 VAE's (stride 8).
  const int64_t factor = s.vae_file.empty() && c.out_dim == 16 ? 8 : s.vae_spatial_factor;
  const int64_t t = (s.data.n_frames - 1) / 4 + 1;
  const int64_t side = s.data.sample_size / factor;
  const int64_t tokens = t * (side / 2) * (side / 2);
  const bool bf16 = s.run.bf16 && target.gpu;  // mixed precision is fp32 on the CPU
  const bool ck = s.optimizer.gradient_checkpointing;
  const DitActivations act =
      dit_activations(c, tokens, c.text_len, {ck, s.checkpoint_offload, s.checkpoint_parts}, bf16 ? 2 : 4);
  const std::string how = std::string(ck ? (s.checkpoint_parts ? ", block parts recomputed in backward one at a time"
                                                               : ", blocks recomputed in backward")
                                         : "");
  // On the CPU the offloaded inputs stay in the same memory.
  m.add("activations", act.device + (target.gpu ? 0 : act.host), std::to_string(tokens) + " tokens per sample" + how);
  if (target.gpu && act.host > 0)
    e.host.add("activations", act.host, "each block's input until its recompute (gradient_checkpointing_offload)");
  if (!s.all_latent_files && !s.vae_file.empty()) {
    add_vae_memory(m, s.vae_file, s.vae_config, s.data.sample_size, bf16);
    if (s.overlap_vae_encode)
      m.add("batch ahead", clip_bytes(s.data),
            "the next micro-batch, taken and encoded while this one trains (overlap_vae_encode)");
  }
  if (s.text_encoder) {
    auto& p = e.text_phase;
    add_runtime_memory(p, target);
    const double n = weights_parameters(s.text_encoder->encoder_path);
    p.add("text encoder", n * (s.text_encoder->bf16 ? 2 : 4), "UMT5, freed before the experts load");
  }
  e.shape = {{"tokens", tokens},
             {"text_tokens", c.text_len},
             {"parameters_per_expert", c.parameter_count()},
             {"ranks", ranks},
             {"zero_stage", s.zero2 ? 2 : 0}};
  return e;
}

}  // namespace ws::train
