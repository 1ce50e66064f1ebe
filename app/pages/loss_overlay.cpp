// SPDX-License-Identifier: Apache-2.0
#include "pages/loss_overlay.h"

#include <QComboBox>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QListWidget>
#include <QSplitter>
#include <QVBoxLayout>
#include <QtConcurrent>

#include <cmath>

#include "item_models/runs_model.h"
#include "loss_chart.h"
#include "runfolder/run_events.h"
#include "runfolder/run_paths.h"

namespace ws {
namespace {

struct RunToRead {
  QString dir, name;
};

// One run's loss, one curve per expert; points a resume dropped are left out.
QList<LossOverlay::Curve> readCurves(const RunToRead& run, bool expertSteps) {
  RunEvents events;
  if (!events.loadFile(runFile(run.dir, contract::kEventsFile))) return {};
  QList<LossOverlay::Curve> out;
  QHash<QString, int> byExpert;
  for (const RunEvents::StepPoint& p : events.steps()) {
    if (p.dropped || !std::isfinite(p.loss)) continue;
    const bool one = p.expert.isEmpty() || p.expert == QLatin1String("upsampler");
    const QString name = one ? run.name : QStringLiteral("%1 · %2").arg(run.name, p.expert);
    auto it = byExpert.find(name);
    if (it == byExpert.end()) {
      it = byExpert.insert(name, int(out.size()));
      out << LossOverlay::Curve{name, {}, {}};
    }
    LossOverlay::Curve& c = out[*it];
    c.x << double(expertSteps && !one ? p.expertStep : p.step);
    c.y << p.loss;
  }
  return out;
}

}  // namespace

LossOverlay::LossOverlay(RunsModel* runs, QWidget* parent) : QWidget(parent), runs_(runs) {
  list_ = new QListWidget(this);
  list_->setObjectName(QStringLiteral("lossOverlayRuns"));
  list_->setAccessibleName(tr("Runs to overlay"));
  list_->setAccessibleDescription(tr("Check the runs whose loss curves are drawn on one chart"));
  list_->setMinimumWidth(200);
  axis_ = new QComboBox(this);
  axis_->setObjectName(QStringLiteral("lossOverlayAxis"));
  axis_->setAccessibleName(tr("Step axis"));
  axis_->addItem(tr("Run step"));
  axis_->addItem(tr("Expert step"));
  axis_->setToolTip(tr("Dual-expert runs: each expert's own step count (its optimizer's) instead of the run's step"));
  note_ = new QLabel(tr("Check two or more runs to overlay their loss."), this);
  note_->setObjectName(QStringLiteral("hint"));
  note_->setWordWrap(true);
  chart_ = new LossChart(this);
  chart_->setObjectName(QStringLiteral("lossOverlayChart"));
  chart_->setAxisLabels(tr("step"), tr("loss"));
  chart_->setEmptyText(tr("No run checked"));
  chart_->setExportName(QStringLiteral("loss-overlay.png"));

  auto* left = new QWidget(this);
  auto* ll = new QVBoxLayout(left);
  ll->setContentsMargins(0, 0, 0, 0);
  ll->addWidget(new QLabel(tr("Runs"), left));
  ll->addWidget(list_, 1);
  auto* axisRow = new QHBoxLayout;
  axisRow->addWidget(new QLabel(tr("Steps"), left));
  axisRow->addWidget(axis_, 1);
  ll->addLayout(axisRow);
  ll->addWidget(note_);
  auto* split = new QSplitter(Qt::Horizontal, this);
  split->addWidget(left);
  split->addWidget(chart_);
  split->setStretchFactor(1, 1);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(split);

  connect(list_, &QListWidget::itemChanged, this, [this] { reload(); });
  connect(axis_, &QComboBox::currentIndexChanged, this, [this] { reload(); });
  connect(&watcher_, &QFutureWatcher<QList<Curve>>::finished, this, [this] {
    if (watcher_.property("generation").toULongLong() != generation_) return;  // superseded
    curves_ = watcher_.result();
    draw();
    Q_EMIT curvesLoaded();
  });
  connect(runs_, &QAbstractItemModel::modelReset, this, &LossOverlay::fillRuns);
  connect(runs_, &QAbstractItemModel::rowsInserted, this, &LossOverlay::fillRuns);
  connect(runs_, &QAbstractItemModel::rowsRemoved, this, &LossOverlay::fillRuns);
  connect(runs_, &QAbstractItemModel::dataChanged, this, &LossOverlay::reloadIfGrown);
  fillRuns();
}

LossOverlay::~LossOverlay() { watcher_.waitForFinished(); }

void LossOverlay::fillRuns() {
  const QStringList checked = checkedRuns();
  const QSignalBlocker block(list_);
  list_->clear();
  for (int row = 0; row < runs_->rowCount(); ++row) {
    const QString dir = runs_->runDir(row);
    auto* item =
        new QListWidgetItem(runs_->data(runs_->index(row, RunsModel::NameColumn), Qt::DisplayRole).toString(), list_);
    item->setData(Qt::UserRole, dir);
    item->setToolTip(dir);
    item->setFlags(Qt::ItemIsEnabled | Qt::ItemIsUserCheckable | Qt::ItemIsSelectable);
    item->setCheckState(checked.contains(dir) ? Qt::Checked : Qt::Unchecked);
  }
}

bool LossOverlay::setRunChecked(const QString& runDir, bool on) {
  for (int k = 0; k < list_->count(); ++k)
    if (list_->item(k)->data(Qt::UserRole).toString() == runDir) {
      list_->item(k)->setCheckState(on ? Qt::Checked : Qt::Unchecked);  // itemChanged reloads
      return true;
    }
  return false;
}

QStringList LossOverlay::checkedRuns() const {
  QStringList out;
  for (int k = 0; k < list_->count(); ++k)
    if (list_->item(k)->checkState() == Qt::Checked) out << list_->item(k)->data(Qt::UserRole).toString();
  return out;
}

void LossOverlay::setExpertSteps(bool on) { axis_->setCurrentIndex(on ? 1 : 0); }

void LossOverlay::reload() {
  QList<RunToRead> runs;
  loadedSizes_.clear();
  for (int k = 0; k < list_->count(); ++k) {
    const QListWidgetItem* item = list_->item(k);
    if (item->checkState() != Qt::Checked) continue;
    const QString dir = item->data(Qt::UserRole).toString();
    runs << RunToRead{dir, item->text()};
    loadedSizes_.insert(dir, QFileInfo(runFile(dir, contract::kEventsFile)).size());
  }
  const bool expertSteps = axis_->currentIndex() == 1;
  watcher_.setProperty("generation", ++generation_);
  watcher_.setFuture(QtConcurrent::run([runs, expertSteps] {
    QList<Curve> out;
    for (const RunToRead& r : runs) out << readCurves(r, expertSteps);
    return out;
  }));
}

void LossOverlay::reloadIfGrown() {
  if (!isVisible()) return;
  for (auto it = loadedSizes_.cbegin(); it != loadedSizes_.cend(); ++it)
    if (QFileInfo(runFile(it.key(), contract::kEventsFile)).size() != it.value()) {
      reload();
      return;
    }
}

void LossOverlay::showEvent(QShowEvent* event) {
  QWidget::showEvent(event);
  reloadIfGrown();
}

void LossOverlay::draw() {
  chart_->clear();
  chart_->setAxisLabels(axis_->currentIndex() == 1 ? tr("expert step") : tr("step"), tr("loss"));
  for (const Curve& c : curves_) chart_->addPoints(c.name, c.x, c.y);
  chart_->replotNow();
  chart_->fitToData();
  const int runs = int(checkedRuns().size());
  note_->setText(runs < 2 ? tr("Check two or more runs to overlay their loss.")
                          : tr("%n curve(s) of %1 runs.", nullptr, int(curves_.size())).arg(runs));
}

}  // namespace ws
