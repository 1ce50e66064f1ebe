// SPDX-License-Identifier: Apache-2.0
// The validation videos a run kept (its `validation` events whose files still exist), in one
// shape for both kinds of run, so that Compare can set any two validation steps side by side
// without rendering: checkpoints rotate away, the renders of every validation step stay.
#pragma once

#include <QList>
#include <QString>

#include <limits>

namespace ws {

struct KeptRender {
  qint64 step = 0;
  int index = 0;      // the prompt (experts) or validation clip (upsampler)
  QString prompt;     // experts
  QString image;      // experts: an i2v run's start image (absolute), "" for t2v
  QString video;      // the generated / upsampled video (absolute)
  QString reference;  // upsampler: the high-res decode ("" when the run wrote none)
  QString lowres;     // upsampler
  double psnr = std::numeric_limits<double>::quiet_NaN();
  double psnrLowres = std::numeric_limits<double>::quiet_NaN();
  double psnrCeiling = std::numeric_limits<double>::quiet_NaN();
  double psnrSource = std::numeric_limits<double>::quiet_NaN();
};

// Reads only the `started` and `validation` lines of events.jsonl (a long run is mostly step
// lines): renders of segments a resume dropped are left out, and so are renders whose video
// is gone. Oldest first.
QList<KeptRender> keptRenders(const QString& runDir);

}  // namespace ws
