// SPDX-License-Identifier: Apache-2.0
// What a run's event stream says so far, kept up to date event by event by RunEvents.
#pragma once

#include <QJsonObject>
#include <QString>
#include <QStringList>

#include <limits>

namespace ws {

struct RunSummary {
  qint64 eventCount = 0;
  int segments = 0;  // number of `started` events (1 + resumes)
  QString job;       // "upsampler" | "experts" | ...
  QJsonObject config;
  qint64 resumeStep = 0;
  qint64 maxTrainSteps = 0;
  int worldSize = 0;
  qint64 lastStep = 0;  // highest step still valid after the resume rule
  double lastLoss = std::numeric_limits<double>::quiet_NaN();
  double firstTime = 0;
  double lastTime = 0;         // time of the newest event of any type
  double peakRssBytes = 0;     // highest heartbeat rss_bytes of the whole run
  double peakGpuMemBytes = 0;  // highest heartbeat gpu_mem_bytes (0: none reported)

  // The current attempt: everything since the last `started` (or, for a start that failed
  // before training, since the previous `finished`).
  bool attemptStarted = false;
  bool finished = false;
  QString finishedStatus;  // "completed" | "cancelled" | "failed"
  qint64 finishedStep = -1;
  QStringList errors;  // `error` messages of the current attempt

  bool hasEvents() const { return eventCount > 0; }
};

}  // namespace ws
