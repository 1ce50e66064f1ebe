// SPDX-License-Identifier: Apache-2.0
// Progress bar with an ETA on stderr for verbs that run more than a few seconds
// (docs/design/architecture.md "Worker verbs"). Silent unless stderr is a terminal, so logs and the
// supervisor's pipes stay clean.
#pragma once
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace ws::runtime {

class ProgressBar {
 public:
  ProgressBar(std::string label, size_t total);
  ~ProgressBar();  // clears the line
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  void update(size_t done);

 private:
  std::string label_;
  size_t total_;
  bool active_;
  std::chrono::steady_clock::time_point start_, last_;
};

// A verb's progress over a known number of items, as the studio and scripts read it: a `progress`
// event on the event stream after each item (rate and ETA from the items done since the first
// report, so files a re-run keeps do not inflate the rate) and the terminal bar.
class ProgressReporter {
 public:
  explicit ProgressReporter(std::string task);
  void operator()(int64_t done, int64_t total);

 private:
  std::string task_;
  std::unique_ptr<ProgressBar> bar_;  // made at the first report, when the total is known
  std::chrono::steady_clock::time_point start_;
  int64_t first_done_ = -1;
};

}  // namespace ws::runtime
