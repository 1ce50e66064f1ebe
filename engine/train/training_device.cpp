#include "train/training_device.h"

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

std::string no_gpu_warning(const torch::Device& device, const std::vector<std::string>& options) {
  if (device.is_cuda() || options.empty()) return {};
  std::string s = "no GPU (this LibTorch or machine has no CUDA device): ";
  for (size_t i = 0; i < options.size(); ++i) s += (i ? "; " : "") + options[i];
  return s;
}

}  // namespace ws::train
