// SPDX-License-Identifier: Apache-2.0
#include "runfolder/kept_renders.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>

#include "runfolder/expert_sample.h"
#include "runfolder/regular_file.h"
#include "runfolder/run_events.h"
#include "runfolder/run_paths.h"
#include "runfolder/validation_sample.h"

namespace ws {

QList<KeptRender> keptRenders(const QString& runDir) {
  QFile f(runFile(runDir, contract::kEventsFile));
  if (!openRegularFile(f, QIODevice::ReadOnly)) return {};
  RunEvents events;
  // Whole lines only, and only the two kinds that matter: a cheap substring test before JSON.
  while (!f.atEnd()) {
    const QByteArray line = f.readLine();
    if (line.contains("\"validation\"") || line.contains("\"started\"")) events.appendData(line);
  }
  events.finishData();
  QList<KeptRender> out;
  for (const RunEvent& ev : events.events()) {
    KeptRender k;
    if (const auto e = ExpertSample::fromEvent(ev, runDir)) {
      k.step = e->step;
      k.index = e->index;
      k.prompt = e->prompt;
      k.video = e->video;
      k.image = e->image;
    } else if (const auto v = ValidationSample::fromEvent(ev, runDir)) {
      k.step = v->step;
      k.index = v->index;
      k.video = v->upsampled;
      k.reference = v->highres;
      k.lowres = v->lowres;
      k.psnr = v->psnr;
      k.psnrLowres = v->psnrLowres;
      k.psnrCeiling = v->psnrCeiling;
      k.psnrSource = v->psnrSource;
    } else {
      continue;
    }
    if (!k.video.isEmpty() && QFileInfo(k.video).isFile()) out << k;
  }
  return out;
}

}  // namespace ws
