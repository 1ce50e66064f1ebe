// SPDX-License-Identifier: Apache-2.0
// What both Validation views share (the upsampler's list, the experts' grid): the run's events
// and folder, a list with a hint under it beside the synced player, the rows on the player, and
// a rebuild whenever events arrive.
#pragma once

#include <QList>
#include <QString>
#include <QWidget>

class QLabel;

namespace ws {

class RunEvents;
class VideoCompareView;

class ValidationPage : public QWidget {
  Q_OBJECT
 public:
  void setRunDir(const QString& runDir);
  VideoCompareView* player() const { return player_; }

 protected:
  ValidationPage(RunEvents* events, QWidget* parent);
  // Lays out `list`, the hint and the player, and connects the events to refresh().
  void setUp(QWidget* list, const QString& hint);
  virtual void refresh() = 0;

  RunEvents* events_;
  QString runDir_;
  QLabel* hint_ = nullptr;
  VideoCompareView* player_ = nullptr;
  QList<int> shown_;  // the samples on the player
};

}  // namespace ws
