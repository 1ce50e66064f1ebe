// SPDX-License-Identifier: Apache-2.0
// Videos compared on one clock: side by side (one pane each) or as a split wipe (two of
// them in one pane with a draggable divider), with shared zoom and pan, play/pause, frame
// step, loop and scrubbing. Each video decodes on its own FrameSource thread.
#pragma once

#include <QImage>
#include <QList>
#include <QWidget>

#include "video_export.h"

class QCheckBox;
class QComboBox;
class QLabel;
class QSlider;
class QStackedWidget;
class QToolButton;

namespace ws {

class FrameSource;
class PlaybackClock;
class VideoPane;
class ViewTransform;

class VideoCompareView : public QWidget {
  Q_OBJECT
 public:
  struct Video {
    QString title;  // "upsampled", "step 500 · val 0"
    QString path;
    QString caption;  // drawn at the bottom of its pane, e.g. "PSNR 31.2 dB"
  };
  enum class Mode { SideBySide, Wipe };

  explicit VideoCompareView(QWidget* parent = nullptr);

  void setVideos(const QList<Video>& videos);
  void clear() { setVideos({}); }
  QList<Video> videos() const { return videos_; }
  void setInfo(const QString& text);  // the line above the panes

  void setMode(Mode mode);
  Mode mode() const { return mode_; }
  void setWipePair(int left, int right);  // indices into videos()

  PlaybackClock* clock() const { return clock_; }
  ViewTransform* transform() const { return transform_; }
  QList<VideoPane*> panes() const { return panes_; }  // side by side
  VideoPane* wipePane() const { return wipe_; }
  QList<FrameSource*> sources() const { return sources_; }
  // Every pane on screen shows the clock's frame.
  bool isPresentingCurrentFrame() const;
  // A window of its own with the same videos, mode and frame (F11 or its button: full screen).
  QWidget* popOut();
  // The panes as they are drawn now (side by side or the wipe), for Export Frame.
  QImage frameImage() const;
  // The videos on the player, titled, for exportSideBySide.
  QList<ExportVideo> exportList() const;

 protected:
  // Space, ←/→ and Home/End act whenever the player is on screen in the active window, unless the
  // keyboard focus is on a control that uses the key itself (a field, a button, a list...).
  bool eventFilter(QObject* watched, QEvent* event) override;
  void showEvent(QShowEvent* event) override;
  void hideEvent(QHideEvent* event) override;

 Q_SIGNALS:
  void failed(const QString& message);

 private:
  void showClockFrame();
  void updateFrameCount();
  void updateControls();
  QList<VideoPane*> visiblePanes() const;

  QList<Video> videos_;
  QList<FrameSource*> sources_;
  QList<VideoPane*> panes_;
  PlaybackClock* clock_;
  ViewTransform* transform_;
  Mode mode_ = Mode::SideBySide;

  QLabel* info_;
  QStackedWidget* stack_;
  QWidget* row_;
  VideoPane* wipe_;
  QToolButton* play_;
  QSlider* slider_;
  QLabel* frameLabel_;
  QCheckBox* loop_;
  QComboBox* modeCombo_;
  QComboBox* wipeLeft_;
  QComboBox* wipeRight_;
  QLabel* error_;
  bool filtering_ = false;
};

}  // namespace ws
