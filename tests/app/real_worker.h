// SPDX-License-Identifier: Apache-2.0
// What the tests that drive the studio against the real worker share: the shipped presets, the
// demo dataset written by `wanstudio-engine demo-data`, a run's event count, and a guard that
// kills the workers a failed check leaves training (workers outlive the studio by design).
#pragma once

#include <QDir>
#include <QFileInfo>
#include <QProcess>
#include <QString>

#include "jobs/job_manager.h"
#include "jobs/worker_job.h"
#include "main_window.h"
#include "runfolder/run_events.h"
#include "test_paths.h"

namespace ws::test {

inline QString configs() { return QDir::cleanPath(QStringLiteral(WS_TEST_DATA "/../../configs")); }

// Points the studio at the built worker and the shipped presets; the demo dataset's metadata.json
// under `dataDir`, or "" when the worker is missing or fails.
inline QString setUpRealWorker(const QString& dataDir) {
  if (!QFileInfo(QStringLiteral(WS_ENGINE_EXE)).isExecutable()) return {};
  qputenv("WANSTUDIO_ENGINE", WS_ENGINE_EXE);
  qputenv("WANSTUDIO_CONFIGS", configs().toUtf8());
  QProcess p;
  p.start(QStringLiteral(WS_ENGINE_EXE), {QStringLiteral("demo-data"), dataDir});
  if (!p.waitForFinished(300'000) || p.exitCode() != 0) return {};
  return dataDir + QStringLiteral("/metadata.json");
}

// How many events of `type` the run has written so far.
inline int eventCount(const QString& runDir, const char* type) {
  RunEvents ev;
  if (!ev.loadFile(QDir(runDir).filePath(QStringLiteral("events.jsonl")))) return 0;
  if (QLatin1String(type) == QLatin1String("step")) return int(ev.steps().size());  // kept apart, compact
  int n = 0;
  for (const RunEvent& e : ev.events()) n += e.type == QLatin1String(type);
  return n;
}

struct KillLeftWorkers {
  MainWindow& w;
  ~KillLeftWorkers() {
    for (WorkerJob* j : w.jobs()->liveJobs()) j->kill();
  }
};

}  // namespace ws::test
