// SPDX-License-Identifier: Apache-2.0
// GPT-2's byte-level alphabet, which Qwen's BPE vocabulary is spelled in: each of the 256 bytes
// stands as one printable character (0x21..0x7E, 0xA1..0xAC and 0xAE..0xFF as themselves, the
// rest as U+0100 onwards, so a space is "Ġ" and a line feed "Ċ").
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ws::text {

// The UTF-8 of the character standing for byte `b`.
const std::string& byte_level_char(uint8_t b);
// The byte a character stands for, or -1 when it is none of the 256.
int byte_level_byte(char32_t c);
// Tokens back to text the way `tokenizers`' ByteLevel decoder does it: each token's characters
// mapped to their bytes (a token holding any other character is taken as its own UTF-8), the bytes
// read as UTF-8 with each invalid sequence one U+FFFD.
std::string byte_level_decode(const std::vector<std::string_view>& tokens);
// Bytes as UTF-8, each maximal invalid subpart replaced by one U+FFFD (the WHATWG / Rust
// `from_utf8_lossy` rule, not utf8_decode's one per byte).
std::string utf8_lossy(std::string_view bytes);

}  // namespace ws::text
