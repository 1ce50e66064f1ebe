// SPDX-License-Identifier: Apache-2.0
#include "cli/device_option.h"

#include <torch/cuda.h>

#include "core/error.h"
#include "train/training_device.h"

namespace ws::cli {

c10::Device parse_device_option(const std::string& value) {
  c10::Device device(c10::kCPU);
  try {
    device = value == "auto" ? train::training_device(0) : c10::Device(value);
  } catch (const c10::Error&) {
    throw UsageError("--device: auto, cpu, cuda or cuda:N, got '" + value + "'");
  }
  if (device.is_cuda() && !torch::cuda::is_available())
    throw Error("--device " + value + ": this build or machine has no CUDA device");
  return device;
}

}  // namespace ws::cli
