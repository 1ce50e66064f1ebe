// SPDX-License-Identifier: Apache-2.0
#include "contract/log_lines.h"

#include <cctype>

namespace ws::contract {
namespace {

// Drops "\x1b[...m" colour sequences (a terminal sink colours the level).
std::string strip_ansi(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\x1b' && i + 1 < s.size() && s[i + 1] == '[') {
      size_t j = i + 2;
      while (j < s.size() && s[j] != 'm') ++j;
      i = j;
      continue;
    }
    out += s[i];
  }
  return out;
}

}  // namespace

std::optional<LogLine> parse_stderr_log_line(std::string_view raw) {
  const std::string line = strip_ansi(raw);
  // "[HH:MM:SS] [" = 12 characters.
  if (line.size() < 14 || line[0] != '[' || line[3] != ':' || line[6] != ':' || line[9] != ']' || line[10] != ' ' ||
      line[11] != '[')
    return std::nullopt;
  for (size_t i : {1, 2, 4, 5, 7, 8})
    if (!std::isdigit(static_cast<unsigned char>(line[i]))) return std::nullopt;
  const size_t close = line.find(']', 12);
  if (close == std::string::npos || close == 12 || close + 1 >= line.size() || line[close + 1] != ' ')
    return std::nullopt;
  LogLine l;
  l.level = line.substr(12, close - 12);
  for (char c : l.level)
    if (!std::islower(static_cast<unsigned char>(c))) return std::nullopt;
  l.message = line.substr(close + 2);
  return l;
}

}  // namespace ws::contract
