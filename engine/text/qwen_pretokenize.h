// SPDX-License-Identifier: Apache-2.0
// Qwen2's pre-tokenizer split, written out by hand (std::regex has no \p{L}): the text is cut
// into the matches of
//   (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
// found left to right, each alternative tried in order as Oniguruma does. Every character starts
// some match, so the pieces cover the text.
#pragma once
#include <string_view>
#include <vector>

namespace ws::text {

std::vector<std::u32string_view> qwen_pretokenize(std::u32string_view text);

}  // namespace ws::text
