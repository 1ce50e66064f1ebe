// SPDX-License-Identifier: Apache-2.0
// The event stream's writer [contract, docs/design/architecture.md §3]: one JSON object per line on
// stdout and appended to <run>/events.jsonl, formatted by the contract (contract/events.h).
// Thread-safe; every line gets "type" and "time".
#pragma once
#include <nlohmann/json.hpp>

#include <atomic>
#include <cstdio>
#include <mutex>
#include <string>
#include <thread>
#include <condition_variable>

#include "contract/events.h"

namespace ws::runtime {

using json = nlohmann::json;

class EventStream {
 public:
  static EventStream& global();

  // Start appending to `path` (events.jsonl). A torn last line left by a crash is
  // terminated first so the next event starts on its own line.
  void open_file(const std::string& path);
  void close_file();
  // Lines go to stdout too unless switched off (e.g. verbs whose stdout is a report).
  void set_stdout(bool on);
  bool to_stdout() const { return to_stdout_; }
  void set_stdout_stream(std::FILE* f);

  void emit(const std::string& type, json fields = json::object());
  // A typed event of the contract: emit(contract::StepEvent{...}).
  template <class Event>
  void emit(const Event& ev) {
    emit(Event::kType, ev.to_json());
  }
  void log(const std::string& level, const std::string& message);
  void error(const std::string& message, const std::string& hint = {});
  void finished(const std::string& status, int64_t step);

 private:
  std::mutex mu_;
  std::FILE* file_ = nullptr;
  std::string file_path_;
  bool file_failed_ = false;  // a write to file_ failed (disk full): reported once, then skipped
  std::FILE* out_ = stdout;
  bool to_stdout_ = true;
};

double unix_time();
int64_t current_rss_bytes();
int64_t peak_rss_bytes();

// Emits `heartbeat` every `interval_s` from its own thread while alive.
class Heartbeat {
 public:
  explicit Heartbeat(double interval_s = 5.0);
  ~Heartbeat();
  Heartbeat(const Heartbeat&) = delete;
  Heartbeat& operator=(const Heartbeat&) = delete;

 private:
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
};

}  // namespace ws::runtime
