// SPDX-License-Identifier: Apache-2.0
#include "pages/validation_view.h"

#include <QHeaderView>
#include <QTreeWidget>

#include <cmath>

#include "runfolder/run_events.h"
#include "video_compare_view.h"

namespace ws {
namespace {

QString score(double v, int digits = 2) {
  return std::isfinite(v) ? QString::number(v, 'f', digits) : QStringLiteral("–");
}
QString db(double v) { return std::isfinite(v) ? QStringLiteral("%1 dB").arg(v, 0, 'f', 2) : QStringLiteral("–"); }

}  // namespace

ValidationView::ValidationView(RunEvents* events, QWidget* parent) : ValidationPage(events, parent) {
  list_ = new QTreeWidget(this);
  list_->setAccessibleName(tr("Validation videos"));
  list_->setObjectName(QStringLiteral("validationList"));
  list_->setColumnCount(6);
  list_->setHeaderLabels({tr("Step"), tr("Index"), tr("PSNR"), tr("PSNR low-res"), tr("Ceiling"), tr("Latent MSE")});
  list_->headerItem()->setToolTip(2, tr("The upsampled decode against the high-res decode"));
  list_->headerItem()->setToolTip(
      3, tr("The low-res decode, resized bilinearly, against the high-res decode: the baseline to beat"));
  list_->headerItem()->setToolTip(
      4, tr("The high-res decode against the source clip: the VAE's own loss, which an upsampled "
            "latent is not expected to beat (against the source, upsampled and bilinear are "
            "in the tooltip of each row)"));
  list_->setRootIsDecorated(false);
  list_->setAlternatingRowColors(true);
  list_->setSelectionMode(QAbstractItemView::ExtendedSelection);
  list_->setSortingEnabled(false);
  list_->setMinimumWidth(250);
  list_->header()->setSectionResizeMode(QHeaderView::ResizeToContents);
  setUp(list_, tr("Select one validation to play its videos; select two to compare their upsampled videos."));

  connect(list_, &QTreeWidget::itemSelectionChanged, this, &ValidationView::onSelection);
}

void ValidationView::refresh() {
  QVector<ValidationSample> samples;
  for (const RunEvent& ev : events_->events())
    if (auto s = ValidationSample::fromEvent(ev, runDir_)) samples << *s;
  const bool same = samples.size() == samples_.size() &&
                    std::equal(samples.begin(), samples.end(), samples_.begin(), [](const auto& a, const auto& b) {
                      return a.step == b.step && a.index == b.index && a.upsampled == b.upsampled;
                    });
  if (same) return;
  // New validations append; keep the selection (and the player) as it is.
  const QList<int> selected = shown_;
  samples_ = samples;
  const QSignalBlocker block(list_);
  list_->clear();
  for (const ValidationSample& s : samples_) {
    auto* item = new QTreeWidgetItem(
        {QString::number(s.step), QString::number(s.index), db(s.psnr), db(s.psnrLowres), db(s.psnrCeiling),
         std::isfinite(s.latentMse) ? QString::number(s.latentMse, 'g', 4) : QStringLiteral("–")});
    for (int c = 0; c < 6; ++c) item->setTextAlignment(c, Qt::AlignRight | Qt::AlignVCenter);
    item->setToolTip(0, s.upsampled);
    if (std::isfinite(s.psnrCeiling))
      for (int c = 2; c < 5; ++c)
        item->setToolTip(c, tr("Against the source clip: upsampled %1, bilinear %2, ceiling %3")
                                .arg(db(s.psnrSource), db(s.psnrLowresSource), db(s.psnrCeiling)));
    list_->addTopLevelItem(item);
  }
  for (int row : selected)
    if (row < list_->topLevelItemCount()) list_->topLevelItem(row)->setSelected(true);
  // A run opened on this tab gets its events after the tab was shown.
  if (isVisible()) playNewestIfIdle();
}

void ValidationView::showEvent(QShowEvent* event) {
  QWidget::showEvent(event);
  playNewestIfIdle();
}

void ValidationView::playNewestIfIdle() {
  // Opening the tab plays the newest validation; decoding waits until someone looks.
  if (shown_.isEmpty() && !samples_.isEmpty()) selectSamples({int(samples_.size()) - 1});
}

void ValidationView::selectSamples(const QList<int>& rows) {
  {
    const QSignalBlocker block(list_);
    list_->clearSelection();
    for (int row : rows)
      if (row >= 0 && row < list_->topLevelItemCount()) list_->topLevelItem(row)->setSelected(true);
  }
  onSelection();
}

void ValidationView::onSelection() {
  QList<int> rows;
  for (QTreeWidgetItem* item : list_->selectedItems()) rows << list_->indexOfTopLevelItem(item);
  std::sort(rows.begin(), rows.end());
  if (rows.size() > 2) rows = rows.mid(int(rows.size()) - 2);  // the newest two
  if (rows == shown_) return;
  shown_ = rows;
  QList<VideoCompareView::Video> videos;
  if (rows.size() == 1) {
    const ValidationSample& s = samples_[rows[0]];
    videos << VideoCompareView::Video{tr("low-res"), s.lowres, tr("PSNR %1").arg(db(s.psnrLowres))}
           << VideoCompareView::Video{tr("upsampled"), s.upsampled, tr("PSNR %1").arg(db(s.psnr))};
    if (!s.highres.isEmpty()) videos << VideoCompareView::Video{tr("high-res"), s.highres, tr("reference")};
    QString info = tr("<b>%1</b> — against the high-res decode: upsampled %2, bilinear %3; latent MSE %4")
                       .arg(s.label(), db(s.psnr), db(s.psnrLowres), score(s.latentMse, 5));
    if (std::isfinite(s.psnrCeiling))
      info += tr("<br>against the source: upsampled %1, bilinear %2, <b>ceiling %3</b> (the high-res decode: "
                 "what the VAE itself loses)")
                  .arg(db(s.psnrSource), db(s.psnrLowresSource), db(s.psnrCeiling));
    player_->setInfo(info);
  } else if (rows.size() == 2) {
    QStringList parts;
    for (int r : rows) {
      const ValidationSample& s = samples_[r];
      videos << VideoCompareView::Video{s.label(), s.upsampled, tr("PSNR %1").arg(db(s.psnr))};
      parts << tr("%1: PSNR %2").arg(s.label(), db(s.psnr));
    }
    player_->setInfo(tr("Upsampled videos compared — %1").arg(parts.join(QStringLiteral("  ·  "))));
  } else {
    player_->setInfo({});
  }
  player_->setVideos(videos);
}

}  // namespace ws
