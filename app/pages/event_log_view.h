// SPDX-License-Identifier: Apache-2.0
// The Events tab of a run: the event log with a level filter and a search box; follows new
// rows while scrolled to the bottom.
#pragma once

#include <QWidget>

class QComboBox;
class QLineEdit;
class QListView;

namespace ws {

class EventLevelFilter;
class EventLogModel;
class RunEvents;

class EventLogView : public QWidget {
  Q_OBJECT
 public:
  explicit EventLogView(RunEvents* events, QWidget* parent = nullptr);
  EventLevelFilter* filter() const { return filter_; }
  QComboBox* levelBox() const { return level_; }
  QListView* view() const { return view_; }

 private:
  EventLogModel* model_;
  EventLevelFilter* filter_;
  QComboBox* level_;
  QLineEdit* search_;
  QListView* view_;
};

}  // namespace ws
