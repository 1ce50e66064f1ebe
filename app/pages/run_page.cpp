#include "pages/run_page.h"

#include <QDateTime>
#include <QDesktopServices>
#include <QDir>
#include <QFileInfo>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QLabel>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSplitter>
#include <QStackedWidget>
#include <QStyle>
#include <QTabWidget>
#include <QUrl>
#include <QVBoxLayout>

#include <climits>
#include <cmath>

#include "jobs/events_file_tail.h"
#include "jobs/job_manager.h"
#include "jobs/worker_job.h"
#include "loss_chart.h"
#include "models/event_format.h"
#include "models/run_events.h"
#include "pages/config_view.h"
#include "pages/event_log_view.h"
#include "pages/validation_view.h"

namespace ws {

RunPage::RunPage(JobManager* jobs, QWidget* parent) : QWidget(parent), jobs_(jobs) {
  events_ = new RunEvents(this);
  tail_ = new EventsFileTail(this);
  connect(tail_, &EventsFileTail::reset, events_, &RunEvents::clear);
  connect(tail_, &EventsFileTail::dataAppended, events_, [this](const QByteArray& b) { events_->appendData(b); });
  connect(events_, &RunEvents::stepsAppended, this, &RunPage::addSteps);
  connect(events_, &RunEvents::pointsReset, this, &RunPage::rebuildChart);
  connect(events_, &RunEvents::cleared, this, &RunPage::rebuildChart);
  connect(events_, &RunEvents::summaryChanged, this, &RunPage::refreshStatus);
  connect(jobs_, &JobManager::changed, this, [this] {
    attachJob();
    refreshStatus();
  });
  // Time alone changes what is shown: heartbeat age, a run elsewhere going quiet.
  clock_.setInterval(1000);
  connect(&clock_, &QTimer::timeout, this, &RunPage::refreshStatus);

  auto* empty = new QLabel(tr("Choose a run in the Runs list, or pick a workspace with File ▸ Choose Workspace…"), this);
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
  stats_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  tensorboard_ = new QLabel(content);
  tensorboard_->setObjectName(QStringLiteral("hint"));
  tensorboard_->setTextInteractionFlags(Qt::TextSelectableByMouse);

  auto* openFolderButton = new QPushButton(style()->standardIcon(QStyle::SP_DirOpenIcon), tr("Open Run Folder"), content);
  connect(openFolderButton, &QPushButton::clicked, this, &RunPage::openFolder);
  cancel_ = new QPushButton(tr("Cancel Run"), content);
  cancel_->setToolTip(tr("Stop after the current step and write a checkpoint"));
  connect(cancel_, &QPushButton::clicked, this, &RunPage::cancelRun);
  kill_ = new QPushButton(tr("Kill"), content);
  kill_->setToolTip(tr("Stop the worker now; the last complete checkpoint stays valid"));
  connect(kill_, &QPushButton::clicked, this, &RunPage::killRun);

  auto* titleRow = new QHBoxLayout;
  titleRow->addWidget(title_);
  titleRow->addStretch(1);
  titleRow->addWidget(openFolderButton);
  titleRow->addWidget(cancel_);
  titleRow->addWidget(kill_);
  auto* stateRow = new QHBoxLayout;
  stateRow->addWidget(state_, 1);
  stateRow->addWidget(progress_);

  chart_ = new LossChart(content);
  tabs_ = new QTabWidget(content);
  log_ = new EventLogView(events_, tabs_);
  config_ = new ConfigView(tabs_);
  workerOutput_ = new QPlainTextEdit(tabs_);
  workerOutput_->setReadOnly(true);
  workerOutput_->setMaximumBlockCount(5000);
  workerOutput_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  workerOutput_->setPlaceholderText(tr("The worker's own log (stderr) appears here while this studio runs it. "
                                       "It is also in logs/engine.log of the run."));
  tabs_->addTab(log_, tr("Events"));
  validation_ = new ValidationView(events_, tabs_);
  tabs_->addTab(validation_, tr("Validation"));
  tabs_->addTab(config_, tr("Config"));
  tabs_->addTab(workerOutput_, tr("Worker Output"));

  auto* split = new QSplitter(Qt::Vertical, content);
  split->addWidget(chart_);
  split->addWidget(tabs_);
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 2);

  auto* layout = new QVBoxLayout(content);
  layout->addLayout(titleRow);
  layout->addLayout(stateRow);
  layout->addWidget(stats_);
  layout->addWidget(tensorboard_);
  layout->addWidget(split, 1);

  stack_ = new QStackedWidget(this);
  stack_->addWidget(empty);
  stack_->addWidget(content);
  auto* outer = new QVBoxLayout(this);
  outer->setContentsMargins(0, 0, 0, 0);
  outer->addWidget(stack_);
}

void RunPage::showRun(const QString& runDir) {
  const QString dir = JobManager::normalizedPath(runDir);
  if (dir == runDir_ && !dir.isEmpty()) return;
  runDir_ = dir;
  job_.clear();
  workerOutput_->clear();
  chart_->clear();
  events_->clear();
  validation_->setRunDir(runDir_);
  if (runDir_.isEmpty()) {
    tail_->setFile({});
    clock_.stop();
    stack_->setCurrentIndex(0);
    return;
  }
  stack_->setCurrentIndex(1);
  title_->setText(QFileInfo(runDir_).fileName());
  title_->setToolTip(runDir_);
  tensorboard_->setText(tr("TensorBoard: tensorboard --logdir \"%1\"").arg(QDir(runDir_).filePath(QStringLiteral("logs"))));
  tail_->setFile(QDir(runDir_).filePath(QStringLiteral("events.jsonl")));
  attachJob();
  refreshStatus();
  // Nobody writes a finished run any more: its unterminated last line is a torn write.
  if (status_.state != RunState::Running) events_->finishData();
  clock_.start();
}

bool RunPage::showTab(const QString& name) {
  for (int i = 0; i < tabs_->count(); ++i) {
    if (tabs_->tabText(i).remove(QLatin1Char('&')).compare(name, Qt::CaseInsensitive) == 0) {
      tabs_->setCurrentIndex(i);
      return true;
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
  status_ = jobs_->statusFor(runDir_, s);
  const QString name = RunStatus::stateName(status_.state);
  state_->setText(status_.label());
  if (state_->property("state").toString() != name) {
    state_->setProperty("state", name);
    state_->style()->unpolish(state_);
    state_->style()->polish(state_);
  }
  const bool live = job_ && job_->isRunning();
  cancel_->setVisible(live);
  kill_->setVisible(live);
  cancel_->setEnabled(live && !job_->cancelRequested());

  if (s.maxTrainSteps > 0) {
    progress_->setRange(0, int(std::min<qint64>(s.maxTrainSteps, INT_MAX)));
    progress_->setValue(int(std::min(s.lastStep, s.maxTrainSteps)));
    progress_->setFormat(QStringLiteral("%v / %m steps"));
  } else {
    progress_->setRange(0, 1);
    progress_->setValue(0);
    progress_->setFormat(tr("no steps yet"));
  }

  QStringList parts;
  if (!s.job.isEmpty()) parts << tr("job %1").arg(s.job);
  if (s.worldSize > 1) parts << tr("%1 processes").arg(s.worldSize);
  if (s.segments > 1) parts << tr("resumed %n time(s)", nullptr, s.segments - 1);
  if (std::isfinite(s.lastLoss)) parts << tr("loss %1").arg(QString::number(s.lastLoss, 'g', 5));
  const auto& steps = events_->steps();
  if (!steps.isEmpty() && status_.state == RunState::Running) {
    const auto& last = steps.last();
    if (std::isfinite(last.samplesPerS)) parts << tr("%1 clips/s").arg(QString::number(last.samplesPerS, 'g', 3));
    if (std::isfinite(last.etaS)) parts << tr("eta %1").arg(formatDuration(last.etaS));
  }
  const RunEvent& hb = events_->lastHeartbeat();
  if (hb.isValid() && status_.state == RunState::Running) {
    const double age = QDateTime::currentMSecsSinceEpoch() / 1000.0 - hb.time;
    QString h = tr("heartbeat %1 ago, RSS %2").arg(formatDuration(std::max(0.0, age)),
                                                   formatBytes(hb.number(QLatin1StringView("rss_bytes"), -1)));
    if (hb.fields.contains(QLatin1StringView("gpu_mem_bytes")))
      h += tr(", GPU %1").arg(formatBytes(hb.number(QLatin1StringView("gpu_mem_bytes"), -1)));
    parts << h;
  }
  if (!s.hasEvents()) parts << tr("no events yet");
  stats_->setText(parts.join(QStringLiteral("  ·  ")));
  config_->showConfig(runDir_, s.config);
}

void RunPage::addSteps(int first) {
  // Batch the points per series: a long run arrives as one 100k-point chunk.
  const auto& steps = events_->steps();
  QHash<QString, QPair<QVector<double>, QVector<double>>> batch;
  for (int i = first; i < steps.size(); ++i) {
    const auto& p = steps[i];
    if (p.dropped) continue;
    auto& b = batch[p.expert.isEmpty() ? QStringLiteral("loss") : p.expert];
    b.first << double(p.step);
    b.second << p.loss;
  }
  for (auto it = batch.cbegin(); it != batch.cend(); ++it) chart_->addPoints(it.key(), it->first, it->second);
}

void RunPage::rebuildChart() {
  chart_->clear();
  addSteps(0);
}

void RunPage::cancelRun() {
  if (job_ && job_->isRunning()) job_->cancel();
  refreshStatus();
}

void RunPage::killRun() {
  if (job_ && job_->isRunning()) job_->kill();
}

void RunPage::openFolder() {
  if (!runDir_.isEmpty()) QDesktopServices::openUrl(QUrl::fromLocalFile(runDir_));
}

}  // namespace ws
