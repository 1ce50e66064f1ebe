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
#include <QVariantMap>

#include <memory>

class QProcess;

namespace ws {

// One way to make a run fit a GPU (the worker's `to_fit`): the options to set and what the run
// then needs on the GPU and in host memory.
struct FitSuggestion {
  QVariantMap changes;  // option -> value, e.g. blocks_to_swap 28, gradient_checkpointing true
  double deviceBytes = 0, hostBytes = 0;
  bool fits = false;
  QString words() const;  // "blocks_to_swap 28, gradient_checkpointing true"
};

struct MemoryEstimateResult {
  bool ok = false;
  QString error;            // !ok: why, one line
  double totalBytes = 0;    // the run's peak by formula (on the GPU with --device cuda)
  double machineBytes = 0;  // this machine's memory, or the GPU's that was asked about
  bool fits = true;
  QStringList parts;     // "weights 1.20 GiB", largest first
  bool gpu = false;      // estimated for a GPU (--device cuda)
  double hostBytes = 0;  // gpu: what waits in host memory (low_vram's idle expert, swapped blocks)
  QStringList hostParts;
  // gpu, when the run does not fit: each way's first fitting choice, the last one the best.
  QList<FitSuggestion> toFit;
};

class EstimateJob : public QObject {
  Q_OBJECT
 public:
  explicit EstimateJob(QObject* parent = nullptr);
  ~EstimateJob() override;

  // Estimates the run `yamlText` describes (written to a scratch file first) with `processes` ranks,
  // against this machine's memory, or with `gpuMemory` ("24GiB") against a GPU that has it.
  void start(const QString& yamlText, int processes, const QString& gpuMemory = {});
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
