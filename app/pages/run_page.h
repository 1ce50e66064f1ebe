// SPDX-License-Identifier: Apache-2.0
// One run: state and progress, the training charts, event log, config, the worker's own
// output, and the ways out to its folder and TensorBoard. It follows events.jsonl, so a run
// started by this studio, by `wanstudio --batch` or on another machine looks the same.
// Cancel and Kill act on a worker this studio supervises; Resume restarts an ended run from
// its latest checkpoint.
#pragma once

#include <QPointer>
#include <QTimer>
#include <QWidget>

#include "runfolder/run_status.h"

class QLabel;
class QPlainTextEdit;
class QProgressBar;
class QPushButton;
class QSplitter;
class QStackedWidget;
class QTabWidget;

namespace ws {

class ConfigView;
class EventLogView;
class EventsFileTail;
class ExpertValidationView;
class JobManager;
class LossChart;
class RunEvents;
class TrainingCharts;
class ValidationView;
class WorkerJob;

class RunPage : public QWidget {
  Q_OBJECT
 public:
  explicit RunPage(JobManager* jobs, QWidget* parent = nullptr);

  void showRun(const QString& runDir);  // "" shows the empty state
  bool showTab(const QString& name);    // by title, case-insensitive ("validation", "grad norm")
  QString runDir() const { return runDir_; }
  RunStatus status() const { return status_; }

  // Resume is offered for an ended run (not running here or elsewhere) that has run.yaml
  // and a checkpoint; *why says what is missing otherwise.
  bool canResume(QString* why = nullptr) const;
  // Restarts the worker on the run's run.yaml from its latest checkpoint; maxTrainSteps > 0
  // raises the total (to train a completed run on). False with *error when it cannot start.
  bool resume(qint64 maxTrainSteps = 0, QString* error = nullptr, const QString& checkpoint = {});
  // Asks which of the run's checkpoints (newest first); its folder, or "" when cancelled or none.
  QString chooseCheckpoint(const QString& title);

  RunEvents* events() const { return events_; }
  TrainingCharts* charts() const { return charts_; }
  LossChart* lossChart() const;
  EventLogView* eventLog() const { return log_; }
  ConfigView* configView() const { return config_; }
  ValidationView* validationView() const { return validation_; }
  ExpertValidationView* expertValidationView() const { return expertValidation_; }
  QTabWidget* tabs() const { return tabs_; }
  QLabel* stateLabel() const { return state_; }
  QLabel* statsLabel() const { return stats_; }
  QProgressBar* progressBar() const { return progress_; }
  QPlainTextEdit* lastLinesView() const { return lastLines_; }
  QPushButton* cancelButton() const { return cancel_; }
  QPushButton* saveButton() const { return save_; }
  QPushButton* killButton() const { return kill_; }
  QPushButton* resumeButton() const { return resume_; }

 public Q_SLOTS:
  void cancelRun();
  void saveNow();  // a checkpoint after the current step; the run goes on
  void killRun();  // asks first (setConfirmKill(false): scripts and tests)
  void setConfirmKill(bool ask) { confirmKill_ = ask; }
  void resumeRun();         // asks for a new total first when the run has completed its steps
  void resumeFromChosen();  // Resume from Checkpoint…: an earlier checkpoint, the steps after it again
  void openFolder();

 private:
  void attachJob();
  void refreshStatus();
  void refreshButtons();
  bool signalElsewhere(int signal);
  bool confirmKill_ = true;
  void refreshLastLines();
  QString statsText() const;

  JobManager* jobs_;
  QString runDir_;
  RunStatus status_;
  RunEvents* events_;
  EventsFileTail* tail_;
  QPointer<WorkerJob> job_;
  QTimer clock_;

  QStackedWidget* stack_;
  QLabel* title_;
  QLabel* state_;
  QLabel* stats_;
  QLabel* tensorboard_;
  QProgressBar* progress_;
  QPushButton* cancel_;
  QPushButton* save_;
  QPushButton* kill_;
  QPushButton* resume_;
  QLabel* lastLinesTitle_;
  QPlainTextEdit* lastLines_;
  QSplitter* split_;
  TrainingCharts* charts_;
  QTabWidget* tabs_;
  EventLogView* log_;
  ConfigView* config_;
  ValidationView* validation_;
  ExpertValidationView* expertValidation_;
  QStackedWidget* validationStack_;
  QPlainTextEdit* workerOutput_;
};

}  // namespace ws
