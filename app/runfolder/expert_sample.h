// SPDX-License-Identifier: Apache-2.0
// One validation video of an expert run (the experts' `validation` event): the step, the
// prompt's index and text, the video and latent files as absolute paths, and how long the
// render took. nullopt for other events (an upsampler's validation included).
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
  double seconds = 0;

  static std::optional<ExpertSample> fromEvent(const RunEvent& ev, const QString& runDir);
  QString label() const;  // "step 500 · prompt 0"
};

}  // namespace ws
