// SPDX-License-Identifier: Apache-2.0
// The zip reader and the pickle subset behind .pth checkpoints: hostile archives and pickles are
// ws::Error (never code execution, a crash or a read past a storage).
#include <cstdint>

#include "core/error.h"
#include "fuzz_input.h"
#include "io/pth.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = ws::fuzz::input_file(data, size, ".pth");
  try {
    auto sd = ws::io::read_pth(path);
    for (const auto& [name, t] : sd)
      if (t.numel() > 0) (void)t.sum().item<double>();  // every element of every view is readable
  } catch (const ws::Error&) {
  }
  return 0;
}
