// Progress bar with an ETA on stderr for verbs that run more than a few seconds
// (docs/design/architecture.md "Worker verbs"). Silent unless stderr is a terminal, so logs and the
// supervisor's pipes stay clean.
#pragma once
#include <chrono>
#include <cstddef>
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

}  // namespace ws::runtime
