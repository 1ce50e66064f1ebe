// SPDX-License-Identifier: Apache-2.0
// Base64 (RFC 4648, standard alphabet, padded): images travel inside the chat request as data URLs.
// Kept in caption/ rather than core/: only the chat client needs it.
#pragma once
#include <string>
#include <string_view>

namespace ws::caption {

std::string base64_encode(std::string_view bytes);
// Strict: ws::Error on a character outside the alphabet, bad padding or a length not a multiple of 4.
std::string base64_decode(std::string_view text);

}  // namespace ws::caption
