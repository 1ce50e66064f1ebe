// SPDX-License-Identifier: Apache-2.0
// The worker's human log on stderr [contract]: "[HH:MM:SS] [level] message" (spdlog's pattern
// below), or "error: message" for a failure before logging starts. `wanstudio --batch` reads
// these lines to show each warning once.
#pragma once
#include <optional>
#include <string>
#include <string_view>

namespace ws::contract {

// The spdlog pattern of the worker's stderr sink (colour markers %^ %$ included).
inline constexpr const char* kStderrLogPattern = "[%H:%M:%S] [%^%l%$] %v";

struct LogLine {
  std::string level;  // "debug", "info", "warning", "error", ... as spdlog names them
  std::string message;
};

// A line of that form (ANSI colour codes around the level allowed), or nullopt.
std::optional<LogLine> parse_stderr_log_line(std::string_view line);

}  // namespace ws::contract
