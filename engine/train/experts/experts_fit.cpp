// SPDX-License-Identifier: Apache-2.0
#include "train/experts/experts_fit.h"

#include <algorithm>

#include "train/experts/experts_memory.h"

namespace ws::train {
namespace {

FitChoice evaluate(const ExpertsSetup& s, int64_t ranks, const MemoryTarget& t, double budget, nlohmann::json changes) {
  const TrainingMemory e = experts_training_memory(s, ranks, t);
  FitChoice c;
  c.changes = std::move(changes);
  c.device_bytes = std::max(e.parts.total(), e.text_phase.total());
  c.host_bytes = e.host.total();
  c.fits = c.device_bytes <= budget;
  return c;
}

// The smallest blocks_to_swap (from the run's own) that fits `budget`, or all blocks when none does.
FitChoice smallest_swap(ExpertsSetup s, int64_t ranks, const MemoryTarget& t, double budget, nlohmann::json changes) {
  const int64_t layers = s.high.config.num_layers;
  FitChoice last;
  for (int64_t n = std::max<int64_t>(1, s.blocks_to_swap); n <= layers; ++n) {
    s.blocks_to_swap = n;
    s.optimizer.gradient_checkpointing = true;  // block swap needs it
    nlohmann::json c = changes;
    c["blocks_to_swap"] = n;
    c["gradient_checkpointing"] = true;
    last = evaluate(s, ranks, t, budget, c);
    if (last.fits) break;
  }
  return last;
}

}  // namespace

std::vector<FitChoice> experts_fit_choices(const ExpertsSetup& s, int64_t ranks, const MemoryTarget& target,
                                           double budget) {
  std::vector<FitChoice> out;
  FitChoice as_is = evaluate(s, ranks, target, budget, nlohmann::json::object());
  out.push_back(as_is);
  if (as_is.fits) return out;
  // Block swap alone (ZeRO and bf16 weights do not combine with it).
  if (s.zero2 || s.bf16_weights) return out;
  out.push_back(smallest_swap(s, ranks, target, budget, nlohmann::json::object()));
  if (out.back().fits) return out;
  // A frozen pretrained base as fp8 codes, with the smallest swap that then fits.
  ExpertsSetup f = s;
  nlohmann::json fc = nlohmann::json::object();
  if (s.lora.on && !s.fp8 && s.high.weights && s.low.weights) {
    f.fp8 = true;
    fc["fp8"] = "e4m3";
    out.push_back(smallest_swap(f, ranks, target, budget, fc));
    if (out.back().fits) return out;
  }
  // Each block's input in host memory, then one part of a block recomputed at a time.
  if (!f.checkpoint_offload) {
    f.checkpoint_offload = true;
    fc["gradient_checkpointing_offload"] = true;
    out.push_back(smallest_swap(f, ranks, target, budget, fc));
    if (out.back().fits) return out;
  }
  if (!f.checkpoint_parts) {
    f.checkpoint_parts = true;
    fc["gradient_checkpointing_parts"] = true;
    out.push_back(smallest_swap(f, ranks, target, budget, fc));
    if (out.back().fits) return out;
  }
  // Fewer frames (4k + 1), then smaller sizes (multiples of 32), every block swapped.
  ExpertsSetup g = f;
  g.blocks_to_swap = g.high.config.num_layers;
  g.optimizer.gradient_checkpointing = true;
  for (int64_t frames = (g.data.n_frames - 1) / 8 * 4 + 1; frames >= 1; frames = (frames - 1) / 8 * 4 + 1) {
    g.data.n_frames = frames;
    nlohmann::json c = fc;
    c["blocks_to_swap"] = g.blocks_to_swap;
    c["gradient_checkpointing"] = true;
    c["video_sample_n_frames"] = frames;
    FitChoice r = evaluate(g, ranks, target, budget, c);
    if (r.fits) {
      ExpertsSetup fewer = g;  // fewer blocks may do at these frames: search from the run's own
      fewer.blocks_to_swap = s.blocks_to_swap;
      c.erase("blocks_to_swap");
      out.push_back(smallest_swap(fewer, ranks, target, budget, c));
      return out;
    }
    if (frames == 1) break;
  }
  g.data.n_frames = s.data.n_frames;
  g.blocks_to_swap = s.blocks_to_swap;  // smallest_swap searches from the run's own
  for (int64_t size = s.data.sample_size / 64 * 32; size >= 64; size = size / 64 * 32) {
    g.data.sample_size = size;
    nlohmann::json c = fc;
    c["video_sample_size"] = size;
    FitChoice r = smallest_swap(g, ranks, target, budget, c);
    out.push_back(r);
    if (r.fits) return out;
    out.pop_back();
  }
  g.data.sample_size = s.data.sample_size;
  g.blocks_to_swap = g.high.config.num_layers;
  nlohmann::json c = fc;
  c["blocks_to_swap"] = g.blocks_to_swap;
  c["gradient_checkpointing"] = true;
  out.push_back(evaluate(g, ranks, target, budget, c));  // every block swapped, at the run's sizes
  return out;
}

}  // namespace ws::train
