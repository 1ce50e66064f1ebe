// SPDX-License-Identifier: Apache-2.0
// The safetensors reader on arbitrary bytes: a header that lies about lengths, offsets, dtypes,
// shapes or nesting must give ws::Error, never a crash or a read outside the file.
#include <cstdint>

#include "core/error.h"
#include "fuzz_input.h"
#include "io/safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = ws::fuzz::input_file(data, size, ".safetensors");
  try {
    auto f = ws::io::SafetensorsFile::open(path);
    for (const auto& e : f->entries()) {
      auto t = f->tensor(e.name);
      if (t.numel() > 0) (void)t.reshape({-1})[0].item<double>();  // touch the first and last element
      if (t.numel() > 1) (void)t.reshape({-1})[t.numel() - 1].item<double>();
    }
  } catch (const ws::Error&) {
  }
  return 0;
}
