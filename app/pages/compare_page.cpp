// SPDX-License-Identifier: Apache-2.0
#include "pages/compare_page.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QSplitter>
#include <QStackedWidget>
#include <QStandardPaths>
#include <QTabWidget>
#include <QToolButton>
#include <QVBoxLayout>
#include <QtConcurrent>

#include <cmath>
#include <tuple>
#include <qcustomplot.h>

#include "item_models/runs_model.h"
#include "jobs/job_manager.h"
#include "jobs/render_job.h"
#include "pages/loss_overlay.h"
#include "pages/start_image_strip.h"
#include "theme.h"
#include "video_compare_view.h"
#include "video_export.h"

namespace ws {
namespace {

QString db(double v) { return std::isfinite(v) ? QStringLiteral("%1 dB").arg(v, 0, 'f', 2) : QStringLiteral("–"); }
const char* kSideNames[] = {"A", "B"};

}  // namespace

ComparePage::ComparePage(RunsModel* runs, QWidget* parent) : QWidget(parent), runs_(runs) {
  setCacheDir(
      QDir(QStandardPaths::writableLocation(QStandardPaths::CacheLocation)).filePath(QStringLiteral("compare")));

  auto* sidesRow = new QHBoxLayout;
  for (int i = 0; i < 2; ++i) {
    Side& s = sides_[size_t(i)];
    auto* box = new QGroupBox(tr("%1").arg(QLatin1String(kSideNames[i])), this);
    auto* form = new QFormLayout(box);
    s.run = new QComboBox(box);
    s.run->setAccessibleName(tr("%1 run").arg(QLatin1String(kSideNames[i])));
    s.run->setObjectName(QStringLiteral("compareRun%1").arg(QLatin1String(kSideNames[i])));
    s.run->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    s.run->setMinimumContentsLength(24);
    s.checkpoint = new QComboBox(box);
    s.checkpoint->setAccessibleName(tr("%1 checkpoint").arg(QLatin1String(kSideNames[i])));
    s.checkpoint->setObjectName(QStringLiteral("compareCheckpoint%1").arg(QLatin1String(kSideNames[i])));
    s.progress = new QProgressBar(box);
    s.progress->setRange(0, 1000);
    s.progress->setValue(0);
    s.progress->setTextVisible(false);
    s.state = new QLabel(box);
    s.state->setObjectName(QStringLiteral("hint"));
    form->addRow(tr("Run"), s.run);
    form->addRow(tr("Checkpoint"), s.checkpoint);
    form->addRow(s.progress);
    form->addRow(s.state);
    sidesRow->addWidget(box, 1);
    connect(s.run, &QComboBox::currentIndexChanged, this, [this, i] {
      fillCheckpoints(i);
      updateInputs();
    });
  }

  // The input: a prompt for experts, a video for upsamplers.
  inputs_ = new QStackedWidget(this);
  prompt_ = new QLineEdit(this);
  prompt_->setAccessibleName(tr("Prompt"));
  prompt_->setObjectName(QStringLiteral("comparePrompt"));
  prompt_->setPlaceholderText(tr("the prompt both checkpoints render"));
  video_ = new QLineEdit(this);
  video_->setAccessibleName(tr("Video"));
  video_->setObjectName(QStringLiteral("compareVideo"));
  video_->setPlaceholderText(tr("the clip both checkpoints upsample"));
  auto* browse = new QToolButton(this);
  browse->setText(tr("…"));
  connect(browse, &QToolButton::clicked, this, [this] {
    const QString f = QFileDialog::getOpenFileName(this, tr("Video to Upsample"), video_->text(),
                                                   tr("Videos (*.mp4 *.mkv *.mov *.avi *.webm);;All files (*)"));
    if (!f.isEmpty()) video_->setText(f);
  });
  ema_ = new QCheckBox(tr("EMA weights"), this);
  auto* promptRow = new QWidget(this);
  auto* pl = new QHBoxLayout(promptRow);
  pl->setContentsMargins(0, 0, 0, 0);
  pl->addWidget(new QLabel(tr("Prompt"), promptRow));
  pl->addWidget(prompt_, 1);
  auto* videoRow = new QWidget(this);
  auto* vl = new QHBoxLayout(videoRow);
  vl->setContentsMargins(0, 0, 0, 0);
  vl->addWidget(new QLabel(tr("Video"), videoRow));
  vl->addWidget(video_, 1);
  vl->addWidget(browse);
  vl->addWidget(ema_);
  inputs_->addWidget(promptRow);
  inputs_->addWidget(videoRow);
  inputs_->setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Maximum);

  auto spin = [this](int lo, int hi, int value, int step, const char* name) {
    auto* b = new QSpinBox(this);
    b->setRange(lo, hi);
    b->setSingleStep(step);
    b->setValue(value);
    b->setObjectName(QLatin1String(name));
    b->setAccessibleName(QString::fromLatin1(name).mid(7));  // "compareWidth" -> "Width"
    return b;
  };
  width_ = spin(16, 4096, 256, 16, "compareWidth");
  height_ = spin(16, 4096, 256, 16, "compareHeight");
  frames_ = spin(1, 1021, 17, 4, "compareFrames");
  steps_ = spin(1, 1000, 8, 1, "compareSteps");
  seed_ = spin(0, 0x7fffffff, 42, 1, "compareSeed");
  widthLabel_ = new QLabel(tr("Width"), this);
  stepsLabel_ = new QLabel(tr("Steps"), this);
  seedLabel_ = new QLabel(tr("Seed"), this);
  render_ = new QPushButton(tr("Render"), this);
  render_->setDefault(true);
  cancel_ = new QPushButton(tr("Cancel"), this);
  cancel_->setEnabled(false);
  export_ = new QPushButton(tr("Export Side by Side…"), this);
  export_->setEnabled(false);
  auto* settingsRow = new QHBoxLayout;
  settingsRow->addWidget(widthLabel_);
  settingsRow->addWidget(width_);
  settingsRow->addWidget(new QLabel(tr("Height"), this));
  settingsRow->addWidget(height_);
  settingsRow->addWidget(new QLabel(tr("Frames"), this));
  settingsRow->addWidget(frames_);
  settingsRow->addWidget(stepsLabel_);
  settingsRow->addWidget(steps_);
  settingsRow->addWidget(seedLabel_);
  settingsRow->addWidget(seed_);
  settingsRow->addStretch(1);
  status_ = new QLabel(this);
  status_->setObjectName(QStringLiteral("compareStatus"));
  status_->setWordWrap(true);
  status_->setTextInteractionFlags(Qt::TextSelectableByMouse);

  player_ = new VideoCompareView(this);
  chart_ = new QCustomPlot(this);
  chart_->setObjectName(QStringLiteral("compareChart"));
  chart_->setMinimumHeight(140);
  chart_->setAccessibleName(tr("Per-frame PSNR and SSIM"));
  chart_->setToolTip(tr("PSNR and SSIM of each frame, measured on the video files as written (8-bit, compressed)"));
  chart_->xAxis->setLabel(tr("frame"));
  chart_->yAxis->setLabel(tr("PSNR (dB)"));
  chart_->yAxis2->setLabel(tr("SSIM"));
  chart_->yAxis2->setVisible(true);
  chart_->legend->setVisible(true);
  chart_->legend->setFont(font());
  styleChart(chart_);
  startImages_ = new StartImageStrip(this);
  auto* playerRow = new QWidget(this);
  auto* pr = new QHBoxLayout(playerRow);
  pr->setContentsMargins(0, 0, 0, 0);
  pr->addWidget(startImages_);
  pr->addWidget(player_, 1);
  auto* split = new QSplitter(Qt::Vertical, this);
  split->addWidget(playerRow);
  split->addWidget(chart_);
  split->setStretchFactor(0, 4);
  split->setStretchFactor(1, 1);

  auto* videos = new QWidget(this);
  auto* layout = new QVBoxLayout(videos);
  layout->addLayout(sidesRow);
  layout->addWidget(inputs_);
  layout->addLayout(settingsRow);
  // The buttons beside the status line, not after the settings: the page fits 1280 px with the docks.
  auto* actionRow = new QHBoxLayout;
  actionRow->addWidget(status_, 1);
  actionRow->addWidget(render_, 0, Qt::AlignTop);
  actionRow->addWidget(cancel_, 0, Qt::AlignTop);
  actionRow->addWidget(export_, 0, Qt::AlignTop);
  layout->addLayout(actionRow);
  layout->addWidget(split, 1);
  // Two ways to compare runs: their videos (above) and their loss curves on one chart.
  tabs_ = new QTabWidget(this);
  tabs_->setObjectName(QStringLiteral("compareTabs"));
  tabs_->setAccessibleName(tr("Compare"));
  tabs_->addTab(videos, tr("Videos"));
  overlay_ = new LossOverlay(runs_, this);
  tabs_->addTab(overlay_, tr("Loss Curves"));
  auto* outer = new QVBoxLayout(this);
  outer->setContentsMargins(0, 0, 0, 0);
  outer->addWidget(tabs_);

  watchChoice();
  connect(render_, &QPushButton::clicked, this, &ComparePage::render);
  connect(cancel_, &QPushButton::clicked, this, &ComparePage::cancel);
  connect(export_, &QPushButton::clicked, this, [this] {
    const QString f = QFileDialog::getSaveFileName(this, tr("Export Side by Side"), QStringLiteral("compare.mp4"),
                                                   tr("MP4 video (*.mp4)"));
    if (!f.isEmpty()) exportSideBySide(f);
  });
  connect(&metricsWatcher_, &QFutureWatcher<QList<Series>>::finished, this, [this] {
    if (metricsWatcher_.isCanceled() || metricsWatcher_.property("generation").toULongLong() != metricsGeneration_)
      return;
    series_ = metricsWatcher_.result();
    drawChart();
    Q_EMIT metricsReady();
  });
  connect(&exportWatcher_, &QFutureWatcher<QString>::finished, this, [this] {
    const QString error = exportWatcher_.result();
    const QString path = exportWatcher_.property("path").toString();
    export_->setEnabled(true);
    if (error.isEmpty()) setStatus(tr("Exported %1").arg(path));
    else setStatus(tr("Export failed: %1").arg(error), true);
    Q_EMIT exportFinished(error.isEmpty(), error.isEmpty() ? path : error);
  });
  connect(runs_, &QAbstractItemModel::modelReset, this, &ComparePage::fillRuns);
  connect(runs_, &QAbstractItemModel::rowsInserted, this, &ComparePage::fillRuns);
  connect(runs_, &QAbstractItemModel::rowsRemoved, this, &ComparePage::fillRuns);
  // A run's job is known once its events are read; new checkpoints appear while it trains.
  connect(runs_, &QAbstractItemModel::dataChanged, this, &ComparePage::fillRuns);
  fillRuns();
}

ComparePage::~ComparePage() {
  if (metricsAbort_) *metricsAbort_ = true;
  if (exportAbort_) *exportAbort_ = true;
  metricsWatcher_.waitForFinished();
  exportWatcher_.waitForFinished();
}

void ComparePage::setCacheDir(const QString& dir) { cacheDir_ = dir; }

void ComparePage::fillRuns() {
  // The runs that can render, as (folder, job, name); rebuilt only when that list changed.
  QList<std::tuple<QString, QString, QString>> runs;
  for (int row = 0; row < runs_->rowCount(); ++row) {
    const QString job = runs_->summary(row).job;
    if (job != QLatin1String("experts") && job != QLatin1String("upsampler")) continue;
    runs << std::make_tuple(runs_->runDir(row), job,
                            runs_->data(runs_->index(row, RunsModel::NameColumn), Qt::DisplayRole).toString());
  }
  for (int i = 0; i < 2; ++i) {
    QComboBox* c = sides_[size_t(i)].run;
    bool same = c->count() == runs.size();
    for (int k = 0; same && k < c->count(); ++k)
      same = c->itemData(k).toString() == std::get<0>(runs[k]) &&
             c->itemData(k, Qt::UserRole + 1).toString() == std::get<1>(runs[k]);
    if (same) continue;
    const QString current = c->currentData().toString();
    const QSignalBlocker block(c);
    c->clear();
    for (const auto& [dir, job, name] : runs) {
      c->addItem(QStringLiteral("%1 (%2)").arg(name, job), dir);
      c->setItemData(c->count() - 1, job, Qt::UserRole + 1);
    }
    const int keep = c->findData(current);
    c->setCurrentIndex(keep >= 0 ? keep : (c->count() > i ? i : c->count() - 1));
  }
  for (int i = 0; i < 2; ++i) fillCheckpoints(i);
  updateInputs();
}

QString ComparePage::job() const { return sides_[0].run->currentData(Qt::UserRole + 1).toString(); }

RenderRequest ComparePage::requestFor(int i) const {
  const Side& s = sides_[size_t(i)];
  RenderRequest r;
  r.runDir = s.run->currentData().toString();
  r.step = s.checkpoint->currentData().isValid() ? s.checkpoint->currentData().toLongLong() : -1;
  r.job = s.run->currentData(Qt::UserRole + 1).toString();
  const int row = runs_->rowForRunDir(r.runDir);
  if (row >= 0) r.config = runs_->summary(row).config;
  r.settings.prompt = prompt_->text().trimmed();
  r.settings.video = video_->text().trimmed();
  r.settings.width = width_->value();
  r.settings.height = height_->value();
  r.settings.frames = frames_->value();
  r.settings.steps = steps_->value();
  r.settings.seed = seed_->value();
  r.settings.ema = ema_->isChecked();
  return r;
}

bool ComparePage::isRendering() const {
  return std::any_of(sides_.begin(), sides_.end(), [](const Side& s) { return s.job && s.job->isRunning(); });
}

void ComparePage::render() {
  if (isRendering()) return;
  const QString other = sides_[1].run->currentData(Qt::UserRole + 1).toString();
  QString problem = job() != other ? tr("compare checkpoints of the same kind of run") : QString();
  for (int i = 0; i < 2 && problem.isEmpty(); ++i) {
    if (keptChoice(i)) continue;  // nothing to render
    const QString p = requestFor(i).problem();
    if (!p.isEmpty()) problem = QStringLiteral("%1: %2").arg(QLatin1String(kSideNames[i]), p);
  }
  // Kept validation renders are shown as they are: both sides, or neither.
  const std::optional<KeptRender> keptA = keptChoice(0), keptB = keptChoice(1);
  if (problem.isEmpty() && bool(keptA) != bool(keptB))
    problem = tr("%1 is a kept validation render and %2 a checkpoint: pick two validation renders, or two "
                 "checkpoints to render on the same input")
                  .arg(QLatin1String(kSideNames[keptA ? 0 : 1]), QLatin1String(kSideNames[keptA ? 1 : 0]));
  if (keptA && keptB && problem.isEmpty()) {
    sides_[0].kept = keptA;
    sides_[1].kept = keptB;
    if (showKept()) return;
  }
  if (!problem.isEmpty() || (keptA && keptB)) {
    if (!problem.isEmpty()) setStatus(problem, true);
    Q_EMIT renderFinished(false);
    return;
  }
  player_->clear();
  startImages_->setImages({});
  shown_.clear();
  series_.clear();
  drawChart();
  export_->setEnabled(false);
  ++metricsGeneration_;
  render_->setEnabled(false);
  cancel_->setEnabled(true);
  setStatus(tr("Rendering…"));
  for (int i = 0; i < 2; ++i) {
    Side& s = sides_[size_t(i)];
    s.result.reset();
    s.kept.reset();
    s.request = requestFor(i);
    s.progress->setValue(0);
    s.state->setText(tr("waiting"));
    delete s.job;
    s.job = new RenderJob(s.request, cacheDir_, this);
    if (!program_.isEmpty()) s.job->setProgram(program_);
    connect(s.job, &RenderJob::progress, this, [&s](double f, const QString& text) {
      s.progress->setValue(int(std::lround(f * 1000)));
      s.state->setText(text);
    });
    connect(s.job, &RenderJob::finished, this,
            [this, i](bool ok, const RenderResult& r, const QString& error) { onSideFinished(i, ok, r, error); });
  }
  // The two renders take turns: each one uses every core.
  sides_[0].job->start();
}

void ComparePage::cancel() {
  for (Side& s : sides_)
    if (s.job) s.job->cancel();
}

void ComparePage::onSideFinished(int i, bool ok, const RenderResult& r, const QString& error) {
  Side& s = sides_[size_t(i)];
  if (ok) {
    s.result = r;
    s.progress->setValue(1000);
    s.state->setText(r.cached ? tr("from the cache") : tr("rendered in %1 s").arg(r.seconds, 0, 'f', 1));
  } else {
    s.progress->setValue(0);
    s.state->setText(error);
  }
  const bool cancelled = !ok && error == tr("cancelled");
  if (i == 0 && !cancelled && sides_[1].job) {
    sides_[1].job->start();
    if (!ok) setStatus(tr("A failed: %1").arg(error), true);
    return;
  }
  // Done: B ended, or A was cancelled (B never starts).
  render_->setEnabled(true);
  cancel_->setEnabled(false);
  const bool both = sides_[0].result && sides_[1].result;
  if (both) {
    showResults();
  } else if (cancelled) {
    sides_[1].state->setText({});
    setStatus(tr("Cancelled: nothing was kept of the unfinished render."));
  } else if (!ok) {
    setStatus(tr("%1 failed: %2").arg(QLatin1String(kSideNames[i]), error), true);
  }
  Q_EMIT renderFinished(both);
}

void ComparePage::showResults() {
  const RenderResult &a = *sides_[0].result, &b = *sides_[1].result;
  const QString la = QStringLiteral("A: %1").arg(sideLabel(0));
  const QString lb = QStringLiteral("B: %1").arg(sideLabel(1));
  const bool kept = sides_[0].kept && sides_[1].kept;
  QList<VideoCompareView::Video> videos;
  if (job() == QLatin1String("upsampler")) {
    videos << VideoCompareView::Video{la, a.video, tr("PSNR %1").arg(db(a.psnr))}
           << VideoCompareView::Video{lb, b.video, tr("PSNR %1").arg(db(b.psnr))};
    if (!a.reference.isEmpty()) videos << VideoCompareView::Video{tr("high-res decode"), a.reference, tr("reference")};
    setStatus(
        tr("Against the high-res decode: A %1, B %2, bilinear %3. Against the source clip: A %4, B %5, "
           "ceiling %6 (the high-res decode itself: no upsampler is expected to beat it). The engine measured "
           "these on the decoded frames; the chart measures the written video files (8-bit, compressed), so "
           "its figures run a little lower.")
            .arg(db(a.psnr), db(b.psnr), db(a.psnrLowres), db(a.psnrSource), db(b.psnrSource), db(a.psnrCeiling)));
  } else {
    videos << VideoCompareView::Video{la, a.video, sides_[0].request.settings.prompt.left(60)}
           << VideoCompareView::Video{lb, b.video, sides_[1].request.settings.prompt.left(60)};
    if (kept)
      setStatus(
          tr("Validation renders as the runs made them (each with its run's prompt, seed and settings); the "
             "chart shows how far apart the two videos are (A against B)."));
    else
      setStatus(tr("Same prompt, seed and settings; the chart shows how far apart the two videos are (A against B)."));
  }
  shown_ = tr("%1 vs %2").arg(la, lb);
  player_->setInfo(QStringLiteral("<b>%1</b> vs <b>%2</b>").arg(la.toHtmlEscaped(), lb.toHtmlEscaped()));
  player_->setVideos(videos);
  showStartImages();
  export_->setEnabled(true);
  startMetrics();
}

void ComparePage::startMetrics() {
  if (metricsAbort_) *metricsAbort_ = true;
  metricsAbort_ = std::make_shared<std::atomic_bool>(false);
  struct Pair {
    QString name, video, reference;
  };
  QList<Pair> pairs;
  const RenderResult &a = *sides_[0].result, &b = *sides_[1].result;
  if (!a.reference.isEmpty()) {
    // Each side against its own high-res decode (one and the same for two renders of one input).
    pairs << Pair{tr("A vs high-res"), a.video, a.reference}
          << Pair{tr("B vs high-res"), b.video, b.reference.isEmpty() ? a.reference : b.reference};
  } else {
    pairs << Pair{tr("A vs B"), a.video, b.video};
  }
  auto abort = metricsAbort_;
  metricsWatcher_.setProperty("generation", ++metricsGeneration_);
  metricsWatcher_.setFuture(QtConcurrent::run([pairs, abort] {
    QList<Series> out;
    for (const Pair& p : pairs) {
      Series s{p.name, {}};
      QString error;
      if (!scoreVideos(p.video, p.reference, &s.scores, &error, abort.get()))
        s.name += QStringLiteral(" (%1)").arg(error);
      out << s;
    }
    return out;
  }));
}

void ComparePage::drawChart() {
  chart_->clearGraphs();
  static const QColor colors[] = {QColor(0x1f, 0x77, 0xb4), QColor(0xd6, 0x27, 0x28), QColor(0x2c, 0xa0, 0x2c)};
  double lo = 100, hi = 0;
  int frames = 1;
  for (int k = 0; k < series_.size(); ++k) {
    const Series& s = series_[k];
    QVector<double> x(s.scores.psnr.size());
    for (int f = 0; f < x.size(); ++f) x[f] = f;
    frames = std::max(frames, int(x.size()));
    QCPGraph* g = chart_->addGraph(chart_->xAxis, chart_->yAxis);
    g->setName(tr("%1 PSNR (clip %2, of the video files)").arg(s.name, db(s.scores.pooledPsnr())));
    g->setPen(QPen(colors[k % 3], 2));
    g->setData(x, s.scores.psnr, true);
    QCPGraph* g2 = chart_->addGraph(chart_->xAxis, chart_->yAxis2);
    g2->setName(tr("%1 SSIM (mean %2)").arg(s.name).arg(s.scores.meanSsim(), 0, 'f', 3));
    g2->setPen(QPen(colors[k % 3], 1, Qt::DashLine));
    g2->setData(x, s.scores.ssim, true);
    for (double v : s.scores.psnr) {
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
  }
  chart_->xAxis->setRange(0, std::max(1, frames - 1));
  if (hi >= lo) chart_->yAxis->setRange(std::floor(lo - 1), std::ceil(hi + 1));
  chart_->yAxis2->setRange(0, 1);
  chart_->replot();
}

bool ComparePage::exportSideBySide(const QString& path) {
  if (player_->videos().isEmpty() || exportWatcher_.isRunning()) return false;
  if (exportAbort_) *exportAbort_ = true;
  exportAbort_ = std::make_shared<std::atomic_bool>(false);
  export_->setEnabled(false);
  setStatus(tr("Exporting %1…").arg(path));
  exportWatcher_.setProperty("path", path);
  exportWatcher_.setFuture(exportSideBySideInBackground(player_->exportList(), path, exportAbort_));
  return true;
}

}  // namespace ws
