// SPDX-License-Identifier: Apache-2.0
#include "core/sha256.h"

#include <fstream>
#include <vector>

#include "core/error.h"
#include "core/fs.h"

namespace ws {

std::string sha256_hex(std::string_view data) {
  Sha256 s;
  s.update(reinterpret_cast<const unsigned char*>(data.data()), data.size());
  return s.hex();
}

std::string sha256_file(const std::string& path) {
  fs::check_regular_file(path);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": cannot read");
  Sha256 s;
  std::vector<char> buf(1 << 20);
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    s.update(reinterpret_cast<const unsigned char*>(buf.data()), static_cast<size_t>(in.gcount()));
  }
  if (in.bad()) throw Error(path + ": read error");
  return s.hex();
}

}  // namespace ws
