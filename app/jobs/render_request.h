// SPDX-License-Identifier: Apache-2.0
// One render the Compare view asks for: a checkpoint of a run (experts → `sample`, upsampler →
// `upsample`), the input (a prompt or a video) and the settings. It knows the engine's
// arguments and the cache key: the same checkpoint files, input and settings give the same key,
// so a second look is a cache hit.
#pragma once

#include <QJsonObject>
#include <QString>
#include <QStringList>

#include <limits>

namespace ws {

struct RenderSettings {
  QString prompt;                 // experts
  QString video;                  // upsampler: any clip
  int width = 256, height = 256;  // experts; the upsampler squares to `height`
  int frames = 17;                // 4k+1
  int steps = 8;                  // experts: denoising steps
  qint64 seed = 42;               // experts
  bool ema = false;               // upsampler: the EMA weights
};

struct RenderRequest {
  QString runDir;
  qint64 step = -1;    // checkpoint-<step>
  QString job;         // "experts" | "upsampler" (the run's)
  QJsonObject config;  // the run's resolved config (its `started` event)
  RenderSettings settings;

  QString checkpointDir() const;
  QString label() const;  // "<run folder> · step N"
  // A one-line reason when the request cannot run (no checkpoint, no prompt, no VAE, ...).
  QString problem() const;
  // Hex SHA-1 of the checkpoint's weight files (path, size, modification time), the input
  // (the clip's size and time too) and every setting that changes the output.
  QString cacheKey() const;
  // The engine's arguments to write into `outDir`; `textDir` keeps encoded prompts.
  QStringList arguments(const QString& outDir, const QString& textDir) const;
};

// What a finished render left in its cache folder.
struct RenderResult {
  QString dir;
  QString video;                                           // the generated / upsampled video
  QString reference;                                       // upsampler: the high-res decode ("" for experts)
  QString lowres;                                          // upsampler: the low-res decode
  double psnr = std::numeric_limits<double>::quiet_NaN();  // upsampler, against the high-res decode
  double psnrLowres = std::numeric_limits<double>::quiet_NaN();
  double psnrCeiling = std::numeric_limits<double>::quiet_NaN();  // against the source
  double psnrSource = std::numeric_limits<double>::quiet_NaN();
  double seconds = 0;  // how long the render took
  bool cached = false;

  QJsonObject toJson() const;  // file names relative to dir
  static RenderResult fromJson(const QJsonObject& o, const QString& dir);
};

}  // namespace ws
