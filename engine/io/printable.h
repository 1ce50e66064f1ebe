// SPDX-License-Identifier: Apache-2.0
// Names taken from untrusted files go into one-line error messages: control bytes are
// escaped and long names cut, so a hostile file cannot break the line or flood the log.
#pragma once
#include <cstdio>
#include <string>
#include <string_view>

namespace ws::io {

inline std::string printable(std::string_view s, size_t max = 200) {
  std::string out;
  for (size_t i = 0; i < s.size() && i < max; ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  if (s.size() > max) out += "...";
  return out;
}

}  // namespace ws::io
