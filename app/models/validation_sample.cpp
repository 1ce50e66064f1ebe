#include "models/validation_sample.h"

#include <QDir>
#include <QFileInfo>

namespace ws {

std::optional<ValidationSample> ValidationSample::fromEvent(const RunEvent& ev, const QString& runDir) {
  if (ev.type != QLatin1String("validation") || ev.dropped) return std::nullopt;
  ValidationSample s;
  s.step = ev.step(0);
  s.index = int(ev.number(QLatin1StringView("index"), 0));
  const QDir dir(runDir);
  auto path = [&](QLatin1StringView key, const char* suffix, bool optional) {
    QString p = ev.string(key);
    if (p.isEmpty()) {
      p = QStringLiteral("sample/step%1_val%2_%3.mp4").arg(s.step).arg(s.index).arg(QLatin1String(suffix));
      if (optional && !QFileInfo::exists(dir.filePath(p))) return QString();
    }
    return QDir::cleanPath(dir.absoluteFilePath(p));
  };
  s.lowres = path(QLatin1StringView("lowres"), "lowres", false);
  s.upsampled = path(QLatin1StringView("upsampled"), "upsampled", false);
  s.highres = path(QLatin1StringView("highres"), "highres", true);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  s.psnr = ev.number(QLatin1StringView("psnr"), nan);
  s.psnrLowres = ev.number(QLatin1StringView("psnr_lowres"), nan);
  s.latentMse = ev.number(QLatin1StringView("latent_mse"), nan);
  return s;
}

QString ValidationSample::label() const { return QStringLiteral("step %1 · val %2").arg(step).arg(index); }

}  // namespace ws
