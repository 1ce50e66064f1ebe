// SPDX-License-Identifier: Apache-2.0
// What both Validation views share (the upsampler's list, the experts' grid): the run's events
// and folder, a list with a hint under it beside the synced player, the rows on the player, and
// a rebuild whenever events arrive; beside the player, the start images of i2v renders.
#pragma once

#include <QFutureWatcher>
#include <QList>
#include <QString>
#include <QWidget>

#include <atomic>
#include <memory>

class QLabel;
class QPushButton;

namespace ws {

class RunEvents;
class StartImageStrip;
class VideoCompareView;

class ValidationPage : public QWidget {
  Q_OBJECT
 public:
  void setRunDir(const QString& runDir);
  VideoCompareView* player() const { return player_; }
  // Beside the player: the start images of the image-to-video renders on it (hidden for others).
  StartImageStrip* startImages() const { return startImages_; }
  ~ValidationPage() override;

  // What the player shows, written out: the frame on screen as a PNG, or the videos side by side
  // as one MP4 (in the background; exportFinished follows). False when there is nothing to write.
  bool exportFrame(const QString& path, QString* error = nullptr);
  bool exportVideo(const QString& path);

 Q_SIGNALS:
  void exportFinished(bool ok, const QString& pathOrError);

 protected:
  ValidationPage(RunEvents* events, QWidget* parent);
  // Lays out `list`, the hint and the player, and connects the events to refresh().
  void setUp(QWidget* list, const QString& hint);
  virtual void refresh() = 0;

  RunEvents* events_;
  QString runDir_;
  QLabel* hint_ = nullptr;
  VideoCompareView* player_ = nullptr;
  StartImageStrip* startImages_ = nullptr;
  QList<int> shown_;  // the samples on the player

 private:
  QPushButton *exportFrame_ = nullptr, *exportVideo_ = nullptr;
  QLabel* exportStatus_ = nullptr;
  QFutureWatcher<QString> exportWatcher_;
  std::shared_ptr<std::atomic_bool> exportAbort_;
};

}  // namespace ws
