// SPDX-License-Identifier: Apache-2.0
// The Validation tab of an expert run: a grid of its validation videos, one row per step and
// one column per prompt; the selected cells (up to four) play side by side on one clock, so
// a prompt can be followed down the steps or the prompts of one step compared. Each cell
// shows its video's first frame; an image-to-video run's start images show beside the player.
#pragma once

#include <QHash>
#include <QPixmap>
#include <QVector>

#include "pages/validation_page.h"
#include "runfolder/expert_sample.h"

class QTableWidget;

namespace ws {

class RunEvents;
class ThumbnailLoader;
class VideoCompareView;

class ExpertValidationView : public ValidationPage {
  Q_OBJECT
 public:
  static constexpr int kMaxShown = 4;

  explicit ExpertValidationView(RunEvents* events, QWidget* parent = nullptr);

  const QVector<ExpertSample>& samples() const { return samples_; }
  QTableWidget* grid() const { return grid_; }
  ThumbnailLoader* thumbnails() const { return thumbs_; }
  QList<qint64> steps() const { return steps_; }  // the grid's rows
  int promptCount() const { return prompts_; }    // the grid's columns
  // Selects the cells of (step row, prompt column) pairs and plays them.
  void selectCells(const QList<QPair<int, int>>& cells);

 protected:
  void showEvent(QShowEvent* event) override;

 private:
  void refresh() override;
  void onSelection();
  void playNewestIfIdle();
  int sampleAt(int row, int column) const;  // index into samples_, -1 if none

  QVector<ExpertSample> samples_;
  QList<qint64> steps_;
  int prompts_ = 0;
  QTableWidget* grid_;
  static constexpr int kThumbEdge = 64;
  ThumbnailLoader* thumbs_;
  QHash<QString, QPixmap> pictures_;  // by video path: a rebuilt grid needs no new decode
};

}  // namespace ws
