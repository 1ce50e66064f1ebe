// SPDX-License-Identifier: Apache-2.0
#include "pages/expert_validation_view.h"

#include <QHeaderView>
#include <QTableWidget>

#include <algorithm>

#include "pages/start_image_strip.h"
#include "runfolder/run_events.h"
#include "thumbnail_loader.h"
#include "video_compare_view.h"

namespace ws {

ExpertValidationView::ExpertValidationView(RunEvents* events, QWidget* parent) : ValidationPage(events, parent) {
  grid_ = new QTableWidget(this);
  grid_->setAccessibleName(tr("Validation videos by step and prompt"));
  grid_->setObjectName(QStringLiteral("expertValidationGrid"));
  grid_->setSelectionMode(QAbstractItemView::ExtendedSelection);
  grid_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  grid_->setMinimumWidth(220);
  grid_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  setUp(grid_, tr("One row per validation step, one column per prompt. Select up to %1 cells to play them side "
                  "by side: down a column to see a prompt change with training.")
                   .arg(kMaxShown));

  connect(grid_, &QTableWidget::itemSelectionChanged, this, &ExpertValidationView::onSelection);

  // Each cell shows its video's first frame, decoded on the loader's thread; results come back
  // queued to this view, keyed by the sample's index into samples_ of the same generation.
  grid_->setIconSize(QSize(kThumbEdge, kThumbEdge));
  grid_->verticalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  thumbs_ = new ThumbnailLoader(kThumbEdge, this, ThumbnailLoader::Frame::First);
  connect(thumbs_, &ThumbnailLoader::thumbnailReady, this, [this](int key, const QImage& image, quint64 generation) {
    if (generation != thumbs_->generation() || key < 0 || key >= samples_.size()) return;
    const ExpertSample& s = samples_[key];
    const QPixmap pixmap = QPixmap::fromImage(image);
    pictures_.insert(s.video, pixmap);
    if (QTableWidgetItem* item = grid_->item(int(steps_.indexOf(s.step)), s.index))
      item->setData(Qt::DecorationRole, pixmap);
  });
}

int ExpertValidationView::sampleAt(int row, int column) const {
  if (row < 0 || row >= steps_.size()) return -1;
  for (int i = int(samples_.size()) - 1; i >= 0; --i)  // a re-rendered step: the newest
    if (samples_[i].step == steps_[row] && samples_[i].index == column) return i;
  return -1;
}

void ExpertValidationView::refresh() {
  QVector<ExpertSample> samples;
  for (const RunEvent& ev : events_->events())
    if (auto s = ExpertSample::fromEvent(ev, runDir_)) samples << *s;
  if (samples.size() == samples_.size() &&
      std::equal(samples.begin(), samples.end(), samples_.begin(), [](const auto& a, const auto& b) {
        return a.step == b.step && a.index == b.index && a.video == b.video;
      }))
    return;
  samples_ = samples;
  steps_.clear();
  prompts_ = 0;
  QStringList promptTexts;
  for (const ExpertSample& s : samples_) {
    if (!steps_.contains(s.step)) steps_ << s.step;
    prompts_ = std::max(prompts_, s.index + 1);
  }
  std::sort(steps_.begin(), steps_.end());
  for (int c = 0; c < prompts_; ++c) promptTexts << QString();
  for (const ExpertSample& s : samples_)
    promptTexts[s.index] = s.image.isEmpty() ? s.prompt : tr("%1\nstart image: %2").arg(s.prompt, s.image);

  const QList<int> keep = shown_;
  thumbs_->clear();
  const QSignalBlocker block(grid_);
  grid_->clear();
  grid_->setRowCount(int(steps_.size()));
  grid_->setColumnCount(prompts_);
  for (int c = 0; c < prompts_; ++c) {
    auto* h = new QTableWidgetItem(tr("prompt %1").arg(c));
    h->setToolTip(promptTexts[c]);
    grid_->setHorizontalHeaderItem(c, h);
  }
  for (int r = 0; r < steps_.size(); ++r) {
    grid_->setVerticalHeaderItem(r, new QTableWidgetItem(tr("step %1").arg(steps_[r])));
    for (int c = 0; c < prompts_; ++c) {
      const int i = sampleAt(r, c);
      auto* item = new QTableWidgetItem;
      if (i < 0) {
        item->setFlags(Qt::NoItemFlags);
      } else {
        const ExpertSample& s = samples_[i];
        item->setText(s.video.isEmpty() ? tr("latents only") : tr("%1 s").arg(s.seconds, 0, 'g', 2));
        item->setToolTip(QStringLiteral("%1\n%2").arg(s.prompt, s.video.isEmpty() ? s.latents : s.video));
        item->setTextAlignment(Qt::AlignCenter);
        if (s.video.isEmpty()) item->setFlags(Qt::ItemIsEnabled);
        else if (const auto it = pictures_.constFind(s.video); it != pictures_.constEnd())
          item->setData(Qt::DecorationRole, *it);
        else thumbs_->request(i, s.video);
        if (keep.contains(i)) item->setSelected(true);
      }
      grid_->setItem(r, c, item);
    }
  }
  // A run opened on this tab gets its events after the tab was shown.
  if (isVisible()) playNewestIfIdle();
}

void ExpertValidationView::showEvent(QShowEvent* event) {
  QWidget::showEvent(event);
  playNewestIfIdle();
}

void ExpertValidationView::playNewestIfIdle() {
  // Opening the tab plays the newest step's prompts; decoding waits until someone looks.
  if (shown_.isEmpty() && !steps_.isEmpty()) {
    QList<QPair<int, int>> cells;
    for (int c = 0; c < std::min(prompts_, kMaxShown); ++c) cells << qMakePair(int(steps_.size()) - 1, c);
    selectCells(cells);
  }
}

void ExpertValidationView::selectCells(const QList<QPair<int, int>>& cells) {
  {
    const QSignalBlocker block(grid_);
    grid_->clearSelection();
    for (const auto& [r, c] : cells)
      if (QTableWidgetItem* item = grid_->item(r, c)) item->setSelected(true);
  }
  onSelection();
}

void ExpertValidationView::onSelection() {
  QList<int> picked;
  for (QTableWidgetItem* item : grid_->selectedItems()) {
    const int i = sampleAt(item->row(), item->column());
    if (i >= 0 && !samples_[i].video.isEmpty()) picked << i;
  }
  std::sort(picked.begin(), picked.end(), [&](int a, int b) {
    return std::make_pair(samples_[a].step, samples_[a].index) < std::make_pair(samples_[b].step, samples_[b].index);
  });
  if (picked.size() > kMaxShown) picked = picked.mid(int(picked.size()) - kMaxShown);
  if (picked == shown_) return;
  shown_ = picked;
  QList<VideoCompareView::Video> videos;
  QStringList prompts;
  QList<StartImageStrip::Image> images;  // one per prompt on the player (i2v)
  for (int i : picked) {
    const ExpertSample& s = samples_[i];
    videos << VideoCompareView::Video{s.label(), s.video, s.prompt.left(60)};
    if (!prompts.contains(s.prompt)) prompts << s.prompt;
    const StartImageStrip::Image image{s.image, tr("prompt %1").arg(s.index)};
    if (!s.image.isEmpty() && std::none_of(images.begin(), images.end(), [&](const auto& im) {
          return im.path == image.path && im.caption == image.caption;
        }))
      images << image;
  }
  startImages_->setImages(images);
  player_->setInfo(picked.isEmpty() ? QString()
                                    : tr("<b>%n video(s)</b> — %1", nullptr, int(picked.size()))
                                          .arg(prompts.join(QStringLiteral("  ·  ")).toHtmlEscaped()));
  player_->setVideos(videos);
}

}  // namespace ws
