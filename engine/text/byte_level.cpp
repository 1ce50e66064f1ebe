// SPDX-License-Identifier: Apache-2.0
#include "text/byte_level.h"

#include <array>

#include "text/utf8.h"

namespace ws::text {
namespace {

struct Alphabet {
  std::array<char32_t, 256> chars{};
  std::array<std::string, 256> utf8;
  std::array<int, 0x144> byte_of{};  // the alphabet ends at U+0143
  Alphabet() {
    byte_of.fill(-1);
    char32_t next = 0x100;
    for (int b = 0; b < 256; ++b) {
      const bool printable = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
      chars[static_cast<size_t>(b)] = printable ? static_cast<char32_t>(b) : next++;
      utf8_append(utf8[static_cast<size_t>(b)], chars[static_cast<size_t>(b)]);
      byte_of[chars[static_cast<size_t>(b)]] = b;
    }
  }
};

const Alphabet& alphabet() {
  static const Alphabet a;
  return a;
}

}  // namespace

const std::string& byte_level_char(uint8_t b) { return alphabet().utf8[b]; }

int byte_level_byte(char32_t c) { return c < alphabet().byte_of.size() ? alphabet().byte_of[c] : -1; }

std::string byte_level_decode(const std::vector<std::string_view>& tokens) {
  std::string bytes;
  for (std::string_view t : tokens) {
    std::string mapped;
    bool all = true;
    for (char32_t c : utf8_decode(t)) {
      const int b = byte_level_byte(c);
      if (b < 0) {
        all = false;
        break;
      }
      mapped += static_cast<char>(b);
    }
    bytes += all ? mapped : std::string(t);
  }
  return utf8_lossy(bytes);
}

std::string utf8_lossy(std::string_view s) {
  static const std::string kReplacement = "\xEF\xBF\xBD";
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const auto b = static_cast<unsigned char>(s[i]);
    if (b < 0x80) {
      out += static_cast<char>(b);
      ++i;
      continue;
    }
    // The sequence length and the range the second byte must fall in (no overlongs, surrogates
    // or code points past U+10FFFF); later bytes are 0x80..0xBF.
    size_t len = 0;
    unsigned lo = 0x80, hi = 0xBF;
    if (b >= 0xC2 && b <= 0xDF) len = 2;
    else if (b == 0xE0) len = 3, lo = 0xA0;
    else if (b >= 0xE1 && b <= 0xEC) len = 3;
    else if (b == 0xED) len = 3, hi = 0x9F;
    else if (b >= 0xEE && b <= 0xEF) len = 3;
    else if (b == 0xF0) len = 4, lo = 0x90;
    else if (b >= 0xF1 && b <= 0xF3) len = 4;
    else if (b == 0xF4) len = 4, hi = 0x8F;
    size_t k = 1;
    while (k < len && i + k < s.size()) {
      const auto c = static_cast<unsigned char>(s[i + k]);
      if (c < (k == 1 ? lo : 0x80) || c > (k == 1 ? hi : 0xBF)) break;
      ++k;
    }
    if (len != 0 && k == len) {
      out.append(s.substr(i, len));
    } else {
      out += kReplacement;  // the lead byte and the continuation bytes that fit, as one
    }
    i += k;
  }
  return out;
}

}  // namespace ws::text
