// SPDX-License-Identifier: Apache-2.0
#include "train/training_device.h"

#include "core/log.h"
#include <torch/cuda.h>

namespace ws::train {

torch::Device training_device(int local_rank) {
  // torch::cuda::is_available() is false in CPU-only LibTorch builds, so no #ifdef is needed.
  if (torch::cuda::is_available()) {
    const int64_t n = static_cast<int64_t>(torch::cuda::device_count());
    return torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(n > 0 ? local_rank % n : 0));
  }
  return torch::Device(torch::kCPU);
}

void synchronize_device(const torch::Device& device) {
  if (device.is_cuda()) torch::cuda::synchronize(device.index());
}

std::string no_gpu_warning(const torch::Device& device, const std::vector<std::string>& options) {
  if (device.is_cuda() || options.empty()) return {};
  std::string s = "no GPU (this LibTorch or machine has no CUDA device): ";
  for (size_t i = 0; i < options.size(); ++i) s += (i ? "; " : "") + options[i];
  return s;
}

torch::Device open_training_device(int local_rank, bool bf16, bool low_vram, const std::string& low_vram_effect) {
  const torch::Device device = training_device(local_rank);
  ws::log::info("training on {}", device.str());
  std::vector<std::string> gpu_only;
  if (bf16) gpu_only.push_back("mixed_precision bf16 runs in fp32");
  if (low_vram) gpu_only.push_back("low_vram has no effect (" + low_vram_effect + ")");
  const std::string w = no_gpu_warning(device, gpu_only);
  if (!w.empty()) ws::log::warn("{}", w);
  return device;
}

}  // namespace ws::train
