// SPDX-License-Identifier: Apache-2.0
// Clip scores (engine/dataset/clip_scores.h): motion from OpenCV's Farneback flow as VideoX-Fun's
// motion filter computes it, sharpness and brightness. Skipped in a build without OpenCV.
#include <QtTest/QtTest>

#include <algorithm>
#include <cmath>

#include "core/fs.h"
#include "dataset/clip_scores.h"
#include "video/video_encode.h"
#include "video/video_resize.h"

using namespace ws;

namespace {

// A smooth pattern (no period under 40 pixels, so a step of 16 is unambiguous) seen through a
// window that moves `speed` pixels right per frame.
std::vector<video::RgbFrame> pan(int frames, int speed, int level = 128) {
  const int w = 160, h = 96;
  std::vector<video::RgbFrame> out;
  for (int i = 0; i < frames; ++i) {
    video::RgbFrame f(w, h);
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x) {
        const double u = x + i * speed, tau = 2 * M_PI;
        const double v =
            level + 30 * std::sin(tau * u / 57) * std::cos(tau * y / 43) + 20 * std::sin(tau * (u + y) / 71);
        uint8_t* p = f.pixel(x, y);
        p[0] = p[1] = p[2] = uint8_t(std::clamp(v, 0.0, 255.0));
      }
    out.push_back(std::move(f));
  }
  return out;
}

void write(const std::string& path, const std::vector<video::RgbFrame>& frames, int crf) {
  video::EncodeOptions o;
  o.fps = 16;
  o.crf = crf;
  video::write_video(path, frames, o);
}

}  // namespace

class TestClipScores : public QObject {
  Q_OBJECT
  QTemporaryDir tmp_;
  std::string dir() const { return tmp_.path().toStdString(); }

 private Q_SLOTS:
  // Motion grows with the pan's speed; a still clip has none; blur lowers sharpness; brightness is the level.
  void clipScores() {
    if (!dataset::clip_scores_built()) QSKIP("built without OpenCV's optical flow");
    const std::string still = fs::join(dir(), "still.mp4"), slow = fs::join(dir(), "slow.mp4"),
                      fast = fs::join(dir(), "fast.mp4"), dark = fs::join(dir(), "dark.mp4");
    write(still, pan(33, 0), 10);
    write(slow, pan(33, 1), 10);
    write(fast, pan(33, 2), 10);
    write(dark, pan(33, 0, 80), 10);
    const auto s0 = dataset::score_clip(still), s1 = dataset::score_clip(slow), s2 = dataset::score_clip(fast),
               sd = dataset::score_clip(dark);
    qInfo("motion still %.3f slow %.3f fast %.3f; sharpness %.1f; brightness %.1f dark %.1f", s0.motion, s1.motion,
          s2.motion, s0.sharpness, s0.brightness, sd.brightness);
    // 16 fps sampled at 2 fps: every 8th frame, so the pans move 8 and 16 pixels per pair. Farneback
    // sees about 0.35 of such a step on a pattern this smooth (OpenCV's own numbers): the score ranks
    // clips, it is not pixels.
    QCOMPARE(s1.sampled_frames, 5);
    QVERIFY(s1.motion > 1.0);
    QVERIFY(s0.motion < 0.05 * s1.motion);
    QVERIFY(s2.motion > 1.4 * s1.motion);
    QVERIFY(std::abs(s0.brightness - 128) < 8 && std::abs(sd.brightness - 80) < 8);
    // An 8-pixel checkerboard and the same board through a 4x smaller copy.
    std::vector<video::RgbFrame> board, soft;
    for (int i = 0; i < 17; ++i) {
      video::RgbFrame f(160, 96);
      for (int y = 0; y < 96; ++y)
        for (int x = 0; x < 160; ++x) std::fill_n(f.pixel(x, y), 3, uint8_t(((x / 8 + y / 8) % 2) ? 200 : 50));
      soft.push_back(video::resize_rgb(video::resize_rgb(f, 40, 24), 160, 96));
      board.push_back(std::move(f));
    }
    const std::string sharp = fs::join(dir(), "board.mp4"), blurred = fs::join(dir(), "blurred.mp4");
    write(sharp, board, 10);
    write(blurred, soft, 10);
    const double crisp = dataset::score_clip(sharp).sharpness;
    qInfo("sharpness board %.1f blurred %.1f", crisp, dataset::score_clip(blurred).sharpness);
    QVERIFY(dataset::score_clip(blurred).sharpness < 0.5 * crisp);
  }
};

QTEST_GUILESS_MAIN(TestClipScores)
#include "test_clip_scores.moc"
