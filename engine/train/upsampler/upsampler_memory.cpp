// SPDX-License-Identifier: Apache-2.0
#include "train/upsampler/upsampler_memory.h"

#include <algorithm>

#include "models/packed_conv.h"

namespace ws::train {

TrainingMemory upsampler_training_memory(const UpsamplerSetup& s, int64_t ranks, const MemoryTarget& target) {
  TrainingMemory e;
  const auto& c = s.model;
  const double P = static_cast<double>(c.parameter_count());
  auto& m = e.parts;
  add_runtime_memory(m, target);
  m.add("weights", P * 4, "latent upsampler, fp32");
  m.add("gradients", P * 4, "fp32");
  m.add("optimizer", P * 8, "AdamW moments");
  if (s.use_ema) m.add("ema", P * 4, "EMA shadow weights");
  const bool bf16 = s.run.bf16 && target.gpu;  // mixed precision is fp32 on the CPU
  add_vae_memory(m, s.vae_file, s.vae_config, s.data.sample_size, bf16);
  // Latents of the largest bucket: the low-res side is 1/scale of the high-res one.
  const int64_t t = (s.data.n_frames - 1) / 4 + 1, hr = s.data.sample_size / 16;
  auto [num, den] = c.use_rational_resampler ? c.ratio() : std::make_pair<int64_t, int64_t>(2, 1);
  const int64_t lr = std::max<int64_t>(1, hr * den / num);
  m.add("activations", upsampler_activation_bytes(c, s.data.batch_size, t, lr, lr, s.optimizer.gradient_checkpointing),
        s.optimizer.gradient_checkpointing ? "one micro-batch, ResBlocks recomputed in backward" : "one micro-batch");
  const double clip = clip_bytes(s.data);
  if (!target.gpu) {
    const double conv = upsampler_conv_backward_bytes(c, s.data.batch_size, t, lr, false, s.winograd_convs);
    const double copy = upsampler_conv_backward_bytes(c, s.data.batch_size, t, lr, false, false);
    m.add("conv backward", conv,
          !models::packed_conv_supported() ? "weight-sized copies in each 3-D conv's backward, kept by the allocator"
          : conv > copy ? "backward-data's copy of one packed kernel at a time, and the Winograd convs' scratch"
                        : "backward-data's copy of one packed kernel at a time");
    const int64_t workers = std::max<int64_t>(1, s.data.workers);
    m.add("data", clip * static_cast<double>(2 * workers + 1),
          "decoded batches in flight (2 per decode worker, and the current one)");
  }
  if (s.overlap_vae_encode)
    m.add("batch ahead", clip, "the next batch, taken and encoded while this one trains (overlap_vae_encode)");
  e.shape = {{"latent_low", {t, lr, lr}}, {"latent_high", {t, hr, hr}}, {"parameters", P}, {"ranks", ranks}};
  return e;
}

}  // namespace ws::train
