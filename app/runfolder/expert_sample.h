// SPDX-License-Identifier: Apache-2.0
// One validation video of an expert run (the experts' `validation` event): the step, the
// prompt's index and text, the video and latent files as absolute paths, an i2v run's start
// image, and how long the render took. nullopt for other events (an upsampler's validation included).
#pragma once

#include <QString>

#include <optional>

#include "runfolder/run_event.h"

namespace ws {

struct ExpertSample {
  qint64 step = 0;
  int index = 0;
  QString prompt;
  QString video;  // "" when the run had no VAE for the latents
  QString latents;
  // An image-to-video run's start image (absolute): a picture, a video whose first frame it is,
  // or an image_latent file; "" for text-to-video. The event gives it as the run's config did,
  // so a relative path means the run folder (where the studio starts its workers).
  QString image;
  double seconds = 0;

  static std::optional<ExpertSample> fromEvent(const RunEvent& ev, const QString& runDir);
  QString label() const;  // "step 500 · prompt 0"
};

}  // namespace ws
