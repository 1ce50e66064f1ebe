// SPDX-License-Identifier: Apache-2.0
#include "train/encode_ahead.h"

#include <c10/core/impl/DeviceGuardImplInterface.h>

namespace ws::train {

SideStream::SideStream(const torch::Device& device) {
  if (!device.is_cuda()) return;
  // The device-generic guard interface: no CUDA headers, and the CPU build compiles the same code.
  stream_ = c10::impl::getDeviceGuardImpl(device.type())->getStreamFromGlobalPool(device);
  guard_.emplace(*stream_);
}

void SideStream::synchronize() const {
  if (stream_) stream_->synchronize();
}

}  // namespace ws::train
