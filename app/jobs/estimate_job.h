// SPDX-License-Identifier: Apache-2.0
// `wanstudio-engine estimate` for a run file that is not started yet (New Run): runs the worker
// in the background and delivers only the latest answer; a new request stops the one in flight.
#pragma once

#include <QMetaType>
#include <QObject>
#include <QPointer>
#include <QString>
#include <QStringList>
#include <QTemporaryDir>

#include <memory>

class QProcess;

namespace ws {

struct MemoryEstimateResult {
  bool ok = false;
  QString error;          // !ok: why, one line
  double totalBytes = 0;  // the run's peak by formula
  double machineBytes = 0;
  bool fits = true;
  QStringList parts;  // "weights 1.20 GiB", largest first
};

class EstimateJob : public QObject {
  Q_OBJECT
 public:
  explicit EstimateJob(QObject* parent = nullptr);
  ~EstimateJob() override;

  // Estimates the run `yamlText` describes (written to a scratch file first) with `processes` ranks.
  void start(const QString& yamlText, int processes);
  bool isRunning() const;

  static MemoryEstimateResult parse(const QByteArray& stdoutText, int exitCode, const QByteArray& stderrText);
  static QString formatBytes(double bytes);

 Q_SIGNALS:
  void finished(const ws::MemoryEstimateResult& result);

 private:
  QPointer<QProcess> process_;
  std::unique_ptr<QTemporaryDir> scratch_;
};

}  // namespace ws

Q_DECLARE_METATYPE(ws::MemoryEstimateResult)
