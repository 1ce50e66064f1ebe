// SPDX-License-Identifier: Apache-2.0
#include "runfolder/run_event.h"

#include <QJsonArray>
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

QString RunEvent::string(QLatin1StringView key) const { return fields.value(key).toString(); }

namespace {

QJsonValue toQt(const contract::json& j) {
  switch (j.type()) {
    case contract::json::value_t::object: {
      QJsonObject o;
      for (auto it = j.begin(); it != j.end(); ++it) o.insert(QString::fromStdString(it.key()), toQt(it.value()));
      return o;
    }
    case contract::json::value_t::array: {
      QJsonArray a;
      for (const auto& x : j) a.append(toQt(x));
      return a;
    }
    case contract::json::value_t::string: return QString::fromStdString(j.get<std::string>());
    case contract::json::value_t::boolean: return j.get<bool>();
    case contract::json::value_t::number_integer:
    case contract::json::value_t::number_unsigned:
    case contract::json::value_t::number_float: return j.get<double>();
    default: return QJsonValue();
  }
}

}  // namespace

std::optional<RunEvent> parseEventLine(QByteArrayView line) {
  auto parsed = contract::parse_event_line(std::string_view(line.data(), static_cast<size_t>(line.size())));
  if (!parsed) return std::nullopt;
  RunEvent ev;
  ev.type = QString::fromStdString(parsed->type);
  ev.time = parsed->time;
  ev.fields = toQt(parsed->fields).toObject();
  ev.raw = std::move(parsed->fields);
  return ev;
}

}  // namespace ws
