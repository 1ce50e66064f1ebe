// SPDX-License-Identifier: Apache-2.0
// Per-frame PSNR and SSIM of a video against a reference (the compare chart), on 8-bit RGB
// frames decoded with FFmpeg. PSNR over the three channels, capped at 100 dB for identical
// frames; SSIM on luma (BT.601) with the usual 11×11 Gaussian window (σ 1.5, K1 0.01, K2 0.03).
#pragma once

#include <QString>
#include <QVector>

#include <atomic>
#include <cstdint>
#include <vector>

namespace ws {

struct FrameScores {
  QVector<double> psnr, ssim;  // one per frame compared
  double meanPsnr() const;
  double meanSsim() const;
  // PSNR of the mean squared error over all frames: the clip PSNR the engine reports.
  double pooledPsnr() const;
};

// Frames as packed RGB24, `width` × `height`.
double rgbPsnr(const uint8_t* a, const uint8_t* b, int width, int height);
double lumaSsim(const uint8_t* a, const uint8_t* b, int width, int height);

// Scores the first min(frames) frames of `video` against `reference`. False with *error when a
// file cannot be decoded or the sizes differ; *abort set stops between frames (returns false).
bool scoreVideos(const QString& video, const QString& reference, FrameScores* out, QString* error,
                 const std::atomic_bool* abort = nullptr);

}  // namespace ws
