// SPDX-License-Identifier: Apache-2.0
#include "runfolder/run_event.h"

#include <QJsonArray>
#include <QJsonValue>

#include <string>

namespace ws {
namespace {

// A QLatin1StringView need not end with a NUL: the contract's lookups take a C string.
std::string key_of(QLatin1StringView key) { return std::string(key.data(), static_cast<size_t>(key.size())); }

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

qint64 RunEvent::step(qint64 fallback) const { return contract::integer_field(raw, "step", fallback); }

double RunEvent::number(QLatin1StringView key, double fallback) const {
  return contract::number_field(raw, key_of(key).c_str(), fallback);
}

QString RunEvent::string(QLatin1StringView key) const {
  return QString::fromStdString(contract::string_field(raw, key_of(key).c_str()));
}

std::optional<RunEvent> parseEventLine(QByteArrayView line) {
  auto parsed = contract::parse_event_line(std::string_view(line.data(), static_cast<size_t>(line.size())));
  if (!parsed) return std::nullopt;
  RunEvent ev;
  ev.type = QString::fromStdString(parsed->type);
  ev.time = parsed->time;
  // Step lines, the bulk of a run, are read through `raw` alone: no Qt copy of each.
  if (parsed->type != contract::event_type::kStep) ev.fields = toQt(parsed->fields).toObject();
  ev.raw = std::move(parsed->fields);
  return ev;
}

}  // namespace ws
