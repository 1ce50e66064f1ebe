#include "models/event_format.h"

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
  const QString& t = ev.type;
  const qint64 step = ev.step(-1);
  if (t == QLatin1String("started")) {
    QString s = QStringLiteral("started %1 run").arg(ev.string(k("job")));
    const double max = ev.number(k("max_train_steps"), 0);
    if (max > 0) s += QStringLiteral(", %1 steps").arg(qint64(max));
    const double resume = ev.number(k("resume_step"), 0);
    if (resume > 0) s += QStringLiteral(", resumed from step %1").arg(qint64(resume));
    const double world = ev.number(k("world_size"), 1);
    if (world > 1) s += QStringLiteral(", %1 processes").arg(qint64(world));
    return s;
  }
  if (t == QLatin1String("step")) return formatStep(RunEvents::StepPoint::fromEvent(ev), maxSteps);
  if (t == QLatin1String("eval")) {
    QString s = QStringLiteral("eval step %1 [%2] loss %3").arg(step).arg(ev.string(k("expert")), num(ev.number(k("loss"), std::nan(""))));
    if (ev.fields.contains(k("loss_high")))
      s += QStringLiteral(" (high %1, low %2)").arg(num(ev.number(k("loss_high"), std::nan(""))),
                                                  num(ev.number(k("loss_low"), std::nan(""))));
    return s;
  }
  if (t == QLatin1String("validation")) {
    QString s = QStringLiteral("validation step %1 #%2").arg(step).arg(qint64(ev.number(k("index"), 0)));
    if (ev.fields.contains(k("psnr"))) s += QStringLiteral("  psnr %1 dB").arg(num(ev.number(k("psnr"), 0), 4));
    if (ev.fields.contains(k("psnr_lowres")))
      s += QStringLiteral(" (low-res %1 dB)").arg(num(ev.number(k("psnr_lowres"), 0), 4));
    if (ev.fields.contains(k("latent_mse")))
      s += QStringLiteral("  latent mse %1").arg(num(ev.number(k("latent_mse"), 0)));
    const QString up = ev.string(k("upsampled"));
    if (!up.isEmpty()) s += QStringLiteral("  %1").arg(up);
    return s;
  }
  if (t == QLatin1String("checkpoint"))
    return QStringLiteral("checkpoint step %1 -> %2").arg(step).arg(ev.string(k("path")));
  if (t == QLatin1String("heartbeat")) {
    QString s = QStringLiteral("heartbeat  rss %1").arg(formatBytes(ev.number(k("rss_bytes"), -1)));
    if (ev.fields.contains(k("gpu_mem_bytes")))
      s += QStringLiteral("  gpu %1").arg(formatBytes(ev.number(k("gpu_mem_bytes"), -1)));
    return s;
  }
  if (t == QLatin1String("log"))
    return QStringLiteral("[%1] %2").arg(ev.string(k("level")), ev.string(k("message")));
  if (t == QLatin1String("error")) {
    QString s = QStringLiteral("error: %1").arg(ev.string(k("message")));
    const QString hint = ev.string(k("hint"));
    if (!hint.isEmpty()) s += QStringLiteral(" (hint: %1)").arg(hint);
    return s;
  }
  if (t == QLatin1String("finished")) {
    const QString status = ev.string(k("status"));
    return step >= 0 ? QStringLiteral("finished: %1 at step %2").arg(status).arg(step)
                     : QStringLiteral("finished: %1").arg(status);
  }
  // A type this build does not know yet: show it as it came.
  QJsonObject rest = ev.fields;
  rest.remove(k("type"));
  rest.remove(k("time"));
  return QStringLiteral("%1 %2").arg(t, QString::fromUtf8(QJsonDocument(rest).toJson(QJsonDocument::Compact)));
}

}  // namespace ws
