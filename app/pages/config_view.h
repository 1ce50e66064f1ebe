// SPDX-License-Identifier: Apache-2.0
// The Config tab of a run: the resolved options, from the last `started` event or run.yaml.
#pragma once

#include <QJsonObject>
#include <QWidget>

class QLabel;
class QTreeWidget;

namespace ws {

class ConfigView : public QWidget {
  Q_OBJECT
 public:
  explicit ConfigView(QWidget* parent = nullptr);
  // Shows `config` when it is not empty, else the run.yaml of runDir, else says there is none.
  void showConfig(const QString& runDir, const QJsonObject& config);
  int optionCount() const;

 private:
  QLabel* source_;
  QTreeWidget* tree_;
  QJsonObject shown_;
  QString shownDir_;
};

}  // namespace ws
