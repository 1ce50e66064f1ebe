// SPDX-License-Identifier: Apache-2.0
// A training run's memory by formula (docs/design/estimate.md), shared by the `estimate` verb and
// by the training verbs' own check before they allocate anything: the parts every run has (the
// runtime, the VAE, decoded batches) here, each trainer's model parts in its folder
// (upsampler_memory.h, experts_memory.h).
#pragma once
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "train/memory_estimate.h"
#include "train/run_options.h"

namespace ws::train {

// Where the estimate is for: this machine's memory, or a GPU's (`estimate --device cuda`).
struct MemoryTarget {
  bool gpu = false;
  double runtime = 0;  // measured here on the CPU; the CUDA context's usual size on a GPU
};

struct TrainingMemory {
  MemoryEstimate parts;
  MemoryEstimate host;        // on a GPU with low_vram: what waits in host memory meanwhile
  MemoryEstimate text_phase;  // before training: the text encoder (experts), empty otherwise
  nlohmann::json shape = nlohmann::json::object();
  double peak() const;  // the larger of the training and the text phase
};

// Parameters in a weights file without reading its data: a safetensors header, else the file's
// size over the bytes per value the name says (`bf16`, else fp32).
double weights_parameters(const std::string& path);
// The VAE a run loads: its parameters (fp32 on the CPU, bf16 with mixed precision on a GPU) and
// one encode's working set at the run's pixel size.
void add_vae_memory(MemoryEstimate& m, const std::string& file, const nlohmann::json& vae_config, int64_t size,
                    bool bf16);
// One batch of decoded clips, fp32.
double clip_bytes(const DataOptions& d);
void add_runtime_memory(MemoryEstimate& m, const MemoryTarget& target);

// The check a training verb makes once its config is valid, on the CPU: the estimate, times the
// ranks running on this machine, against host_memory_bytes(). Returns "" when it fits (or the
// machine's memory is unknown), else the one-line problem with the figures.
std::string training_memory_problem(const TrainingMemory& e, int64_t ranks_here = 1);

// For the one-pass verbs (encode-latents, upsample): throws ws::Error naming `what`, the figures
// and --force when `m` (plus this process's resident memory) exceeds host_memory_bytes().
void refuse_unless_fits(const MemoryEstimate& m, const std::string& what);

}  // namespace ws::train
