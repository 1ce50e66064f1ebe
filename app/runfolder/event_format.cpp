// SPDX-License-Identifier: Apache-2.0
#include "runfolder/event_format.h"

#include <QJsonDocument>

#include <cmath>

namespace ws {
namespace {

QLatin1StringView k(const char* s) { return QLatin1StringView(s); }

QString num(double v, int precision = 4) {
  return std::isfinite(v) ? QString::number(v, 'g', precision) : QStringLiteral("nan");
}

}  // namespace

LogLevel eventLevel(const RunEvent& ev) {
  const QString& t = ev.type;
  if (t == QLatin1String("error")) return LogLevel::Error;
  if (t == QLatin1String("finished"))
    return ev.string(k("status")) == QLatin1String("failed") ? LogLevel::Error : LogLevel::Info;
  if (t == QLatin1String("log")) {
    const QString level = ev.string(k("level"));
    if (level == QLatin1String("error")) return LogLevel::Error;
    if (level == QLatin1String("warning")) return LogLevel::Warning;
    if (level == QLatin1String("debug")) return LogLevel::Debug;
    return LogLevel::Info;
  }
  if (t == QLatin1String("step") || t == QLatin1String("heartbeat")) return LogLevel::Step;
  return LogLevel::Info;
}

QString formatDuration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return QStringLiteral("?");
  const qint64 s = std::llround(seconds);
  if (s >= 3600) return QStringLiteral("%1h%2m").arg(s / 3600).arg((s % 3600) / 60, 2, 10, QChar('0'));
  if (s >= 60) return QStringLiteral("%1m%2s").arg(s / 60).arg(s % 60, 2, 10, QChar('0'));
  return QStringLiteral("%1s").arg(s);
}

QString formatBytes(double bytes) {
  if (!std::isfinite(bytes) || bytes < 0) return QStringLiteral("?");
  const char* units[] = {"B", "KB", "MB", "GB", "TB"};
  int u = 0;
  while (bytes >= 1000 && u < 4) {
    bytes /= 1000;
    ++u;
  }
  return QStringLiteral("%1 %2").arg(QString::number(bytes, 'f', u == 0 ? 0 : 1), QLatin1String(units[u]));
}

QString formatStep(const RunEvents::StepPoint& p, qint64 maxSteps) {
  QString s = QStringLiteral("step %1").arg(p.step);
  if (maxSteps > 0) s += QStringLiteral("/%1").arg(maxSteps);
  if (!p.expert.isEmpty() && p.expert != QLatin1String("upsampler")) s += QStringLiteral(" [%1]").arg(p.expert);
  s += QStringLiteral("  loss %1  lr %2  grad %3").arg(num(p.loss, 6), num(p.lr, 3), num(p.gradNorm, 4));
  if (std::isfinite(p.samplesPerS)) s += QStringLiteral("  %1 clips/s").arg(num(p.samplesPerS, 3));
  if (std::isfinite(p.etaS)) s += QStringLiteral("  eta %1").arg(formatDuration(p.etaS));
  if (p.dropped) s += QStringLiteral("  (discarded by a resume)");
  return s;
}

QString formatEvent(const RunEvent& ev, qint64 maxSteps) {
  namespace et = contract::event_type;
  const QString& t = ev.type;
  auto str = [](const std::string& x) { return QString::fromStdString(x); };
  if (t == QLatin1String(et::kStarted)) {
    const auto e = contract::StartedEvent::from_json(ev.raw);
    QString s = QStringLiteral("started %1 run").arg(str(e.job));
    if (e.max_train_steps > 0) s += QStringLiteral(", %1 steps").arg(e.max_train_steps);
    if (e.resume_step > 0) s += QStringLiteral(", resumed from step %1").arg(e.resume_step);
    if (e.world_size > 1) s += QStringLiteral(", %1 processes").arg(e.world_size);
    return s;
  }
  if (t == QLatin1String(et::kStep)) return formatStep(RunEvents::StepPoint::fromEvent(ev), maxSteps);
  if (t == QLatin1String(et::kEval)) {
    const auto e = contract::EvalEvent::from_json(ev.raw);
    QString s = QStringLiteral("eval step %1 [%2] loss %3").arg(e.step).arg(str(e.expert), num(e.loss));
    if (e.loss_high || e.loss_low)
      s += QStringLiteral(" (high %1, low %2)")
               .arg(num(e.loss_high.value_or(std::nan(""))), num(e.loss_low.value_or(std::nan(""))));
    return s;
  }
  if (t == QLatin1String(et::kValidation)) {
    const auto e = contract::ValidationEvent::from_json(ev.raw);
    QString s = QStringLiteral("validation step %1 #%2").arg(e.step).arg(e.index);
    if (std::isfinite(e.psnr)) s += QStringLiteral("  psnr %1 dB").arg(num(e.psnr, 4));
    if (std::isfinite(e.psnr_lowres)) s += QStringLiteral(" (low-res %1 dB)").arg(num(e.psnr_lowres, 4));
    if (std::isfinite(e.latent_mse)) s += QStringLiteral("  latent mse %1").arg(num(e.latent_mse));
    if (!e.upsampled.empty()) s += QStringLiteral("  %1").arg(str(e.upsampled));
    return s;
  }
  if (t == QLatin1String(et::kCheckpoint)) {
    const auto e = contract::CheckpointEvent::from_json(ev.raw);
    return QStringLiteral("checkpoint step %1 -> %2").arg(e.step).arg(str(e.path));
  }
  if (t == QLatin1String("best")) {  // keep_best: a checkpoint became the best so far
    return QStringLiteral("best so far: %1 (%2 %3)")
        .arg(ev.string(QLatin1StringView("path")), ev.string(QLatin1StringView("metric")),
             num(ev.number(QLatin1StringView("value"), std::nan(""))));
  }
  if (t == QLatin1String(et::kHeartbeat)) {
    const auto e = contract::HeartbeatEvent::from_json(ev.raw);
    QString s = QStringLiteral("heartbeat  rss %1").arg(formatBytes(double(e.rss_bytes)));
    if (e.gpu_mem_bytes) s += QStringLiteral("  gpu %1").arg(formatBytes(double(*e.gpu_mem_bytes)));
    return s;
  }
  if (t == QLatin1String(et::kLog)) {
    const auto e = contract::LogEvent::from_json(ev.raw);
    return QStringLiteral("[%1] %2").arg(str(e.level), str(e.message));
  }
  if (t == QLatin1String(et::kError)) {
    const auto e = contract::ErrorEvent::from_json(ev.raw);
    QString s = QStringLiteral("error: %1").arg(str(e.message));
    if (!e.hint.empty()) s += QStringLiteral(" (hint: %1)").arg(str(e.hint));
    return s;
  }
  if (t == QLatin1String(et::kFinished)) {
    const auto e = contract::FinishedEvent::from_json(ev.raw);
    return e.step >= 0 ? QStringLiteral("finished: %1 at step %2").arg(str(e.status)).arg(e.step)
                       : QStringLiteral("finished: %1").arg(str(e.status));
  }
  // A type this build does not know yet: show it as it came.
  QJsonObject rest = ev.fields;
  rest.remove(k("type"));
  rest.remove(k("time"));
  return QStringLiteral("%1 %2").arg(t, QString::fromUtf8(QJsonDocument(rest).toJson(QJsonDocument::Compact)));
}

}  // namespace ws
