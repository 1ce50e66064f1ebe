// SPDX-License-Identifier: Apache-2.0
// The one clock every pane of a video comparison follows: frame index, play/pause, frame
// step, loop, seek. A tick advances only when the gate says every pane shows the current
// frame, so a slow decoder stalls all panes together instead of letting them drift apart.
#pragma once

#include <QObject>
#include <QTimer>

#include <functional>

namespace ws {

class PlaybackClock : public QObject {
  Q_OBJECT
 public:
  explicit PlaybackClock(QObject* parent = nullptr);

  void setFrameCount(int frames);
  int frameCount() const { return frames_; }
  void setFps(double fps);  // <= 0: 16 (Wan 2.2's rate)
  double fps() const { return fps_; }
  void setLoop(bool loop) { loop_ = loop; }
  bool loop() const { return loop_; }
  void setGate(std::function<bool()> ready) { gate_ = std::move(ready); }

  int frame() const { return frame_; }
  bool isPlaying() const { return timer_.isActive(); }

 public Q_SLOTS:
  void play();
  void pause();
  void togglePlay();
  void seek(int frame);   // clamped
  void step(int frames);  // pauses; wraps when looping
  // One playback step (the timer's): the next frame, wrapping or stopping at the end.
  // False when the gate held it back.
  bool tick();

 Q_SIGNALS:
  void frameChanged(int frame);
  void playingChanged(bool playing);
  void frameCountChanged(int frames);

 private:
  QTimer timer_;
  std::function<bool()> gate_;
  int frames_ = 0;
  int frame_ = 0;
  double fps_ = 16;
  bool loop_ = true;
};

}  // namespace ws
