// SPDX-License-Identifier: Apache-2.0
#include "runtime/events.h"

#include <cerrno>
#include <cstring>

#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <fstream>

#include "core/error.h"

namespace ws::runtime {

double unix_time() {
  using namespace std::chrono;
  return duration_cast<microseconds>(system_clock::now().time_since_epoch()).count() / 1e6;
}

int64_t current_rss_bytes() {
  std::ifstream in("/proc/self/statm");
  int64_t pages = 0, resident = 0;
  if (in >> pages >> resident) return resident * sysconf(_SC_PAGESIZE);
  return 0;
}

int64_t peak_rss_bytes() {
  struct rusage ru {};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<int64_t>(ru.ru_maxrss) * 1024;
}

EventStream& EventStream::global() {
  static EventStream s;
  return s;
}

void EventStream::open_file(const std::string& path) {
  std::lock_guard<std::mutex> lock(mu_);
  if (file_) std::fclose(file_);
  // A crash mid-write leaves a torn last line; end it so our first line stands alone.
  bool needs_newline = false;
  if (std::FILE* r = std::fopen(path.c_str(), "rb")) {
    if (std::fseek(r, -1, SEEK_END) == 0) needs_newline = std::fgetc(r) != '\n';
    std::fclose(r);
  }
  file_ = std::fopen(path.c_str(), "ab");
  if (!file_) throw Error(path + ": cannot open for appending");
  file_path_ = path;
  file_failed_ = false;
  if (needs_newline) std::fputc('\n', file_);
}

void EventStream::close_file() {
  std::lock_guard<std::mutex> lock(mu_);
  if (file_) std::fclose(file_);
  file_ = nullptr;
}

void EventStream::set_stdout(bool on) {
  std::lock_guard<std::mutex> lock(mu_);
  to_stdout_ = on;
}

void EventStream::set_stdout_stream(std::FILE* f) {
  std::lock_guard<std::mutex> lock(mu_);
  out_ = f;
}

void EventStream::emit(const std::string& type, json fields) {
  const std::string line = contract::format_event_line(type, unix_time(), fields);
  std::lock_guard<std::mutex> lock(mu_);
  if (to_stdout_ && out_) {
    std::fwrite(line.data(), 1, line.size(), out_);
    std::fflush(out_);  // EPIPE is ignored: SIGPIPE is off and the file keeps the record
  }
  if (file_ && !file_failed_) {
    const bool ok = std::fwrite(line.data(), 1, line.size(), file_) == line.size();
    if (std::fflush(file_) != 0 || !ok) {
      // The disk is full (or gone): the file is torn from here on. Stop writing it and say so
      // where a person will see it; stdout still carries every event.
      const int e = errno;
      file_failed_ = true;
      std::fprintf(stderr,
                   "error: %s: cannot append events (%s); the file stops before this `%s` event "
                   "and has no `finished` line\n",
                   file_path_.c_str(), e == ENOSPC ? "disk full" : std::strerror(e), type.c_str());
    }
  }
}

void EventStream::log(const std::string& level, const std::string& message) {
  emit(contract::LogEvent{level, message});
}

void EventStream::error(const std::string& message, const std::string& hint) {
  emit(contract::ErrorEvent{message, hint, false});
}

void EventStream::finished(const std::string& status, int64_t step) {
  emit(contract::FinishedEvent{status, step, false});
}

Heartbeat::Heartbeat(double interval_s) {
  thread_ = std::thread([this, interval_s] {
    std::unique_lock<std::mutex> lock(mu_);
    while (!stop_) {
      if (cv_.wait_for(lock, std::chrono::duration<double>(interval_s), [this] { return stop_; })) break;
      EventStream::global().emit(contract::HeartbeatEvent{current_rss_bytes(), std::nullopt});
    }
  });
}

Heartbeat::~Heartbeat() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

}  // namespace ws::runtime
