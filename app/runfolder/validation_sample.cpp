// SPDX-License-Identifier: Apache-2.0
#include "runfolder/validation_sample.h"

#include <QDir>
#include <QFileInfo>

#include "contract/run_layout.h"

namespace ws {

std::optional<ValidationSample> ValidationSample::fromEvent(const RunEvent& ev, const QString& runDir) {
  if (ev.type != QLatin1String(contract::event_type::kValidation) || ev.dropped) return std::nullopt;
  // An expert run's validation renders one video per prompt (`latents`, `video`): not an
  // upsampler comparison, which this sample describes.
  if (ev.raw.contains("latents") && !ev.raw.contains("upsampled")) return std::nullopt;
  const auto e = contract::ValidationEvent::from_json(ev.raw);
  ValidationSample s;
  s.step = e.step;
  s.index = int(e.index);
  const QDir dir(runDir);
  auto path = [&](const std::string& given, const char* suffix, bool optional) {
    QString p = QString::fromStdString(given);
    if (p.isEmpty()) {
      p = QString::fromStdString(contract::validation_video_name(s.step, s.index, suffix));
      if (optional && !QFileInfo::exists(dir.filePath(p))) return QString();
    }
    return QDir::cleanPath(dir.absoluteFilePath(p));
  };
  s.lowres = path(e.lowres, "lowres", false);
  s.upsampled = path(e.upsampled, "upsampled", false);
  s.highres = path(e.highres, "highres", true);
  s.psnr = e.psnr;
  s.psnrLowres = e.psnr_lowres;
  s.latentMse = e.latent_mse;
  s.psnrCeiling = e.psnr_ceiling;
  s.psnrSource = e.psnr_source;
  s.psnrLowresSource = e.psnr_lowres_source;
  return s;
}

QString ValidationSample::label() const { return QStringLiteral("step %1 · val %2").arg(step).arg(index); }

}  // namespace ws
