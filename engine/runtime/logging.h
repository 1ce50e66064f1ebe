// SPDX-License-Identifier: Apache-2.0
// Human-readable logging for every verb: spdlog's default logger writes to stderr and, once a
// run directory exists, to <run>/logs/engine.log. Log with ws::log::info/warn/error (core/log.h)
// anywhere; stdout stays free for the event stream. Only logging.cpp includes spdlog.
#pragma once
#include <string>

#include "core/log.h"

namespace ws::runtime {

struct LogOptions {
  std::string file;  // appended to; "" = stderr only
  log::Level level = log::Level::kInfo;
  // Also emit messages at or above `events_level` as `log` events, so warnings (a bf16 fallback,
  // an ignored option) reach the GUI and events.jsonl.
  bool to_events = false;
  log::Level events_level = log::Level::kWarn;
  // A data-parallel rank other than 0 tags its stderr lines "[rank N]"; -1 = no tag.
  int rank = -1;
};

// (Re)installs the default logger; calling it again replaces the sinks (e.g. adding the log file
// once the run directory exists). WANSTUDIO_LOG_LEVEL (debug, info, warning, error) overrides
// `level`. Throws ws::Error when the log file cannot be opened.
void setup_logging(const LogOptions& opts = {});

}  // namespace ws::runtime
