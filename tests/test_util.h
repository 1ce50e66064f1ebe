// SPDX-License-Identifier: Apache-2.0
// Helpers shared by the engine tests: whole-file bytes in and out, and the message of the
// ws::Error a call throws.
#pragma once
#include <QString>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "core/error.h"

namespace ws::test {

inline std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Creates the parent folders, replaces the file.
inline void write_bytes(const std::string& path, const std::string& bytes) {
  auto parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// The ws::Error message `f` throws; empty when it throws none.
template <class F>
QString error_of(F&& f) {
  try {
    f();
  } catch (const ws::Error& e) {
    return QString::fromStdString(e.what());
  }
  return {};
}

}  // namespace ws::test
