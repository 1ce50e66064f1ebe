// SPDX-License-Identifier: Apache-2.0
#include "runtime/progress.h"

#include "contract/events.h"
#include "runtime/events.h"

#include <unistd.h>

#include <cstdio>

namespace ws::runtime {

ProgressBar::ProgressBar(std::string label, size_t total)
    : label_(std::move(label)),
      total_(total),
      active_(::isatty(2) == 1 && total > 0),
      start_(std::chrono::steady_clock::now()),
      last_(start_) {}

ProgressBar::~ProgressBar() {
  if (active_) std::fprintf(stderr, "\r\033[K");
}

void ProgressBar::update(size_t done) {
  if (!active_) return;
  auto now = std::chrono::steady_clock::now();
  // At most ~10 redraws a second, but always the last one.
  if (done < total_ && now - last_ < std::chrono::milliseconds(100)) return;
  last_ = now;
  double elapsed = std::chrono::duration<double>(now - start_).count();
  double eta = done > 0 ? elapsed * static_cast<double>(total_ - done) / static_cast<double>(done) : 0;
  const int width = 30;
  int fill = static_cast<int>(width * done / total_);
  std::string bar(static_cast<size_t>(fill), '#');
  bar.append(static_cast<size_t>(width - fill), '.');
  std::fprintf(stderr, "\r\033[K%s [%s] %zu/%zu  ETA %.0fs", label_.c_str(), bar.c_str(), done, total_, eta);
  std::fflush(stderr);
}

ProgressReporter::ProgressReporter(std::string task)
    : task_(std::move(task)), start_(std::chrono::steady_clock::now()) {}

void ProgressReporter::operator()(int64_t done, int64_t total) {
  if (first_done_ < 0) {
    first_done_ = done;
    start_ = std::chrono::steady_clock::now();
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const double per_s = secs > 0 && done > first_done_ ? static_cast<double>(done - first_done_) / secs : 0;
  const double eta = per_s > 0 ? static_cast<double>(total - done) / per_s : 0;
  EventStream::global().emit(contract::ProgressEvent{task_, done, total, per_s, eta});
  if (!bar_) bar_ = std::make_unique<ProgressBar>(task_, static_cast<size_t>(std::max<int64_t>(total, 0)));
  bar_->update(static_cast<size_t>(std::max<int64_t>(done, 0)));
}

}  // namespace ws::runtime
