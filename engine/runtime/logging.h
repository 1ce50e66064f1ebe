// Human-readable logging for every verb: spdlog's default logger writes to stderr and, once a
// run directory exists, to <run>/logs/engine.log. Use spdlog::info/warn/error anywhere; stdout
// stays free for the event stream.
#pragma once
#include <spdlog/spdlog.h>

#include <string>

namespace ws::runtime {

struct LogOptions {
  std::string file;  // appended to; "" = stderr only
  spdlog::level::level_enum level = spdlog::level::info;
  // Also emit messages at or above `events_level` as `log` events, so warnings (a bf16 fallback,
  // an ignored option) reach the GUI and events.jsonl.
  bool to_events = false;
  spdlog::level::level_enum events_level = spdlog::level::warn;
};

// (Re)installs the default logger; calling it again replaces the sinks (e.g. adding the log file
// once the run directory exists). WANSTUDIO_LOG_LEVEL (debug, info, warning, error) overrides
// `level`. Throws ws::Error when the log file cannot be opened.
void setup_logging(const LogOptions& opts = {});

// The `log` event's level name for an spdlog level ("debug" | "info" | "warning" | "error").
const char* event_level_name(spdlog::level::level_enum level);

}  // namespace ws::runtime
