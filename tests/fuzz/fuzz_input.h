// SPDX-License-Identifier: Apache-2.0
// Shared by the fuzz harnesses: the readers under test take file paths (they map or stream
// files, refuse FIFOs, name the file in errors), so each input is written to a scratch file first.
#pragma once
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <string>

namespace ws::fuzz {

// A per-process scratch file with the input's bytes; `suffix` picks the reader's format guess.
inline std::string input_file(const uint8_t* data, size_t size, const char* suffix) {
  static const std::string dir = [] {
    const char* t = std::getenv("TMPDIR");
    return std::string(t && *t ? t : "/tmp");
  }();
  const std::string path = dir + "/ws_fuzz_" + std::to_string(::getpid()) + suffix;
  if (std::FILE* f = std::fopen(path.c_str(), "wb")) {
    if (size) std::fwrite(data, 1, size, f);
    std::fclose(f);
  }
  return path;
}

}  // namespace ws::fuzz
