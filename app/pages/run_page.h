// One run: state and progress, loss chart, event log, config, the worker's own output, and
// the ways out to its folder and TensorBoard. It follows events.jsonl, so a run started by
// this studio, by `wanstudio --batch` or on another machine looks the same.
#pragma once

#include <QPointer>
#include <QTimer>
#include <QWidget>

#include "models/run_status.h"

class QLabel;
class QPlainTextEdit;
class QProgressBar;
class QPushButton;
class QStackedWidget;
class QTabWidget;

namespace ws {

class ConfigView;
class EventLogView;
class EventsFileTail;
class JobManager;
class LossChart;
class RunEvents;
class ValidationView;
class WorkerJob;

class RunPage : public QWidget {
  Q_OBJECT
 public:
  explicit RunPage(JobManager* jobs, QWidget* parent = nullptr);

  void showRun(const QString& runDir);  // "" shows the empty state
  bool showTab(const QString& name);    // by title, case-insensitive ("validation")
  QString runDir() const { return runDir_; }
  RunStatus status() const { return status_; }

  RunEvents* events() const { return events_; }
  LossChart* lossChart() const { return chart_; }
  EventLogView* eventLog() const { return log_; }
  ConfigView* configView() const { return config_; }
  ValidationView* validationView() const { return validation_; }
  QTabWidget* tabs() const { return tabs_; }
  QLabel* stateLabel() const { return state_; }

 public Q_SLOTS:
  void cancelRun();
  void killRun();
  void openFolder();

 private:
  void attachJob();
  void refreshStatus();
  void rebuildChart();
  void addSteps(int first);

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
  QPushButton* kill_;
  LossChart* chart_;
  QTabWidget* tabs_;
  EventLogView* log_;
  ConfigView* config_;
  ValidationView* validation_;
  QPlainTextEdit* workerOutput_;
};

}  // namespace ws
