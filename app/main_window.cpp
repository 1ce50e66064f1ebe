// SPDX-License-Identifier: Apache-2.0
#include "main_window.h"

#include <memory>

#include <algorithm>
#include <cstdio>

#include <QAction>
#include <QActionGroup>
#include <QApplication>
#include <QCloseEvent>
#include <QDir>
#include <QFileInfo>
#include <QFileDialog>
#include <QMenuBar>
#include <QMessageBox>
#include <QScrollArea>
#include <QSettings>
#include <QStatusBar>
#include <QTabWidget>

#include "app_resources.h"
#include "help_menu.h"
#include "dialogs/new_run_dialog.h"
#include "dialogs/preferences_dialog.h"
#include "docks/queue_dock.h"
#include "docks/runs_dock.h"
#include "jobs/engine_locator.h"
#include "jobs/job_manager.h"
#include "jobs/preferences.h"
#include "jobs/preset_locator.h"
#include "jobs/run_queue.h"
#include "jobs/worker_job.h"
#include "item_models/run_queue_model.h"
#include "item_models/runs_model.h"
#include "pages/caption_panel.h"
#include "pages/dataset_page.h"
#include "jobs/demo_run.h"
#include "pages/start_page.h"
#include "pages/caption_encoder_panel.h"
#include "item_models/dataset_model.h"
#include <QLineEdit>

#include "pages/compare_page.h"
#include "pages/run_page.h"

namespace ws {

MainWindow::MainWindow(const QString& workspace, int heartbeatTimeoutMs, QWidget* parent) : QMainWindow(parent) {
  setObjectName(QStringLiteral("mainWindow"));
  setWindowTitle(tr("Wan Studio"));
  setWindowIcon(appIcon());
  jobs_ = new JobManager(this);
  jobs_->setHeartbeatTimeout(heartbeatTimeoutMs);
  runs_ = new RunsModel(jobs_, this);
  runs_->setRefreshInterval(2000);

  pages_ = new QTabWidget(this);
  pages_->setDocumentMode(true);
  runPage_ = new RunPage(jobs_, pages_);
  datasetPage_ = new DatasetPage(pages_);
  datasetPage_->captioner()->setJobManager(jobs_);  // an engine caption job waits for training
  comparePage_ = new ComparePage(runs_, pages_);
  startPage_ = new StartPage(pages_);
  addPage(startPage_, tr("Start"));
  addPage(runPage_, tr("Run"));
  addPage(datasetPage_, tr("Dataset"));
  addPage(comparePage_, tr("Compare"));
  setCentralWidget(pages_);

  runsDock_ = new RunsDock(runs_, this);
  addDockWidget(Qt::LeftDockWidgetArea, runsDock_);
  connect(runsDock_, &RunsDock::runSelected, this, [this](const QString& dir) {
    runPage_->showRun(dir);
    showPage(runPage_);
  });
  connect(runsDock_, &RunsDock::chooseWorkspaceRequested, this, &MainWindow::chooseWorkspace);
  // The start page offers; the window acts.
  connect(startPage_, &StartPage::tryDemoRequested, this, &MainWindow::tryDemo);
  connect(startPage_, &StartPage::newRunRequested, this, &MainWindow::newRun);
  connect(startPage_, &StartPage::openDatasetRequested, this, [this] {
    showPage(datasetPage_);
    datasetPage_->chooseAndOpen();
  });
  connect(startPage_, &StartPage::openDatasetFolderRequested, this, [this] {
    showPage(datasetPage_);
    datasetPage_->chooseFolderAndOpen();
  });
  connect(startPage_, &StartPage::chooseWorkspaceRequested, this, &MainWindow::chooseWorkspace);
  connect(startPage_, &StartPage::openWorkspace, this, &MainWindow::setWorkspace);
  connect(startPage_, &StartPage::openDataset, this, [this](const QString& path) { openDataset(path); });
  connect(startPage_, &StartPage::openRun, this, &MainWindow::openRun);
  connect(datasetPage_, &DatasetPage::datasetOpened, this, [this](const QString& path) {
    StartPage::remember(QStringLiteral("datasets"), path);
    refreshStartPage();
  });
  connect(runs_, &QAbstractItemModel::modelReset, this, &MainWindow::refreshStartPage);
  connect(runs_, &QAbstractItemModel::rowsInserted, this, &MainWindow::refreshStartPage);
  connect(runs_, &QAbstractItemModel::rowsInserted, this, &MainWindow::updateStatusBar);
  connect(runs_, &QAbstractItemModel::rowsRemoved, this, &MainWindow::updateStatusBar);
  connect(jobs_, &JobManager::changed, this, &MainWindow::updateStatusBar);

  // The run queue lives in the workspace (setWorkspace opens it) and starts its runs here.
  queue_ = new RunQueue(jobs_, this);
  queueDock_ = new QueueDock(new RunQueueModel(queue_, this), this);
  addDockWidget(Qt::LeftDockWidgetArea, queueDock_);
  connect(queue_, &RunQueue::runStarted, this, [this](const QString& dir) {
    runs_->refresh();
    statusBar()->showMessage(tr("Queued run started: %1").arg(dir), 5000);
  });

  createMenus();
  resize(1320, 820);
  resizeDocks({runsDock_}, {460}, Qt::Horizontal);  // room for the state column
  QSettings settings;
  restoreGeometry(settings.value(QStringLiteral("mainWindow/geometry")).toByteArray());
  restoreState(settings.value(QStringLiteral("mainWindow/state")).toByteArray());
  setWorkspace(workspace.isEmpty() ? settings.value(QStringLiteral("workspace")).toString() : workspace);
}

void MainWindow::refreshStartPage() {
  // The workspace's newest runs first.
  QList<QPair<double, QString>> runs;
  for (int r = 0; r < runs_->rowCount(); ++r) runs.append({runs_->summary(r).lastTime, runs_->runDir(r)});
  std::sort(runs.begin(), runs.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  QStringList dirs;
  for (int i = 0; i < runs.size() && i < 5; ++i) dirs << runs[i].second;
  startPage_->refresh(dirs);
}

void MainWindow::tryDemo() {
  const QString folder =
      QFileDialog::getExistingDirectory(this, tr("A folder for the demo (its data and run are written there)"),
                                        QDir::home().filePath(QStringLiteral("WanStudio-demo")));
  if (folder.isEmpty()) return;
  QString error;
  if (!tryDemoIn(folder, &error)) QMessageBox::warning(this, tr("Try the Demo"), error);
}

WorkerJob* MainWindow::tryDemoIn(const QString& folder, QString* error) {
  const QString preset = QDir(presetsDirectory()).filePath(QStringLiteral("demo-upsampler.yaml"));
  if (presetsDirectory().isEmpty() || !QFileInfo::exists(preset)) {
    if (error) *error = tr("The demo preset (configs/demo-upsampler.yaml) is not installed here.");
    return nullptr;
  }
  const QString yaml = writeDemoRun(preset, folder, error);
  if (yaml.isEmpty()) return nullptr;
  setWorkspace(folder);
  return startRunFile(yaml);
}

void MainWindow::createMenus() {
  QMenu* file = menuBar()->addMenu(tr("&File"));
  file->addAction(tr("Choose &Workspace…"), QKeySequence::Open, this, &MainWindow::chooseWorkspace);
  file->addAction(tr("Open &Run Folder…"), this, &MainWindow::openRunFolder);
  file->addAction(tr("Open &Dataset…"), this, [this] {
    showPage(datasetPage_);
    datasetPage_->chooseAndOpen();
  });
  file->addSeparator();
  file->addAction(tr("&New Run…"), QKeySequence::New, this, &MainWindow::newRun);
  file->addAction(tr("&Start Run from YAML…"), this, &MainWindow::startRunFromYaml);
  file->addSeparator();
  file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);

  QMenu* edit = menuBar()->addMenu(tr("&Edit"));
  edit->addAction(tr("&Preferences…"), QKeySequence::Preferences, this, [this] {
    PreferencesDialog dialog(this);
    connect(&dialog, &PreferencesDialog::heartbeatTimeoutChanged, jobs_, &JobManager::setHeartbeatTimeout);
    dialog.exec();
  });

  QMenu* run = menuBar()->addMenu(tr("&Run"));
  run->addAction(tr("&Resume Run"), runPage_, &RunPage::resumeRun);
  run->addAction(tr("Resume from Check&point…"), runPage_, &RunPage::resumeFromChosen);
  run->addAction(tr("New Run &Like This…"), this, &MainWindow::newRunLikeShown);
  run->addAction(tr("&Branch from Checkpoint…"), this, [this] { newRunLikeShown(true); });
  run->addAction(tr("&Save Checkpoint Now"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_S), runPage_,
                 &RunPage::saveNow);
  run->addAction(tr("&Cancel Run"), runPage_, &RunPage::cancelRun);
  run->addAction(tr("&Kill Worker"), runPage_, &RunPage::killRun);
  run->addAction(tr("Open Run &Folder in File Manager"), runPage_, &RunPage::openFolder);
  run->addAction(tr("Refres&h Runs"), QKeySequence::Refresh, runs_, &RunsModel::refresh);

  QMenu* view = menuBar()->addMenu(tr("&View"));
  view->addAction(runsDock_->toggleViewAction());
  view->addAction(queueDock_->toggleViewAction());
  // Light, dark, or whatever the platform gives; kept for the next launch.
  QMenu* theme = view->addMenu(tr("&Theme"));
  auto* themes = new QActionGroup(theme);
  for (const auto& [key, label] : {std::pair{"system", tr("Follow the &System")}, std::pair{"light", tr("&Light")},
                                   std::pair{"dark", tr("&Dark")}}) {
    QAction* a = theme->addAction(label);
    a->setCheckable(true);
    a->setData(QString::fromLatin1(key));
    a->setChecked(prefs::theme() == QLatin1String(key));
    themes->addAction(a);
    connect(a, &QAction::triggered, this, [key = QString::fromLatin1(key)] {
      prefs::setTheme(key);
      applyTheme(*qApp, key);
    });
  }

  addHelpMenu(this, [this] { showPage(startPage_); });
}

void MainWindow::setWorkspace(const QString& dir) {
  runs_->setWorkspace(dir);
  if (!dir.isEmpty()) {
    QSettings().setValue(QStringLiteral("workspace"), runs_->workspace());
    StartPage::remember(QStringLiteral("workspaces"), runs_->workspace());
  }
  QString queueError;
  if (!queue_->open(runs_->workspace(), &queueError)) QMessageBox::warning(this, tr("Run Queue"), queueError);
  setWindowTitle(dir.isEmpty() ? tr("Wan Studio") : tr("%1 — Wan Studio").arg(runs_->workspace()));
  // Show something useful at once: the newest run.
  if (runs_->rowCount() > 0 && runPage_->runDir().isEmpty()) {
    int newest = 0;
    for (int r = 1; r < runs_->rowCount(); ++r)
      if (runs_->summary(r).lastTime > runs_->summary(newest).lastTime) newest = r;
    openRun(runs_->runDir(newest));
  }
  updateStatusBar();
}

bool MainWindow::compareCheckpoints(const QString& checkpointA, const QString& checkpointB, const QString& input,
                                    QString* error) {
  const QString checkpoints[] = {checkpointA, checkpointB};
  for (int i = 0; i < 2; ++i) {
    const QFileInfo fi(checkpoints[i]);
    const QString name = fi.fileName();
    bool ok = false;
    const qint64 step = name.startsWith(QLatin1String("checkpoint-")) ? name.mid(11).toLongLong(&ok) : -1;
    if (!ok || !fi.isDir()) {
      *error = tr("%1: not a checkpoint folder (RUN/checkpoint-N)").arg(checkpoints[i]);
      return false;
    }
    const QString run = fi.absolutePath();
    runs_->addRun(run);
    runs_->refresh();
    if (!comparePage_->choose(i, run, step)) {
      *error = tr("%1: not an expert or upsampler run with checkpoint-%2").arg(run).arg(step);
      return false;
    }
  }
  if (comparePage_->job() == QLatin1String("upsampler")) comparePage_->videoEdit()->setText(input);
  else comparePage_->promptEdit()->setText(input);
  showPage(comparePage_);
  comparePage_->render();
  return true;
}

void MainWindow::openRun(const QString& runDir) {
  runs_->addRun(runDir);  // listed in the dock even when it lies outside the workspace
  runsDock_->selectRun(runDir);
  runPage_->showRun(runDir);  // also for runs outside the workspace
  showPage(runPage_);
}

void MainWindow::chooseWorkspace() {
  const QString dir = QFileDialog::getExistingDirectory(this, tr("Choose Workspace"), runs_->workspace());
  if (!dir.isEmpty()) setWorkspace(dir);
}

void MainWindow::openRunFolder() {
  const QString dir = QFileDialog::getExistingDirectory(this, tr("Open Run Folder"), runs_->workspace());
  if (dir.isEmpty()) return;
  if (!RunsModel::isRunDir(dir)) {
    QMessageBox::warning(this, tr("Open Run Folder"), tr("%1 holds neither events.jsonl nor run.yaml.").arg(dir));
    return;
  }
  openRun(dir);
}

// Each page in a scroll area: on a small screen (1280×720, a tiled window) a page scrolls
// instead of forcing the window wider or taller than the screen.
void MainWindow::addPage(QWidget* page, const QString& title) {
  auto* scroll = new QScrollArea(pages_);
  scroll->setWidget(page);
  scroll->setWidgetResizable(true);
  scroll->setFrameShape(QFrame::NoFrame);
  scroll->setAccessibleName(title);
  pageScrolls_.insert(page, scroll);
  pages_->addTab(scroll, title);
}

void MainWindow::showPage(QWidget* page) {
  if (QScrollArea* s = pageScrolls_.value(page)) pages_->setCurrentWidget(s);
}

void MainWindow::newRun() {
  // A run trains on the captions on disk: unsaved edits are saved (or dropped) first, on purpose.
  if (!datasetPage_->maybeKeepEdits()) return;
  NewRunDialog dialog(jobs_, runs_->workspace(), presetsDirectory(), {}, this);
  if (!runs_->workspace().isEmpty()) dialog.setQueue(queue_);
  // The dataset open on the Dataset page is the one the new run trains on.
  if (const QString meta = datasetPage_->model()->path(); !meta.isEmpty())
    dialog.setDataset(meta, datasetPage_->textEncoder()->embeddingsDir());
  if (dialog.exec() != QDialog::Accepted) return;
  if (!dialog.queuedId().isEmpty()) {
    queueDock_->show();
    queueDock_->selectId(dialog.queuedId());
    runs_->refresh();
    return;
  }
  if (!dialog.startedJob()) return;
  // A run made in another folder: that folder becomes the workspace, so the run is listed.
  if (dialog.folder() != runs_->workspace()) setWorkspace(dialog.folder());
  runs_->refresh();
  openRun(dialog.runDirectory());
}

void MainWindow::newRunLikeShown(bool fromCheckpoint) {
  const QString yaml = QDir(runPage_->runDir()).filePath(QStringLiteral("run.yaml"));
  if (runPage_->runDir().isEmpty() || !QFileInfo::exists(yaml)) {
    QMessageBox::information(this, tr("New Run Like This"),
                             runPage_->runDir().isEmpty()
                                 ? tr("Open a run first: its run.yaml is the starting point.")
                                 : tr("%1 has no run.yaml to start from.").arg(runPage_->runDir()));
    return;
  }
  NewRunDialog dialog(jobs_, runs_->workspace(), presetsDirectory(), {}, this);
  if (!runs_->workspace().isEmpty()) dialog.setQueue(queue_);
  QString error;
  if (!dialog.startFrom(yaml, &error)) {
    QMessageBox::warning(this, tr("New Run Like This"), error);
    return;
  }
  // A branch: a new run that goes on from one of this run's checkpoints, leaving this run as it is.
  if (fromCheckpoint) {
    const QString checkpoint = runPage_->chooseCheckpoint(tr("Branch from Checkpoint"));
    if (checkpoint.isEmpty()) return;
    dialog.setResumeFrom(checkpoint);
  }
  if (dialog.exec() != QDialog::Accepted) return;
  if (dialog.startedJob() && dialog.folder() != runs_->workspace()) setWorkspace(dialog.folder());
  runs_->refresh();
  if (dialog.startedJob()) openRun(dialog.runDirectory());
}

void MainWindow::startRunFromYaml() {
  if (!datasetPage_->maybeKeepEdits()) return;  // the run reads the captions on disk
  const QString yaml =
      QFileDialog::getOpenFileName(this, tr("Start Run"), runs_->workspace(), tr("Run configs (*.yaml *.yml)"));
  if (!yaml.isEmpty()) startRunFile(yaml);
}

WorkerJob* MainWindow::startRunFile(const QString& yaml) {
  QString error;
  WorkerJob* job = jobs_->startRun(yaml, {}, &error);
  if (!job) {
    QMessageBox::warning(this, tr("Start Run"), error);
    return nullptr;
  }
  statusBar()->showMessage(tr("Started %1").arg(job->arguments().join(QLatin1Char(' '))), 5000);
  if (!job->runDirectory().isEmpty()) openRun(job->runDirectory());
  // A file that parses but holds bad values fails in the worker before `started`: say so here,
  // where the person who chose it is looking, not only in a log.
  auto sawStarted = std::make_shared<bool>(false);
  connect(job, &WorkerJob::eventReceived, this, [sawStarted](const RunEvent& ev) {
    if (ev.type == QLatin1String("started")) *sawStarted = true;
  });
  connect(job, &WorkerJob::ended, this, [this, job, sawStarted, yaml] {
    if (*sawStarted) return;
    QString why = job->result().reason;
    const QStringList tail = job->stderrTail();
    for (const QString& line : tail)
      if (line.startsWith(QLatin1String("error:"))) why = line;
    auto* box = new QMessageBox(QMessageBox::Warning, tr("Start Run"),
                                tr("%1 did not start.").arg(QFileInfo(yaml).fileName()), QMessageBox::Ok, this);
    box->setInformativeText(
        why.isEmpty() ? tr("The worker ended before training (exit %1).").arg(job->result().exitCode) : why);
    box->setDetailedText(tail.join(QLatin1Char('\n')));
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->setObjectName(QStringLiteral("startRunFailed"));
    box->open();
    statusBar()->showMessage(tr("%1 did not start: %2").arg(QFileInfo(yaml).fileName(), why));
  });
  return job;
}

void MainWindow::updateStatusBar() {
  const int live = int(jobs_->liveJobs().size());
  QString text = runs_->workspace().isEmpty() ? tr("No workspace: File ▸ Choose Workspace…")
                                              : tr("%n run(s) in the workspace", nullptr, runs_->rowCount());
  if (live > 0) text += tr(", %n training here", nullptr, live);
  statusBar()->showMessage(text);
}

void MainWindow::quitStoppingWorkers(bool kill) {
  for (WorkerJob* job : jobs_->liveJobs()) kill ? job->kill() : job->cancel();
  closeWhenWorkersStopped();
}

void MainWindow::quitKeepingWorkers() {
  if (!datasetPage_->maybeKeepEdits()) return;  // asked before the workers are let go
  for (WorkerJob* job : jobs_->liveJobs()) job->detach();
  keepEditsAsked_ = true;
  close();
}

void MainWindow::closeWhenWorkersStopped() {
  if (!closing_) {
    closing_ = true;
    connect(jobs_, &JobManager::changed, this, [this] {
      if (jobs_->liveJobs().isEmpty()) close();
    });
    statusBar()->showMessage(tr("Waiting for the workers to stop…"));
  }
  if (jobs_->liveJobs().isEmpty()) close();
}

bool MainWindow::openDataset(const QString& metadataPath, bool askUser) {
  showPage(datasetPage_);
  QString error;
  if (datasetPage_->openDataset(metadataPath, &error)) return true;
  if (error.isEmpty()) return false;
  // From the command line there may be no one to click a dialog away (--screenshot, a script):
  // the page's status line and stderr say it instead.
  if (askUser) QMessageBox::warning(this, tr("Cannot open the dataset"), error);
  else std::fprintf(stderr, "error: %s\n", error.toUtf8().constData());
  return false;
}

void MainWindow::closeEvent(QCloseEvent* event) {
  const auto live = jobs_->liveJobs();
  if (!live.isEmpty()) {
    event->ignore();
    if (closing_) return;  // already waiting for them
    // Workers outlive the studio: keeping them training is the first choice, not a trap.
    QMessageBox box(QMessageBox::Question, tr("Quit Wan Studio"),
                    tr("%n run(s) are training.", nullptr, int(live.size())), QMessageBox::NoButton, this);
    box.setInformativeText(
        tr("Keep training: the workers go on without the studio; open it again to "
           "follow them, Save, Cancel or Kill them. Cancel runs: each stops after its "
           "current step and writes a checkpoint, then the studio quits."));
    QPushButton* keep = box.addButton(tr("Keep Training and Quit"), QMessageBox::AcceptRole);
    QPushButton* stop = box.addButton(tr("Cancel Runs and Quit"), QMessageBox::DestructiveRole);
    QPushButton* stay = box.addButton(tr("Don't Quit"), QMessageBox::RejectRole);
    box.setDefaultButton(keep);
    box.setEscapeButton(stay);
    box.exec();
    if (box.clickedButton() == keep) quitKeepingWorkers();
    else if (box.clickedButton() == stop) quitStoppingWorkers(false);
    return;
  }
  if (!keepEditsAsked_ && !datasetPage_->maybeKeepEdits()) {  // unsaved captions: Save, Discard or stay
    event->ignore();
    return;
  }
  QSettings settings;
  settings.setValue(QStringLiteral("mainWindow/geometry"), saveGeometry());
  settings.setValue(QStringLiteral("mainWindow/state"), saveState());
  event->accept();
}

}  // namespace ws
