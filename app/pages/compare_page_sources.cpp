// SPDX-License-Identifier: Apache-2.0
// Compare's two lists per side: the run's checkpoints (rendered on the page's input) and below
// them the validation renders the run kept (shown as they are, with an i2v run's start images).
#include <QComboBox>
#include <QFileInfo>
#include <QLabel>
#include <QProgressBar>

#include "item_models/runs_model.h"
#include "jobs/job_manager.h"
#include "pages/compare_page.h"
#include "pages/start_image_strip.h"
#include "runfolder/run_checkpoints.h"
#include "runfolder/run_paths.h"
#include "video_compare_view.h"

namespace ws {
namespace {

const char* kSideNames[] = {"A", "B"};
// The checkpoint list's items for kept validation renders carry their index here (step in UserRole).
constexpr int kKeptIndexRole = Qt::UserRole + 1;

}  // namespace

void ComparePage::fillCheckpoints(int i) {
  Side& s = sides_[size_t(i)];
  const QVariant current = s.checkpoint->currentData();
  const QVariant currentKept = s.checkpoint->currentData(kKeptIndexRole);
  const QSignalBlocker block(s.checkpoint);
  s.checkpoint->clear();
  const QString dir = s.run->currentData().toString();
  QList<qint64> steps = checkpointSteps(dir);
  std::reverse(steps.begin(), steps.end());  // newest first
  for (qint64 st : steps) s.checkpoint->addItem(tr("step %1").arg(st), st);
  // Below the checkpoints: every validation render the run kept, newest first.
  const QList<KeptRender>& kept = keptFor(dir);
  if (!kept.isEmpty() && !steps.isEmpty()) s.checkpoint->insertSeparator(s.checkpoint->count());
  const bool experts = s.run->currentData(Qt::UserRole + 1).toString() == QLatin1String("experts");
  for (auto it = kept.crbegin(); it != kept.crend(); ++it) {
    s.checkpoint->addItem(experts ? tr("validation render · step %1 · prompt %2").arg(it->step).arg(it->index)
                                  : tr("validation render · step %1 · clip %2").arg(it->step).arg(it->index),
                          it->step);
    s.checkpoint->setItemData(s.checkpoint->count() - 1, it->index, kKeptIndexRole);
    if (!it->prompt.isEmpty()) s.checkpoint->setItemData(s.checkpoint->count() - 1, it->prompt, Qt::ToolTipRole);
  }
  for (int k = 0; k < s.checkpoint->count(); ++k)
    if (s.checkpoint->itemData(k) == current && s.checkpoint->itemData(k, kKeptIndexRole) == currentKept) {
      s.checkpoint->setCurrentIndex(k);
      break;
    }
}

const QList<KeptRender>& ComparePage::keptFor(const QString& runDir) {
  static const QList<KeptRender> none;
  if (runDir.isEmpty()) return none;
  const QFileInfo events(runFile(runDir, contract::kEventsFile));
  KeptList& k = kept_[runDir];
  if (k.size != events.size() || k.modified != events.lastModified()) {
    k.size = events.size();
    k.modified = events.lastModified();
    k.renders = keptRenders(runDir);
  }
  return k.renders;
}

std::optional<KeptRender> ComparePage::keptChoice(int i) {
  const Side& s = sides_[size_t(i)];
  const QVariant index = s.checkpoint->currentData(kKeptIndexRole);
  if (!index.isValid()) return std::nullopt;
  const qint64 step = s.checkpoint->currentData().toLongLong();
  for (const KeptRender& k : keptFor(s.run->currentData().toString()))
    if (k.step == step && k.index == index.toInt()) return k;
  return std::nullopt;
}

bool ComparePage::chooseKept(int i, const QString& runDir, qint64 step, int index) {
  Side& s = sides_[size_t(i)];
  const int row = s.run->findData(JobManager::normalizedPath(runDir));
  if (row < 0) return false;
  s.run->setCurrentIndex(row);
  fillCheckpoints(i);
  for (int k = 0; k < s.checkpoint->count(); ++k)
    if (s.checkpoint->itemData(k).toLongLong() == step && s.checkpoint->itemData(k, kKeptIndexRole) == index) {
      s.checkpoint->setCurrentIndex(k);
      updateInputs();
      return true;
    }
  return false;
}

QString ComparePage::sideLabel(int i) const {
  const Side& s = sides_[size_t(i)];
  if (!s.kept) return s.request.label();
  return tr("%1 · step %2 · validation %3")
      .arg(QFileInfo(s.request.runDir).fileName())
      .arg(s.kept->step)
      .arg(s.kept->index);
}

bool ComparePage::choose(int i, const QString& runDir, qint64 step) {
  Side& s = sides_[size_t(i)];
  const int row = s.run->findData(JobManager::normalizedPath(runDir));
  if (row < 0) return false;
  s.run->setCurrentIndex(row);
  fillCheckpoints(i);
  for (int k = 0; k < s.checkpoint->count(); ++k)
    if (s.checkpoint->itemData(k).isValid() && s.checkpoint->itemData(k).toLongLong() == step &&
        !s.checkpoint->itemData(k, kKeptIndexRole).isValid()) {
      s.checkpoint->setCurrentIndex(k);
      updateInputs();
      return true;
    }
  return false;
}

void ComparePage::showStartImages() {
  // Kept renders of i2v runs name their start image; one shared by both sides is shown once.
  QList<StartImageStrip::Image> images;
  const QString a = sides_[0].kept ? sides_[0].kept->image : QString();
  const QString b = sides_[1].kept ? sides_[1].kept->image : QString();
  if (!a.isEmpty() && a == b) images << StartImageStrip::Image{a, tr("A and B")};
  else {
    if (!a.isEmpty()) images << StartImageStrip::Image{a, QStringLiteral("A")};
    if (!b.isEmpty()) images << StartImageStrip::Image{b, QStringLiteral("B")};
  }
  startImages_->setImages(images);
}

bool ComparePage::showKept() {
  player_->clear();
  shown_.clear();
  series_.clear();
  drawChart();
  ++metricsGeneration_;
  for (int i = 0; i < 2; ++i) {
    Side& s = sides_[size_t(i)];
    const KeptRender& k = *s.kept;
    if (!QFileInfo(k.video).isFile()) {
      setStatus(tr("%1: the validation render %2 is gone").arg(QLatin1String(kSideNames[i]), k.video), true);
      return false;
    }
    s.request = requestFor(i);
    s.request.settings.prompt = k.prompt;
    RenderResult r;
    r.dir = QFileInfo(k.video).absolutePath();
    r.video = k.video;
    r.reference = k.reference;
    r.lowres = k.lowres;
    r.psnr = k.psnr;
    r.psnrLowres = k.psnrLowres;
    r.psnrCeiling = k.psnrCeiling;
    r.psnrSource = k.psnrSource;
    r.cached = true;
    s.result = r;
    s.progress->setValue(1000);
    s.state->setText(tr("kept by the run at step %1").arg(k.step));
  }
  showResults();
  Q_EMIT renderFinished(true);
  return true;
}

}  // namespace ws
