// SPDX-License-Identifier: Apache-2.0
// The dataset page's "Find duplicates": every clip hashed on a worker thread (the engine's
// `dataset dedupe`), then the pairs judged copies side by side, most alike first, each with its
// similarity; removing one side is the page's removal (undoable until saved).
#pragma once

#include <QDialog>
#include <QFutureWatcher>

#include <atomic>
#include <memory>
#include <vector>

class QLabel;
class QPushButton;
class QTableWidget;

namespace ws {

class DatasetModel;

class DuplicatesDialog : public QDialog {
  Q_OBJECT
 public:
  explicit DuplicatesDialog(DatasetModel* model, QWidget* parent = nullptr);
  ~DuplicatesDialog() override;

  // Hashes every row's file and lists the pairs at or above `threshold`.
  void start(double threshold = 0.85);
  bool running() const { return watcher_.isRunning(); }
  int pairCount() const { return int(pairs_.size()); }
  QTableWidget* table() const { return table_; }
  QLabel* status() const { return status_; }
  // Removes the first (side 0) or second (side 1) clip of pair `pair` from the dataset; false when
  // that row is gone already.
  bool removeSide(int pair, int side);

 Q_SIGNALS:
  void searchFinished(int pairs);

 private:
  struct Pair {
    QString a, b;  // file_path values (row numbers move when rows are removed)
    double similarity = 0;
  };
  struct Outcome {
    std::vector<Pair> pairs;
    int unreadable = 0;
  };
  void showPairs();
  int rowOf(const QString& filePath) const;

  DatasetModel* model_;
  QTableWidget* table_;
  QLabel* status_;
  QPushButton *removeFirst_, *removeSecond_;
  std::vector<Pair> pairs_;
  std::shared_ptr<std::atomic<bool>> cancel_;
  std::shared_ptr<std::atomic<int>> done_;
  QFutureWatcher<Outcome> watcher_;
};

}  // namespace ws
