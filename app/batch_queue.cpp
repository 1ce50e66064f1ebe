// SPDX-License-Identifier: Apache-2.0
#include "batch_queue.h"

#include <QFileInfo>

#include <algorithm>

#include <cstdio>

#include "batch_runner.h"

namespace ws {

BatchQueue::BatchQueue(const QStringList& runYamls, const QStringList& workerArgs, int heartbeatTimeoutMs,
                       QObject* parent)
    : QObject(parent), runYamls_(runYamls), workerArgs_(workerArgs), heartbeatMs_(heartbeatTimeoutMs) {}

int BatchQueue::start() { return startNext() ? -1 : summarize(); }

bool BatchQueue::startNext() {
  while (!cancelled_ && next_ < runYamls_.size()) {
    const QString yaml = runYamls_.at(next_++);
    if (runYamls_.size() > 1)
      std::printf("wanstudio: run %d of %d: %s\n", next_, int(runYamls_.size()), yaml.toUtf8().constData());
    std::fflush(stdout);
    current_ = new BatchRunner(yaml, workerArgs_, heartbeatMs_, this);
    const int code = current_->start();
    if (code < 0) {
      connect(current_, &BatchRunner::done, this, [this](int c) {
        finishRun(c);
        if (!startNext()) Q_EMIT done(summarize());
      });
      return true;
    }
    finishRun(code);  // this run file could not be used; the next one still runs
  }
  return false;
}

void BatchQueue::finishRun(int exitCode) {
  codes_.push_back(exitCode);
  outcomes_ << current_->outcome();
  if (exitCode == 130) cancelled_ = true;
  current_->deleteLater();
  current_ = nullptr;
}

int BatchQueue::summarize() {
  const bool all =
      std::all_of(codes_.begin(), codes_.end(), [](int c) { return c == 0; }) && int(codes_.size()) == runYamls_.size();
  const int code = cancelled_ ? 130 : all ? 0 : 1;
  if (runYamls_.size() < 2) return code;  // one run: its own last lines say it all
  int completed = 0;
  for (int c : codes_) completed += c == 0;
  std::FILE* out = code == 0 ? stdout : stderr;
  std::fprintf(out, "wanstudio: %d of %d runs completed\n", completed, int(runYamls_.size()));
  for (int i = 0; i < runYamls_.size(); ++i) {
    const QString state =
        i < outcomes_.size() ? outcomes_.at(i) : QStringLiteral("not started (the queue was cancelled)");
    std::fprintf(out, "  %s: %s\n", QFileInfo(runYamls_.at(i)).fileName().toUtf8().constData(),
                 state.toUtf8().constData());
  }
  std::fflush(out);
  return code;
}

void BatchQueue::interrupt(int signo) {
  cancelled_ = true;  // no run starts after this one
  if (current_) current_->interrupt(signo);
}

}  // namespace ws
