// SPDX-License-Identifier: Apache-2.0
#include "runtime/logging.h"

#include <spdlog/sinks/base_sink.h>
#include <spdlog/spdlog.h>
#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>

#include <cstdlib>
#include <mutex>

#include "contract/log_lines.h"
#include "core/error.h"
#include "runtime/events.h"

namespace ws::runtime {
namespace {

spdlog::level::level_enum to_spdlog(log::Level level) {
  switch (level) {
    case log::Level::kDebug: return spdlog::level::debug;
    case log::Level::kInfo: return spdlog::level::info;
    case log::Level::kWarn: return spdlog::level::warn;
    case log::Level::kError: return spdlog::level::err;
    case log::Level::kOff: return spdlog::level::off;
  }
  return spdlog::level::info;
}

// The `log` event's level name ("debug" | "info" | "warning" | "error").
const char* event_level_name(spdlog::level::level_enum level) {
  switch (level) {
    case spdlog::level::trace:
    case spdlog::level::debug: return "debug";
    case spdlog::level::info: return "info";
    case spdlog::level::warn: return "warning";
    default: return "error";
  }
}

// Forwards log messages as `log` events. EventStream never logs, so this cannot recurse.
class EventSink : public spdlog::sinks::base_sink<std::mutex> {
 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    EventStream::global().log(event_level_name(msg.level), std::string(msg.payload.data(), msg.payload.size()));
  }
  void flush_() override {}
};

}  // namespace

void setup_logging(const LogOptions& opts) {
  auto level = to_spdlog(opts.level);
  if (const char* env = std::getenv("WANSTUDIO_LOG_LEVEL"); env && *env) {
    auto parsed = spdlog::level::from_str(env);
    // from_str answers `off` for names it does not know; only an explicit "off" silences.
    if (parsed != spdlog::level::off || std::string(env) == "off") level = parsed;
  }
  std::vector<spdlog::sink_ptr> sinks;
  auto err = std::make_shared<spdlog::sinks::stderr_color_sink_mt>();
  err->set_pattern(opts.rank < 0 ? std::string(contract::kStderrLogPattern)
                                 : "[%H:%M:%S] [rank " + std::to_string(opts.rank) + "] [%^%l%$] %v");
  sinks.push_back(err);
  if (!opts.file.empty()) {
    try {
      auto file = std::make_shared<spdlog::sinks::basic_file_sink_mt>(opts.file, /*truncate=*/false);
      file->set_pattern("[%Y-%m-%d %H:%M:%S.%e] [%l] %v");
      sinks.push_back(file);
    } catch (const spdlog::spdlog_ex& e) {
      throw Error(opts.file + ": cannot open log file (" + e.what() + ")");
    }
  }
  if (opts.to_events) {
    auto ev = std::make_shared<EventSink>();
    ev->set_level(to_spdlog(opts.events_level));
    sinks.push_back(ev);
  }
  auto logger = std::make_shared<spdlog::logger>("wanstudio", sinks.begin(), sinks.end());
  logger->set_level(level);
  // Flush every line: the log must survive a crash or an OOM kill, which is when it is read.
  logger->flush_on(spdlog::level::trace);
  spdlog::set_default_logger(logger);
}

}  // namespace ws::runtime

namespace {
// spdlog's built-in default logger writes to stdout, which carries the event stream: replace
// it before any verb runs (the worker links the whole engine archive, so this always runs).
const bool kStderrLogger = (ws::runtime::setup_logging(), true);
}  // namespace
