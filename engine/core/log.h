// SPDX-License-Identifier: Apache-2.0
// The engine's human log, as every file but the logging set-up sees it: ws::log::info("{} clips",
// n) and friends. Lines go to spdlog's default logger (runtime/logging.h installs its sinks:
// stderr, the run's engine.log, `log` events); keeping spdlog and fmt out of this header keeps
// them out of LibTorch's translation units.
#pragma once
#include <string>
#include <string_view>

#include "core/format.h"

namespace ws::log {

enum class Level { kDebug, kInfo, kWarn, kError, kOff };

// One line at `level` to the default logger.
void write(Level level, const std::string& message);

template <class... A>
void debug(std::string_view pattern, const A&... args) {
  write(Level::kDebug, ws::format(pattern, args...));
}
template <class... A>
void info(std::string_view pattern, const A&... args) {
  write(Level::kInfo, ws::format(pattern, args...));
}
template <class... A>
void warn(std::string_view pattern, const A&... args) {
  write(Level::kWarn, ws::format(pattern, args...));
}
template <class... A>
void error(std::string_view pattern, const A&... args) {
  write(Level::kError, ws::format(pattern, args...));
}

}  // namespace ws::log
