// SPDX-License-Identifier: Apache-2.0
#include "pages/run_page.h"
#include "runfolder/run_lock.h"

#include <signal.h>

#include <QDateTime>
#include <QDesktopServices>
#include <QDir>
#include <QFileInfo>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QInputDialog>
#include <QLabel>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSettings>
#include <QSplitter>
#include <QStackedWidget>
#include <QStyle>
#include <QTabWidget>
#include <QUrl>
#include <QVBoxLayout>

#include <climits>
#include <algorithm>
#include <cmath>

#include "runfolder/run_lock.h"
#include "jobs/events_file_tail.h"
#include "jobs/job_manager.h"
#include "jobs/worker_job.h"
#include "loss_chart.h"
#include "runfolder/event_format.h"
#include "runfolder/log_tail.h"
#include "runfolder/run_checkpoints.h"
#include "contract/best_checkpoint.h"
#include "config/run_config.h"
#include "runfolder/run_events.h"
#include "pages/config_view.h"
#include "pages/event_log_view.h"
#include "pages/training_charts.h"
#include "pages/expert_validation_view.h"
#include "pages/validation_view.h"
#include "runfolder/run_paths.h"

namespace ws {
namespace {

constexpr int kLastLines = 8;

bool hasEnded(RunState s) {
  return s == RunState::Completed || s == RunState::Cancelled || s == RunState::Failed || s == RunState::Interrupted;
}

}  // namespace

RunPage::RunPage(JobManager* jobs, QWidget* parent) : QWidget(parent), jobs_(jobs) {
  events_ = new RunEvents(this);
  tail_ = new EventsFileTail(this);
  connect(tail_, &EventsFileTail::reset, events_, &RunEvents::clear);
  connect(tail_, &EventsFileTail::dataAppended, events_, [this](const QByteArray& b) { events_->appendData(b); });
  connect(events_, &RunEvents::summaryChanged, this, &RunPage::refreshStatus);
  connect(jobs_, &JobManager::changed, this, [this] {
    attachJob();
    refreshStatus();
  });
  // Time alone changes what is shown: heartbeat age, a run elsewhere going quiet.
  clock_.setInterval(1000);
  connect(&clock_, &QTimer::timeout, this, &RunPage::refreshStatus);

  auto* empty =
      new QLabel(tr("Choose a run in the Runs list, or pick a workspace with File ▸ Choose Workspace…"), this);
  empty->setAlignment(Qt::AlignCenter);
  empty->setWordWrap(true);

  auto* content = new QWidget(this);
  title_ = new QLabel(content);
  title_->setObjectName(QStringLiteral("runTitle"));
  title_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  state_ = new QLabel(content);
  state_->setObjectName(QStringLiteral("runState"));
  state_->setWordWrap(true);
  state_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  progress_ = new QProgressBar(content);
  progress_->setTextVisible(true);
  progress_->setMinimumWidth(220);
  progress_->setMaximumWidth(320);
  stats_ = new QLabel(content);
  stats_->setObjectName(QStringLiteral("runStats"));
  stats_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  tensorboard_ = new QLabel(content);
  tensorboard_->setObjectName(QStringLiteral("hint"));
  tensorboard_->setTextInteractionFlags(Qt::TextSelectableByMouse);

  auto* openFolderButton =
      new QPushButton(style()->standardIcon(QStyle::SP_DirOpenIcon), tr("Open Run Folder"), content);
  connect(openFolderButton, &QPushButton::clicked, this, &RunPage::openFolder);
  cancel_ = new QPushButton(tr("Cancel Run"), content);
  cancel_->setToolTip(tr("Stop after the current step and write a checkpoint"));
  connect(cancel_, &QPushButton::clicked, this, &RunPage::cancelRun);
  save_ = new QPushButton(style()->standardIcon(QStyle::SP_DialogSaveButton), tr("Save Now"), content);
  save_->setToolTip(tr("Write a checkpoint after the current step and keep training"));
  connect(save_, &QPushButton::clicked, this, &RunPage::saveNow);
  kill_ = new QPushButton(tr("Kill"), content);
  kill_->setToolTip(tr("Stop the worker now; the last complete checkpoint stays valid"));
  connect(kill_, &QPushButton::clicked, this, &RunPage::killRun);
  resume_ = new QPushButton(style()->standardIcon(QStyle::SP_MediaPlay), tr("Resume"), content);
  connect(resume_, &QPushButton::clicked, this, &RunPage::resumeRun);

  auto* titleRow = new QHBoxLayout;
  titleRow->addWidget(title_);
  titleRow->addStretch(1);
  titleRow->addWidget(openFolderButton);
  titleRow->addWidget(resume_);
  titleRow->addWidget(save_);
  titleRow->addWidget(cancel_);
  titleRow->addWidget(kill_);
  auto* stateRow = new QHBoxLayout;
  stateRow->addWidget(state_, 1);
  stateRow->addWidget(progress_);

  // How a failed run ended, in the worker's own words.
  lastLinesTitle_ = new QLabel(tr("Last lines of the worker's log:"), content);
  lastLinesTitle_->setObjectName(QStringLiteral("hint"));
  lastLines_ = new QPlainTextEdit(content);
  lastLines_->setAccessibleName(tr("Last lines of the worker's output"));
  lastLines_->setObjectName(QStringLiteral("lastLines"));
  lastLines_->setReadOnly(true);
  lastLines_->setLineWrapMode(QPlainTextEdit::NoWrap);
  lastLines_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  lastLines_->setFixedHeight(QFontMetrics(lastLines_->font()).lineSpacing() * (kLastLines + 1) + 8);
  lastLinesTitle_->hide();
  lastLines_->hide();

  charts_ = new TrainingCharts(events_, content);
  tabs_ = new QTabWidget(content);
  log_ = new EventLogView(events_, tabs_);
  config_ = new ConfigView(tabs_);
  workerOutput_ = new QPlainTextEdit(tabs_);
  workerOutput_->setAccessibleName(tr("Worker output"));
  workerOutput_->setReadOnly(true);
  workerOutput_->setMaximumBlockCount(5000);
  workerOutput_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  workerOutput_->setPlaceholderText(
      tr("The worker's own log (stderr) appears here while this studio runs it. "
         "It is also in logs/engine.log of the run."));
  tabs_->addTab(log_, tr("Events"));
  // One Validation tab: the upsampler's comparisons or the experts' prompt × step grid.
  validationStack_ = new QStackedWidget(tabs_);
  validation_ = new ValidationView(events_, validationStack_);
  expertValidation_ = new ExpertValidationView(events_, validationStack_);
  validationStack_->addWidget(validation_);
  validationStack_->addWidget(expertValidation_);
  connect(events_, &RunEvents::summaryChanged, this, [this] {
    validationStack_->setCurrentWidget(
        events_->summary().job == QLatin1String("experts") ? static_cast<QWidget*>(expertValidation_) : validation_);
  });
  tabs_->addTab(validationStack_, tr("Validation"));
  tabs_->addTab(config_, tr("Config"));
  tabs_->addTab(workerOutput_, tr("Worker Output"));

  split_ = new QSplitter(Qt::Vertical, content);
  split_->setObjectName(QStringLiteral("runSplitter"));
  split_->addWidget(charts_);
  split_->addWidget(tabs_);
  split_->setStretchFactor(0, 3);
  split_->setStretchFactor(1, 2);
  split_->restoreState(QSettings().value(QStringLiteral("runPage/splitter")).toByteArray());
  connect(split_, &QSplitter::splitterMoved, this,
          [this] { QSettings().setValue(QStringLiteral("runPage/splitter"), split_->saveState()); });

  auto* layout = new QVBoxLayout(content);
  layout->addLayout(titleRow);
  layout->addLayout(stateRow);
  layout->addWidget(lastLinesTitle_);
  layout->addWidget(lastLines_);
  layout->addWidget(stats_);
  layout->addWidget(tensorboard_);
  layout->addWidget(split_, 1);

  stack_ = new QStackedWidget(this);
  stack_->addWidget(empty);
  stack_->addWidget(content);
  auto* outer = new QVBoxLayout(this);
  outer->setContentsMargins(0, 0, 0, 0);
  outer->addWidget(stack_);
}

LossChart* RunPage::lossChart() const { return charts_->lossChart(); }

void RunPage::showRun(const QString& runDir) {
  const QString dir = JobManager::normalizedPath(runDir);
  if (dir == runDir_ && !dir.isEmpty()) return;
  runDir_ = dir;
  job_.clear();
  workerOutput_->clear();
  events_->clear();
  status_ = RunStatus();
  validation_->setRunDir(runDir_);
  expertValidation_->setRunDir(runDir_);
  validationStack_->setCurrentWidget(validation_);
  if (runDir_.isEmpty()) {
    tail_->setFile({});
    clock_.stop();
    stack_->setCurrentIndex(0);
    return;
  }
  stack_->setCurrentIndex(1);
  title_->setText(QFileInfo(runDir_).fileName());
  title_->setToolTip(runDir_);
  // Where the worker wrote its scalars: logging_dir of the run's resolved config (default logs).
  QString logDir = QString::fromUtf8(contract::kLogsDir);
  if (auto cfg = RunConfig::load(runFile(runDir_, contract::kRunYaml), nullptr))
    for (const auto& [key, value] : cfg->options)
      if (key == QLatin1String("logging_dir") && !value.trimmed().isEmpty()) logDir = value.trimmed();
  tensorboard_->setText(
      tr("TensorBoard: tensorboard --logdir \"%1\"").arg(QDir::cleanPath(QDir(runDir_).filePath(logDir))));
  tail_->setFile(runFile(runDir_, contract::kEventsFile));
  attachJob();
  refreshStatus();
  // Nobody writes a finished run any more: its unterminated last line is a torn write.
  if (status_.state != RunState::Running) events_->finishData();
  refreshLastLines();
  clock_.start();
}

bool RunPage::showTab(const QString& name) {
  // The lower tabs (events, validation, ...) and the chart tabs (loss, learning rate, ...).
  for (QTabWidget* tabs : {tabs_, charts_->tabs()}) {
    for (int i = 0; i < tabs->count(); ++i) {
      if (tabs->tabText(i).remove(QLatin1Char('&')).compare(name, Qt::CaseInsensitive) == 0) {
        tabs->setCurrentIndex(i);
        return true;
      }
    }
  }
  return false;
}

void RunPage::attachJob() {
  WorkerJob* live = runDir_.isEmpty() ? nullptr : jobs_->lastJobForRun(runDir_);
  if (live == job_) return;
  if (job_) disconnect(job_, nullptr, this, nullptr);
  job_ = live;
  workerOutput_->clear();
  if (!job_) return;
  workerOutput_->setPlainText(job_->stderrTail().join(QLatin1Char('\n')));
  connect(job_, &WorkerJob::stderrLine, workerOutput_, &QPlainTextEdit::appendPlainText);
  connect(job_, &WorkerJob::stdoutText, workerOutput_, &QPlainTextEdit::appendPlainText);
  // Events reach the file before the pipe is read most of the time; poll to show them now.
  connect(job_, &WorkerJob::eventReceived, tail_, &EventsFileTail::poll);
}

void RunPage::refreshStatus() {
  if (runDir_.isEmpty()) return;
  const RunSummary& s = events_->summary();
  const RunStatus before = status_;
  status_ = jobs_->statusFor(runDir_, s);
  const QString name = RunStatus::stateName(status_.state);
  state_->setText(status_.label());
  if (state_->property("state").toString() != name) {
    state_->setProperty("state", name);
    state_->style()->unpolish(state_);
    state_->style()->polish(state_);
  }
  refreshButtons();
  if (!(before == status_)) refreshLastLines();

  if (s.maxTrainSteps > 0) {
    progress_->setRange(0, int(std::min<qint64>(s.maxTrainSteps, INT_MAX)));
    progress_->setValue(int(std::min(s.lastStep, s.maxTrainSteps)));
    progress_->setFormat(QStringLiteral("%v / %m steps"));
  } else {
    progress_->setRange(0, 1);
    progress_->setValue(0);
    progress_->setFormat(tr("no steps yet"));
  }
  stats_->setText(statsText());
  config_->showConfig(runDir_, s.config);
}

QString RunPage::statsText() const {
  const RunSummary& s = events_->summary();
  const bool running = status_.state == RunState::Running;
  QStringList parts;
  if (!s.job.isEmpty()) parts << tr("job %1").arg(s.job);
  if (s.worldSize > 1) parts << tr("%1 processes").arg(s.worldSize);
  if (s.segments > 1) parts << tr("resumed %n time(s)", nullptr, s.segments - 1);
  if (std::isfinite(s.lastLoss)) parts << tr("loss %1").arg(QString::number(s.lastLoss, 'g', 5));
  const auto& steps = events_->steps();
  if (!steps.isEmpty()) {
    const auto& last = steps.last();
    if (std::isfinite(last.samplesPerS)) parts << tr("%1 clips/s").arg(QString::number(last.samplesPerS, 'g', 3));
    if (running && std::isfinite(last.etaS)) parts << tr("eta %1").arg(formatDuration(last.etaS));
  }
  const RunEvent& hb = events_->lastHeartbeat();
  if (hb.isValid() && running) {
    const double age = QDateTime::currentMSecsSinceEpoch() / 1000.0 - hb.time;
    QString h =
        tr("heartbeat %1 ago, RSS %2")
            .arg(formatDuration(std::max(0.0, age)), formatBytes(hb.number(QLatin1StringView("rss_bytes"), -1)));
    if (hb.fields.contains(QLatin1StringView("gpu_mem_bytes")))
      h += tr(", GPU %1").arg(formatBytes(hb.number(QLatin1StringView("gpu_mem_bytes"), -1)));
    parts << h;
  }
  // Peaks tell whether the next, bigger run will fit.
  if (s.peakRssBytes > 0) {
    QString peak = tr("peak RSS %1").arg(formatBytes(s.peakRssBytes));
    if (s.peakGpuMemBytes > 0) peak += tr(", peak GPU %1").arg(formatBytes(s.peakGpuMemBytes));
    parts << peak;
  }
  // keep_best's pick, from the run folder's best.json (also when the run was made elsewhere).
  if (const auto best = contract::read_best_checkpoint(runDir_.toStdString()))
    parts << tr("best %1 (%2 %3)")
                 .arg(QString::fromStdString(best->path), QString::fromStdString(best->metric),
                      QString::number(best->value, 'g', 5));
  if (!s.hasEvents()) parts << tr("no events yet");
  return parts.join(QStringLiteral("  ·  "));
}

bool RunPage::canResume(QString* why) const {
  auto no = [why](const QString& reason) {
    if (why) *why = reason;
    return false;
  };
  if (runDir_.isEmpty()) return no(tr("No run is shown."));
  if (job_ && job_->isRunning()) return no(tr("The run is training."));
  if (status_.state == RunState::Running) return no(tr("The run is training elsewhere."));
  if (!hasEnded(status_.state)) return no(tr("The run has not started yet."));
  if (!QFileInfo::exists(runFile(runDir_, contract::kRunYaml))) return no(tr("The run folder has no run.yaml."));
  if (latestCheckpointStep(runDir_) < 0) return no(tr("The run has no checkpoint to resume from."));
  return true;
}

void RunPage::refreshButtons() {
  const bool live = job_ && job_->isRunning();
  // A run training elsewhere on this machine is controlled through its worker's PID (the holder
  // of the run's .lock): SIGUSR1 saves, SIGTERM cancels, SIGKILL kills.
  const bool elsewhere = !live && status_.state == RunState::Running && status_.elsewhere;
  const qint64 pid = elsewhere ? runLockHolder(runDir_) : 0;
  const QString unreachable =
      tr("No worker on this machine holds the run's lock: it trains on another machine, or its worker is gone");
  for (QPushButton* b : {cancel_, save_, kill_}) {
    b->setVisible(live || elsewhere);
    b->setToolTip(elsewhere && pid == 0 ? unreachable : QString());
  }
  save_->setEnabled((live && !job_->cancelRequested()) || pid > 0);
  kill_->setEnabled(live || pid > 0);
  cancel_->setEnabled((live && !job_->cancelRequested()) || pid > 0);
  if (pid > 0)
    for (QPushButton* b : {cancel_, save_, kill_})
      b->setToolTip(tr("The run trains without this studio (worker PID %1): the worker is sent a signal").arg(pid));
  if (!elsewhere) kill_->setToolTip(tr("Stop the worker now; the last complete checkpoint stays valid"));
  resume_->setVisible(!live && hasEnded(status_.state));
  if (!resume_->isVisibleTo(this)) return;
  QString why;
  const bool can = canResume(&why);
  resume_->setEnabled(can);
  resume_->setToolTip(can ? tr("Continue training from checkpoint-%1 (the run's run.yaml with "
                               "--resume_from_checkpoint latest)")
                                .arg(latestCheckpointStep(runDir_))
                          : why);
}

void RunPage::refreshLastLines() {
  const bool show = status_.state == RunState::Failed || status_.state == RunState::Interrupted;
  lastLinesTitle_->setVisible(show);
  lastLines_->setVisible(show);
  if (!show) return;
  // The supervisor's own record first (it holds the watchdog's note); else the run's log file.
  QStringList lines;
  if (job_ && job_->phase() == WorkerJob::Phase::Ended) {
    lines = job_->stderrTail();
    lines = lines.mid(std::max<qsizetype>(0, lines.size() - kLastLines));
  }
  if (lines.isEmpty()) lines = lastLines(runFile(runDir_, contract::kEngineLog), kLastLines);
  if (lines.isEmpty()) lines << tr("(the worker left no log lines)");
  lastLines_->setPlainText(lines.join(QLatin1Char('\n')));
}

// Signals the worker of a run this studio did not start; false when none holds its lock here.
bool RunPage::signalElsewhere(int signal) {
  if (job_ && job_->isRunning()) return false;
  const qint64 pid = runLockHolder(runDir_);  // read again: the holder at this instant
  if (pid <= 0 || pid == QCoreApplication::applicationPid()) return false;
  return ::kill(pid_t(pid), signal) == 0;
}

void RunPage::cancelRun() {
  if (job_ && job_->isRunning()) job_->cancel();
  else signalElsewhere(SIGTERM);
  refreshStatus();
}

void RunPage::saveNow() {
  // The `checkpoint` event that follows shows in the event log.
  if (job_ && job_->isRunning()) job_->requestSave();
  else signalElsewhere(SIGUSR1);
}

void RunPage::killRun() {
  if (confirmKill_ &&
      QMessageBox::question(this, tr("Kill Worker"),
                            tr("Stop the worker now, without finishing its step? The last complete checkpoint stays "
                               "valid; what it trained since is lost. (Cancel Run finishes the step and saves it.)"),
                            QMessageBox::Yes | QMessageBox::No, QMessageBox::No) != QMessageBox::Yes)
    return;
  if (job_ && job_->isRunning()) job_->kill();
  else signalElsewhere(SIGKILL);
}

bool RunPage::resume(qint64 maxTrainSteps, QString* error, const QString& checkpoint) {
  QString why;
  if (!canResume(&why)) {
    if (error) *error = why;
    return false;
  }
  QStringList extra;
  if (maxTrainSteps > 0) extra << QStringLiteral("--max_train_steps") << QString::number(maxTrainSteps);
  if (!jobs_->resumeRun(runDir_, extra, error, checkpoint)) return false;
  attachJob();
  refreshStatus();
  return true;
}

void RunPage::resumeRun() {
  qint64 total = 0;
  const RunSummary& s = events_->summary();
  // A run that did all its steps would stop again at once: ask how far to go on.
  if (status_.state == RunState::Completed && s.maxTrainSteps > 0 && s.lastStep >= s.maxTrainSteps) {
    bool ok = false;
    const int cap = int(std::min<qint64>(INT_MAX, s.maxTrainSteps * 10));
    total = QInputDialog::getInt(
        this, tr("Resume Run"), tr("The run has done all its %1 steps. Train on to step:").arg(s.maxTrainSteps),
        int(std::min<qint64>(cap, s.maxTrainSteps * 2)), int(s.maxTrainSteps + 1), cap, 1, &ok);
    if (!ok) return;
  }
  QString error;
  if (!resume(total, &error)) QMessageBox::warning(this, tr("Resume Run"), error);
}

QString RunPage::chooseCheckpoint(const QString& title) {
  QList<qint64> steps = checkpointSteps(runDir_);
  if (steps.isEmpty()) {
    QMessageBox::information(this, title, tr("The run has no checkpoint."));
    return {};
  }
  std::reverse(steps.begin(), steps.end());
  QStringList items;
  for (qint64 s : steps) items << QStringLiteral("checkpoint-%1").arg(s);
  bool ok = false;
  const QString item = QInputDialog::getItem(this, title, tr("Checkpoint:"), items, 0, false, &ok);
  return ok ? QDir(runDir_).filePath(item) : QString();
}

void RunPage::resumeFromChosen() {
  QString why;
  if (!canResume(&why)) {
    QMessageBox::information(this, tr("Resume from Checkpoint"), why);
    return;
  }
  const QString checkpoint = chooseCheckpoint(tr("Resume from Checkpoint"));
  QString error;
  if (!checkpoint.isEmpty() && !resume(0, &error, checkpoint))
    QMessageBox::warning(this, tr("Resume from Checkpoint"), error);
}

void RunPage::openFolder() {
  if (runDir_.isEmpty()) return;
  // Never silent: without a file manager the folder's path is the answer.
  if (!QDesktopServices::openUrl(QUrl::fromLocalFile(runDir_)))
    QMessageBox::information(this, tr("Open Run Folder"),
                             tr("No file manager opened it. The run folder is:\n%1").arg(runDir_));
}

}  // namespace ws
