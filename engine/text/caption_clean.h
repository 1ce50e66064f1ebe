// SPDX-License-Identifier: Apache-2.0
// Caption cleaning before tokenization (docs/design/umt5.md §6.2): what Wan's tokenizer front end
// does with `clean='whitespace'` — ftfy's fix_text, html.unescape twice, strip, and every run of
// whitespace folded to one space. Implemented here without Python: ftfy's steps except its mojibake
// repair (fix_encoding) and surrogate repair, which UTF-8 input cannot need; NFC is left to the
// tokenizer's own NFKC, which gives the same ids.
#pragma once
#include <string>
#include <string_view>

namespace ws::text {

// The cleaned UTF-8 text. Invalid UTF-8 bytes become U+FFFD.
std::string clean_caption(std::string_view caption);

// The pieces, exposed for tests.
std::string ftfy_fix_text(std::string_view text);     // ftfy 6 fix_text (the subset above)
std::string html_unescape(std::string_view text);     // Python's html.unescape
std::string whitespace_clean(std::string_view text);  // \s+ -> " ", then strip

}  // namespace ws::text
