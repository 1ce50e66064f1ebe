#include "models/run_event.h"

#include <QJsonDocument>
#include <QJsonParseError>
#include <QJsonValue>

#include <cmath>

namespace ws {

qint64 RunEvent::step(qint64 fallback) const {
  const QJsonValue v = fields.value(QLatin1StringView("step"));
  // JSON numbers arrive as doubles; steps stay far below 2^53.
  return v.isDouble() ? static_cast<qint64>(std::llround(v.toDouble())) : fallback;
}

double RunEvent::number(QLatin1StringView key, double fallback) const {
  const QJsonValue v = fields.value(key);
  return v.isDouble() ? v.toDouble() : fallback;
}

QString RunEvent::string(QLatin1StringView key) const {
  return fields.value(key).toString();
}

std::optional<RunEvent> parseEventLine(QByteArrayView line) {
  line = line.trimmed();
  if (line.isEmpty() || line.front() != '{') return std::nullopt;
  QJsonParseError err;
  const QJsonDocument doc = QJsonDocument::fromJson(line.toByteArray(), &err);
  if (err.error != QJsonParseError::NoError || !doc.isObject()) return std::nullopt;
  RunEvent ev;
  ev.fields = doc.object();
  const QJsonValue type = ev.fields.value(QLatin1StringView("type"));
  if (!type.isString() || type.toString().isEmpty()) return std::nullopt;
  ev.type = type.toString();
  ev.time = ev.fields.value(QLatin1StringView("time")).toDouble(0.0);
  return ev;
}

}  // namespace ws
