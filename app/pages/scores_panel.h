// SPDX-License-Identifier: Apache-2.0
// The dataset page's Scores tab: "Score clips" runs the engine's `dataset score` measures (motion,
// sharpness, brightness; engine/dataset/clip_scores.h) on a worker thread with progress and
// Cancel, writing them into the rows (saved with Save); a histogram of the chosen number; and
// "Exclude the lowest N %" removes those rows (Undo remove puts them back until saved).
#pragma once

#include <QFutureWatcher>
#include <QVector>
#include <QWidget>

#include <atomic>
#include <memory>

class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QPushButton;

namespace ws {

class BarChart;
class DatasetPage;

class ScoresPanel : public QWidget {
  Q_OBJECT
 public:
  explicit ScoresPanel(DatasetPage* page);
  ~ScoresPanel() override;

  // One histogram bin per tenth of the range between the lowest and highest value.
  static constexpr int kBins = 10;

  QPushButton* scoreButton() const { return score_; }
  QPushButton* cancelButton() const { return cancel_; }
  QComboBox* field() const { return field_; }
  QDoubleSpinBox* percent() const { return percent_; }
  QPushButton* excludeButton() const { return exclude_; }
  BarChart* histogram() const { return chart_; }
  QLabel* status() const { return status_; }
  bool scoring() const { return watcher_.isRunning(); }

 public Q_SLOTS:
  // Scores every row (false when another scoring runs or nothing is open).
  bool scoreAll();
  void cancel();
  // Removes the rows below the chosen percentile of the chosen number; the count removed.
  int excludeLowest();
  void refresh();

 Q_SIGNALS:
  void scoringFinished(int scored, const QString& error);

 private:
  struct Result {
    int row = -1;
    double motion = 0, sharpness = 0, brightness = 0;
    QString error;
  };
  void scoringDone();

  DatasetPage* page_;
  QPushButton *score_, *cancel_, *exclude_;
  QComboBox* field_;
  QDoubleSpinBox* percent_;
  BarChart* chart_;
  QLabel* status_;
  QFutureWatcher<QVector<Result>> watcher_;
  std::shared_ptr<std::atomic<bool>> cancelFlag_;
  std::shared_ptr<std::atomic<int>> done_;
  QString scoredPath_;  // the dataset being scored (a result for another is dropped)
};

}  // namespace ws
