// SPDX-License-Identifier: Apache-2.0
#include "playback_clock.h"

#include <algorithm>
#include <cmath>

namespace ws {

PlaybackClock::PlaybackClock(QObject* parent) : QObject(parent) {
  timer_.setTimerType(Qt::PreciseTimer);
  connect(&timer_, &QTimer::timeout, this, [this] { tick(); });
  setFps(16);
}

void PlaybackClock::setFrameCount(int frames) {
  frames = std::max(0, frames);
  if (frames == frames_) return;
  frames_ = frames;
  Q_EMIT frameCountChanged(frames_);
  if (frame_ >= frames_) seek(frames_ - 1);
}

void PlaybackClock::setFps(double fps) {
  fps_ = fps > 0 && std::isfinite(fps) ? fps : 16.0;
  timer_.setInterval(std::max(1, int(std::lround(1000.0 / fps_))));
}

void PlaybackClock::play() {
  if (frames_ <= 1 || timer_.isActive()) return;
  if (!loop_ && frame_ >= frames_ - 1) seek(0);  // play again from the start
  timer_.start();
  Q_EMIT playingChanged(true);
}

void PlaybackClock::pause() {
  if (!timer_.isActive()) return;
  timer_.stop();
  Q_EMIT playingChanged(false);
}

void PlaybackClock::togglePlay() { isPlaying() ? pause() : play(); }

void PlaybackClock::seek(int frame) {
  frame = frames_ > 0 ? std::clamp(frame, 0, frames_ - 1) : 0;
  if (frame == frame_) return;
  frame_ = frame;
  Q_EMIT frameChanged(frame_);
}

void PlaybackClock::step(int frames) {
  pause();
  if (frames_ <= 0) return;
  int f = frame_ + frames;
  if (loop_) f = ((f % frames_) + frames_) % frames_;
  seek(f);
}

bool PlaybackClock::tick() {
  if (frames_ <= 0) return false;
  if (gate_ && !gate_()) return false;  // a pane still waits for its frame
  if (frame_ + 1 < frames_) {
    seek(frame_ + 1);
  } else if (loop_) {
    seek(0);
  } else {
    pause();
    return false;
  }
  return true;
}

}  // namespace ws
