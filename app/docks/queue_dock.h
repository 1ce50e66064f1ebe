// SPDX-License-Identifier: Apache-2.0
// The run queue's dock: the queued runs in order with their state and estimated start, and
// what can be done to them before they start: move up or down, edit the run.yaml, retry a
// failed one, remove; pause or resume the whole queue.
#pragma once

#include <QDockWidget>

class QPushButton;
class QTableView;

namespace ws {

class RunQueueModel;

class QueueDock : public QDockWidget {
  Q_OBJECT
 public:
  QueueDock(RunQueueModel* model, QWidget* parent = nullptr);

  QTableView* view() const { return view_; }
  QPushButton* pauseButton() const { return pause_; }
  QString currentId() const;
  void selectId(const QString& id);

 public Q_SLOTS:
  void moveUp();
  void moveDown();
  void removeCurrent();
  void retryCurrent();
  void editCurrent();  // the run.yaml in a small editor, saved atomically when it still parses

 private:
  void refreshButtons();

  RunQueueModel* model_;
  QTableView* view_;
  QPushButton* up_;
  QPushButton* down_;
  QPushButton* edit_;
  QPushButton* retry_;
  QPushButton* remove_;
  QPushButton* pause_;
};

}  // namespace ws
