// SPDX-License-Identifier: Apache-2.0
// One render through the cache (cf. WorkerJob, which it drives): a cached result ends at once;
// otherwise the engine writes into <cache>/<key>.partial/, which becomes <cache>/<key>/ only
// when the render completed, so a cancelled or failed render leaves no half-written file.
#pragma once

#include <QElapsedTimer>
#include <QObject>
#include <QPointer>

#include "jobs/render_request.h"
#include "jobs/worker_job.h"
#include "runfolder/run_event.h"

namespace ws {

class RenderJob : public QObject {
  Q_OBJECT
 public:
  RenderJob(const RenderRequest& request, const QString& cacheDir, QObject* parent = nullptr);
  ~RenderJob() override;

  void setProgram(const QString& program);  // default: the engine next to the studio
  const RenderRequest& request() const { return request_; }
  QString cacheDir() const { return cacheDir_; }
  QString resultDir() const;  // <cache>/<key>
  // A finished render of the same key, if the cache has one.
  static bool lookup(const QString& dir, RenderResult* out);

  // Emits finished() (queued) at once on a cache hit.
  void start();
  void cancel();
  bool isRunning() const { return running_; }
  WorkerJob* worker() const { return worker_; }

 Q_SIGNALS:
  void progress(double fraction, const QString& text);  // fraction in [0, 1]
  void finished(bool ok, const ws::RenderResult& result, const QString& error);

 private:
  void onEvent(const RunEvent& ev);
  void onEnded();
  void fail(const QString& error);

  RenderRequest request_;
  QString cacheDir_, key_, partial_, program_;
  QPointer<WorkerJob> worker_;
  QElapsedTimer clock_;
  RenderResult pending_;  // filled from the worker's events
  bool running_ = false;
};

}  // namespace ws
