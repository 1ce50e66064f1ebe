// SPDX-License-Identifier: Apache-2.0
// One validation video set of a run (the `validation` event): step, index, the low-res,
// upsampled and (optional) high-res videos as absolute paths, and the scores.
#pragma once

#include <QString>

#include <limits>
#include <optional>

#include "runfolder/run_event.h"

namespace ws {

struct ValidationSample {
  qint64 step = 0;
  int index = 0;
  QString lowres, upsampled, highres;  // absolute; highres "" when the run has none
  double psnr = std::numeric_limits<double>::quiet_NaN();
  double psnrLowres = std::numeric_limits<double>::quiet_NaN();
  double latentMse = std::numeric_limits<double>::quiet_NaN();
  // Against the source clip (NaN in runs made before they existed): the high-res decode (the
  // ceiling), the upsampled decode and the bilinear baseline.
  double psnrCeiling = std::numeric_limits<double>::quiet_NaN();
  double psnrSource = std::numeric_limits<double>::quiet_NaN();
  double psnrLowresSource = std::numeric_limits<double>::quiet_NaN();

  // Paths in the event are run-relative; missing ones fall back to the sample/ file names
  // of the run directory contract (sample/step{N}_val{i}_*.mp4). nullopt for other events.
  static std::optional<ValidationSample> fromEvent(const RunEvent& ev, const QString& runDir);
  QString label() const;  // "step 500 · val 0"
};

}  // namespace ws
