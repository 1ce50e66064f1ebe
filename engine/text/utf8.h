// SPDX-License-Identifier: Apache-2.0
// UTF-8 <-> code points for the text code: invalid bytes decode to U+FFFD, one per byte.
#pragma once
#include <string>
#include <string_view>

namespace ws::text {

std::u32string utf8_decode(std::string_view s);
std::string utf8_encode(std::u32string_view s);
void utf8_append(std::string& out, char32_t c);

}  // namespace ws::text
