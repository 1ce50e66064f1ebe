// SPDX-License-Identifier: Apache-2.0
// The runs of the workspace as a sortable table; selecting one shows it on the run page.
#pragma once

#include <QDockWidget>

class QLabel;
class QSortFilterProxyModel;
class QTableView;

namespace ws {

class RunsModel;

class RunsDock : public QDockWidget {
  Q_OBJECT
 public:
  RunsDock(RunsModel* model, QWidget* parent = nullptr);

  void selectRun(const QString& runDir);
  QString currentRun() const;
  QTableView* view() const { return view_; }

 Q_SIGNALS:
  void runSelected(const QString& runDir);
  void chooseWorkspaceRequested();

 private:
  void updateWorkspaceLabel();

  RunsModel* model_;
  QSortFilterProxyModel* proxy_;
  QTableView* view_;
  QLabel* workspace_;
};

}  // namespace ws
