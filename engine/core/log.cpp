// SPDX-License-Identifier: Apache-2.0
#include "core/log.h"

#include <spdlog/spdlog.h>

namespace ws::log {

void write(Level level, const std::string& message) {
  spdlog::level::level_enum l = spdlog::level::info;
  switch (level) {
    case Level::kDebug: l = spdlog::level::debug; break;
    case Level::kInfo: l = spdlog::level::info; break;
    case Level::kWarn: l = spdlog::level::warn; break;
    case Level::kError: l = spdlog::level::err; break;
    case Level::kOff: return;
  }
  spdlog::default_logger_raw()->log(l, "{}", message);
}

}  // namespace ws::log
