// SPDX-License-Identifier: Apache-2.0
// The studio window: the runs dock on the left, pages (Run, Dataset) in the middle. It only
// wires things together; the work lives in the pages, docks, models and jobs.
#pragma once

#include <QHash>
#include <QMainWindow>

class QScrollArea;

class QTabWidget;

namespace ws {

class WorkerJob;

class ComparePage;
class DatasetPage;
class JobManager;
class RunPage;
class QueueDock;
class RunQueue;
class RunsDock;
class RunsModel;
class StartPage;

class MainWindow : public QMainWindow {
  Q_OBJECT
 public:
  // An empty workspace means the last one used (QSettings).
  explicit MainWindow(const QString& workspace = {}, int heartbeatTimeoutMs = 60'000, QWidget* parent = nullptr);

  void setWorkspace(const QString& dir);
  void openRun(const QString& runDir);
  // Quit without asking (SIGINT/SIGTERM): cancel the live workers and close once they have
  // stopped; with `kill`, kill them first.
  void quitStoppingWorkers(bool kill);
  // Quits now and leaves every worker training (WorkerJob::detach).
  void quitKeepingWorkers();
  // Start Run with a chosen run file; a worker that ends before `started` (bad values in a
  // well-formed file) is reported in a dialog and the status bar. Null when it cannot start at all.
  WorkerJob* startRunFile(const QString& yaml);
  // Try the demo: the demo run set up in `folder` (which becomes the workspace) and started there.
  // Null with *error when it cannot be.
  WorkerJob* tryDemoIn(const QString& folder, QString* error = nullptr);
  StartPage* startPage() const { return startPage_; }

  JobManager* jobs() const { return jobs_; }
  RunsModel* runsModel() const { return runs_; }
  RunsDock* runsDock() const { return runsDock_; }
  RunQueue* queue() const { return queue_; }
  QueueDock* queueDock() const { return queueDock_; }
  RunPage* runPage() const { return runPage_; }
  DatasetPage* datasetPage() const { return datasetPage_; }
  ComparePage* comparePage() const { return comparePage_; }
  // Shows `metadataPath` on the Dataset page; false (with a message box) when it cannot be read.
  // Errors go to a dialog when `askUser`, else to stderr and the page's status line.
  bool openDataset(const QString& metadataPath, bool askUser = true);
  QTabWidget* pages() const { return pages_; }
  // Brings a page (runPage(), datasetPage(), ...) to the front.
  void showPage(QWidget* page);
  // Shows the Compare page with two checkpoint folders (RUN/checkpoint-N) and renders them on
  // `input` (a prompt, or a clip for upsampler runs). False with *error when one cannot be used.
  bool compareCheckpoints(const QString& checkpointA, const QString& checkpointB, const QString& input, QString* error);

 protected:
  void closeEvent(QCloseEvent* event) override;

 private:
  void createMenus();
  void chooseWorkspace();
  void openRunFolder();
  void newRun();
  // New Run prefilled from the run on the Run page; `fromCheckpoint`: branched from a checkpoint
  // of it the user picks.
  void newRunLikeShown(bool fromCheckpoint = false);
  void startRunFromYaml();
  void updateStatusBar();
  void closeWhenWorkersStopped();
  void addPage(QWidget* page, const QString& title);
  void tryDemo();  // asks for the folder first
  void refreshStartPage();

  JobManager* jobs_;
  RunsModel* runs_;
  RunsDock* runsDock_;
  RunQueue* queue_;
  QueueDock* queueDock_;
  QTabWidget* pages_;
  RunPage* runPage_;
  StartPage* startPage_ = nullptr;
  DatasetPage* datasetPage_;
  ComparePage* comparePage_;
  bool closing_ = false;
  QHash<QWidget*, QScrollArea*> pageScrolls_;  // page -> the scroll area its tab holds
  bool keepEditsAsked_ = false;                // quitKeepingWorkers asked about unsaved captions already
};

}  // namespace ws
