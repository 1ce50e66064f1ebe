// SPDX-License-Identifier: Apache-2.0
// The events of one run, read from events.jsonl or a live worker, with the reader rules of
// the event stream contract: torn lines are skipped, a resumed run appends a new `started`,
// and points of earlier segments with step > resume_step are marked dropped.
#pragma once

#include <QByteArray>
#include <QObject>
#include <QVector>

#include "runfolder/run_event.h"
#include "runfolder/run_summary.h"

namespace ws {

class RunEvents : public QObject {
  Q_OBJECT
 public:
  // `step` events are the bulk of a long run (100k+): kept compact, not as JSON objects.
  struct StepPoint {
    qint64 step = 0;
    qint64 expertStep = 0;
    double time = 0, loss = 0, lr = 0, gradNorm = 0, samplesPerS = 0, etaS = 0;
    // Where the update's time went (seconds; NaN in runs that did not record it). swapWaitS is
    // block swap's wait for host-to-device copies, part of modelS (NaN in runs without block swap).
    double dataWaitS = 0, vaeS = 0, modelS = 0, stepS = 0, swapWaitS = 0;
    QString expert;  // "upsampler" | "high" | "low" (implicitly shared, cheap)
    int segment = 0;
    bool dropped = false;

    static StepPoint fromEvent(const RunEvent& ev);  // missing numbers become NaN
  };
  // The log is every event but heartbeats, in arrival order.
  struct LogRow {
    bool isStep = false;
    int index = 0;  // into steps() or events()
  };

  explicit RunEvents(QObject* parent = nullptr);

  void clear();
  // Summary-only readers (the runs list) skip storing events, steps and log rows.
  void setKeepHistory(bool keep) { keepHistory_ = keep; }
  // Feeds raw bytes (any split); a line is taken once its newline arrives.
  void appendData(QByteArrayView chunk);
  // End of the data (a file read to its end, a worker that exited): a pending last line is
  // taken if it is a whole JSON object, otherwise it is a torn write and ignored.
  void finishData();
  void appendEvent(const RunEvent& ev);
  // clear() + the whole file + finishData(). False (with *error) when it cannot be read.
  bool loadFile(const QString& path, QString* error = nullptr);

  const QVector<RunEvent>& events() const { return events_; }
  const QVector<StepPoint>& steps() const { return steps_; }
  int logRowCount() const { return int(log_.size()); }
  LogRow logRow(int row) const { return log_.at(row); }
  const RunSummary& summary() const { return summary_; }
  const RunEvent& lastHeartbeat() const { return lastHeartbeat_; }
  int skippedLines() const { return skippedLines_; }

 Q_SIGNALS:
  void rowsAppended(int firstLogRow, int lastLogRow);
  void stepsAppended(int firstStepIndex);
  void pointsReset();  // a resume dropped earlier points: redraw from steps()
  void summaryChanged();
  void cleared();

 private:
  void ingest(const RunEvent& ev);  // no signals
  void ingestLine(QByteArrayView line);
  void flushLazySteps();
  void flushSignals();
  void applyResume(qint64 resumeStep);

  QVector<RunEvent> events_;
  QVector<StepPoint> steps_;
  QVector<LogRow> log_;
  RunSummary summary_;
  RunEvent lastHeartbeat_;
  QByteArray pending_;
  int skippedLines_ = 0;
  int segment_ = 0;
  bool keepHistory_ = true;
  // Summary-only readers parse just the newest of a run of step lines (the bulk of a file):
  // the last and, in case that one is torn, the one before.
  QByteArray lazyStep_, lazyStepBefore_;
  qint64 lazySkipped_ = 0;
  // Signal batching: one notification per appendData() call, not per line.
  int firstNewRow_ = -1;
  int firstNewStep_ = -1;
  bool reset_ = false;
  bool summaryDirty_ = false;
};

}  // namespace ws
