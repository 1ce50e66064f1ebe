// SPDX-License-Identifier: Apache-2.0
#include "train/memory_plan.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "core/error.h"
#include "io/weights.h"
#include "models/wan_vae.h"

namespace ws::train {
using json = nlohmann::json;

namespace {
constexpr double kCudaContextBytes = 0.6 * 1024 * 1024 * 1024;  // context, cuBLAS/cuDNN workspaces

std::string gib(double b) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f GiB", b / (1024.0 * 1024.0 * 1024.0));
  return buf;
}
}  // namespace

double TrainingMemory::peak() const { return std::max(parts.total(), text_phase.total()); }

double weights_parameters(const std::string& path) {
  if (path.size() > 12 && path.compare(path.size() - 12, 12, ".safetensors") == 0) {
    double n = 0;
    for (const auto& [k, t] : io::load_weights(path)) n += static_cast<double>(t.numel());
    return n;
  }
  std::error_code ec;
  const double size = static_cast<double>(std::filesystem::file_size(path, ec));
  return path.find("bf16") != std::string::npos ? size / 2 : size / 4;
}

void add_vae_memory(MemoryEstimate& m, const std::string& file, const json& vae_config, int64_t size, bool bf16) {
  const models::WanVaeConfig c = models::WanVae::resolve_config(file, vae_config);
  const int elem = bf16 ? 2 : 4;
  m.add("vae weights", static_cast<double>(c.parameter_count()) * elem,
        std::string(c.wan21() ? "Wan2.1" : "Wan2.2") + " VAE, frozen");
  m.add("vae activations", vae_call_bytes(c.dim, size, size, c.wan21() ? 1 : 2) * elem / 4,
        "one encode call's widest stage (4 frames at a time)");
}

double clip_bytes(const DataOptions& d) {
  return static_cast<double>(d.batch_size * d.n_frames * d.sample_size * d.sample_size * 3) * 4;
}

void add_runtime_memory(MemoryEstimate& m, const MemoryTarget& target) {
  if (target.gpu)
    m.add("runtime", kCudaContextBytes, "the CUDA context and library workspaces (a usual size, not measured here)");
  else
    m.add("runtime", target.runtime, "LibTorch, its threads and kernels before any model (measured in this process)");
}

std::string training_memory_problem(const TrainingMemory& e, int64_t ranks_here) {
  const double need = e.peak() * static_cast<double>(ranks_here), have = host_memory_bytes();
  if (have <= 0 || need <= have) return {};
  std::string biggest;
  double most = 0;
  for (const auto& p : e.parts.parts)
    if (p.bytes > most) most = p.bytes, biggest = p.name;
  return "the run needs about " + gib(need) + " (the largest part: " + biggest + ", " + gib(most) +
         ") and this machine offers " + gib(have) +
         ": lower video_sample_size, video_sample_n_frames or train_batch_size, turn on gradient_checkpointing, "
         "or set force to start anyway (`wanstudio-engine estimate` itemises it)" +
         (ranks_here > 1 ? " (" + std::to_string(ranks_here) + " ranks on this machine)" : std::string());
}

void refuse_unless_fits(const MemoryEstimate& m, const std::string& what) {
  const double need = runtime_bytes() + m.total(), have = host_memory_bytes();
  if (have <= 0 || need <= have) return;
  throw Error(what + " needs about " + gib(need) + " and this machine offers " + gib(have) +
              ": choose a smaller size or fewer frames (or --force to try anyway)");
}

}  // namespace ws::train
