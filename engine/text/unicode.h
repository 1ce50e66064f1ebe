// SPDX-License-Identifier: Apache-2.0
// The Unicode data the Qwen tokenizer needs, from tables generated out of Python's unicodedata
// (engine/text/gen_unicode_tables.py): the character classes of its pre-tokenizer regex and NFC.
// Unicode 14.0 (Python 3.11); characters assigned later may split or normalize otherwise than in
// `tokenizers` (see the generator).
#pragma once
#include <string>
#include <string_view>

namespace ws::text {

bool is_unicode_letter(char32_t c);  // General_Category L: \p{L}
bool is_unicode_number(char32_t c);  // General_Category N: \p{N}
bool is_unicode_space(char32_t c);   // White_Space: the regex's \s

// Unicode Normalization Form C: full canonical decomposition (Hangul by its algorithm), canonical
// ordering of combining marks, then canonical composition without the excluded composites.
std::u32string nfc(std::u32string_view s);

}  // namespace ws::text
