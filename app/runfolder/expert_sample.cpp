// SPDX-License-Identifier: Apache-2.0
#include "runfolder/expert_sample.h"

#include <QDir>

#include "contract/events.h"

namespace ws {

std::optional<ExpertSample> ExpertSample::fromEvent(const RunEvent& ev, const QString& runDir) {
  if (ev.type != QLatin1String(contract::event_type::kValidation) || ev.dropped) return std::nullopt;
  if (!ev.raw.contains("latents") || ev.raw.contains("upsampled")) return std::nullopt;
  const QDir dir(runDir);
  auto path = [&](const char* key) {
    const auto it = ev.raw.find(key);
    if (it == ev.raw.end() || !it->is_string() || it->get<std::string>().empty()) return QString();
    return QDir::cleanPath(dir.absoluteFilePath(QString::fromStdString(it->get<std::string>())));
  };
  ExpertSample s;
  s.step = ev.raw.value("step", int64_t{0});
  s.index = int(ev.raw.value("index", int64_t{0}));
  if (ev.raw.contains("prompt") && ev.raw["prompt"].is_string())
    s.prompt = QString::fromStdString(ev.raw["prompt"].get<std::string>());
  s.video = path("video");
  s.latents = path("latents");
  s.image = path("image");
  if (ev.raw.contains("seconds") && ev.raw["seconds"].is_number()) s.seconds = ev.raw["seconds"].get<double>();
  return s;
}

QString ExpertSample::label() const { return QStringLiteral("step %1 · prompt %2").arg(step).arg(index); }

}  // namespace ws
