// SPDX-License-Identifier: Apache-2.0
// A bound on JSON nesting, checked before a document is parsed: nlohmann's parser is iterative,
// but dumping, copying and walking a parsed value recurse, so 100k nested brackets in a
// safetensors header or a metadata.json would overflow the stack later. No file we read needs
// more than a few levels.
#pragma once
#include <string>
#include <string_view>

namespace ws {

constexpr int kMaxJsonDepth = 64;

// Throws ws::Error ("<source>: JSON nested deeper than 64 levels") when `text` opens more
// arrays/objects at once than `max_depth`; brackets inside strings do not count.
void check_json_nesting(std::string_view text, const std::string& source, int max_depth = kMaxJsonDepth);

}  // namespace ws
