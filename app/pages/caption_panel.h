// SPDX-License-Identifier: Apache-2.0
// The dataset page's Captioner tab: the backend — Qwen2.5-VL in the engine (a release folder and
// the device) or a local OpenAI-compatible server (its endpoint and model name) — and the prompt,
// all kept in QSettings, and "Caption Selected Rows" / "Caption Rows Without a Caption", which run
// `wanstudio-engine caption` as a job with progress and Cancel (docs/design/captioning.md §7, §8).
// Each `caption` event puts that row's suggestion into the page's model as it arrives; the job
// itself writes them into metadata.json, and they are reviewed in the Row tab (SuggestionBox).
#pragma once

#include <QPointer>
#include <QVector>
#include <QWidget>

#include "jobs/job_result.h"
#include "jobs/worker_job.h"

class QComboBox;
class QFormLayout;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QProgressBar;
class QPushButton;

namespace ws {

class DatasetPage;
class JobManager;

class CaptionPanel : public QWidget {
  Q_OBJECT
 public:
  explicit CaptionPanel(DatasetPage* page);

  enum class Backend { Engine = 0, Server = 1 };
  QComboBox* backend() const { return backend_; }
  QLineEdit* modelPath() const { return modelPath_; }
  QComboBox* device() const { return device_; }
  QLineEdit* endpoint() const { return endpoint_; }
  QLineEdit* modelName() const { return model_; }
  QPlainTextEdit* prompt() const { return prompt_; }
  QPushButton* selectedButton() const { return selected_; }
  QPushButton* uncaptionedButton() const { return uncaptioned_; }
  QPushButton* cancelButton() const { return cancel_; }
  QProgressBar* progress() const { return progress_; }
  QLabel* status() const { return status_; }
  WorkerJob* job() const { return job_; }
  // Tests run a stand-in worker; default: the engine (engineExecutable()).
  void setProgram(const QString& program) { program_ = program; }

  // The worker's arguments for `rows` (0-based rows of the saved file; empty: the rows without a caption).
  QStringList arguments(const QVector<int>& rows) const;
  // Saves the page's edits first (the job picks rows by their place in the file), then starts the
  // job; false with `error` when a field is empty, nothing is open or a job runs. With the engine's
  // model while a worker of the studio's JobManager trains, the job is queued instead (true) and
  // starts once no worker is left; cancel() then takes it out.
  bool start(const QVector<int>& rows, QString* error = nullptr);
  void cancel();
  bool queued() const { return queued_; }
  // The studio's workers, which an engine caption job waits for (none: it never waits).
  void setJobManager(JobManager* jobs);
  // One event of the job: `caption` sets the row's suggestion in the model, `progress` the bar.
  void applyEvent(const RunEvent& ev);

 Q_SIGNALS:
  void captioningFinished(const ws::JobResult& result);

 private:
  bool launch(const QVector<int>& rows, QString* error);
  void startQueued();
  void ended(const JobResult& result);
  void updateButtons();
  void showBackendFields();
  Backend chosenBackend() const;

  DatasetPage* page_;
  QComboBox *backend_, *device_;
  QFormLayout* form_;
  QLineEdit *modelPath_, *endpoint_, *model_;
  QPlainTextEdit* prompt_;
  QPushButton *selected_, *uncaptioned_, *cancel_;
  QProgressBar* progress_;
  QLabel* status_;
  QPointer<WorkerJob> job_;
  QString program_;
  bool savedDuringJob_ = false;
  QPointer<JobManager> jobs_;
  bool queued_ = false;
  QVector<int> queuedRows_;
};

}  // namespace ws
