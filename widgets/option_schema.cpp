// SPDX-License-Identifier: Apache-2.0
#include "option_schema.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLocale>

#include <cmath>

namespace ws {
namespace {

const QStringList kTypes{QStringLiteral("bool"),   QStringLiteral("int"),  QStringLiteral("float"),
                         QStringLiteral("string"), QStringLiteral("path"), QStringLiteral("enum")};

std::optional<QVariant> scalarFromJson(const OptionSpec& s, const QJsonValue& v) {
  if (s.type == QLatin1String("bool")) {
    if (v.isBool()) return QVariant(v.toBool());
    return std::nullopt;
  }
  if (s.type == QLatin1String("int")) {
    if (!v.isDouble()) return std::nullopt;
    const double d = v.toDouble();
    if (d != std::floor(d) || std::abs(d) > 9.0e15) return std::nullopt;
    return QVariant(qlonglong(d));
  }
  if (s.type == QLatin1String("float")) {
    if (v.isDouble()) return QVariant(v.toDouble());
    return std::nullopt;
  }
  if (v.isString()) return QVariant(v.toString());
  return std::nullopt;
}

}  // namespace

std::optional<OptionSchema> OptionSchema::fromJson(const QByteArray& json, QString* error) {
  auto fail = [error](const QString& msg) {
    if (error) *error = msg;
    return std::nullopt;
  };
  QJsonParseError pe;
  const QJsonDocument doc = QJsonDocument::fromJson(json, &pe);
  if (pe.error != QJsonParseError::NoError)
    return fail(QStringLiteral("schema is not JSON: %1 at offset %2").arg(pe.errorString()).arg(pe.offset));
  const QJsonObject root = doc.object();
  if (!root.value(QLatin1StringView("options")).isArray())
    return fail(QStringLiteral("schema has no \"options\" list"));
  OptionSchema schema;
  schema.verb_ = root.value(QLatin1StringView("verb")).toString();
  schema.job_ = root.value(QLatin1StringView("job")).toString();
  for (const QJsonValue& item : root.value(QLatin1StringView("options")).toArray()) {
    const QJsonObject o = item.toObject();
    OptionSpec s;
    s.name = o.value(QLatin1StringView("name")).toString();
    s.type = o.value(QLatin1StringView("type")).toString();
    if (s.name.isEmpty()) return fail(QStringLiteral("schema option without a name"));
    if (!kTypes.contains(s.type))
      return fail(QStringLiteral("schema option %1 has unknown type \"%2\"").arg(s.name, s.type));
    s.list = o.value(QLatin1StringView("list")).toBool();
    s.required = o.value(QLatin1StringView("required")).toBool();
    s.help = o.value(QLatin1StringView("help")).toString();
    s.group = o.value(QLatin1StringView("group")).toString();
    if (s.group.isEmpty()) s.group = QStringLiteral("Options");
    for (const QJsonValue& c : o.value(QLatin1StringView("choices")).toArray()) s.choices << c.toString();
    if (o.value(QLatin1StringView("min")).isDouble()) s.min = o.value(QLatin1StringView("min")).toDouble();
    if (o.value(QLatin1StringView("max")).isDouble()) s.max = o.value(QLatin1StringView("max")).toDouble();
    s.multipleOf = o.value(QLatin1StringView("multiple_of")).toInteger();
    s.remainder = o.value(QLatin1StringView("remainder")).toInteger();
    if (s.multipleOf < 0 || (s.multipleOf > 0 && s.type != QLatin1String("int")))
      return fail(QStringLiteral("schema option %1: multiple_of needs a positive int option").arg(s.name));
    const auto def = fromJsonValue(s, o.value(QLatin1StringView("default")));
    if (!def) return fail(QStringLiteral("schema option %1: default does not fit type %2").arg(s.name, s.type));
    s.defaultValue = *def;
    schema.options_.append(s);
  }
  if (schema.options_.isEmpty()) return fail(QStringLiteral("schema lists no options"));
  return schema;
}

const OptionSpec* OptionSchema::find(const QString& name) const {
  for (const OptionSpec& s : options_)
    if (s.name == name) return &s;
  return nullptr;
}

QStringList OptionSchema::groups() const {
  QStringList out;
  for (const OptionSpec& s : options_)
    if (!out.contains(s.group)) out << s.group;
  return out;
}

std::optional<QVariant> OptionSchema::fromJsonValue(const OptionSpec& s, const QJsonValue& v) {
  if (v.isNull() || v.isUndefined()) return QVariant();
  if (!s.list) return scalarFromJson(s, v);
  if (!v.isArray()) return std::nullopt;
  QVariantList items;
  for (const QJsonValue& x : v.toArray()) {
    const auto item = scalarFromJson(s, x);
    if (!item) return std::nullopt;
    items << *item;
  }
  return QVariant(items);
}

std::optional<QVariant> OptionSchema::scalarFromText(const OptionSpec& s, const QString& raw) {
  if (!s.isNumber() && s.type != QLatin1String("bool")) return QVariant(raw);
  // The worker's grammar (1/0, yes/no, decimal integers, no nan/inf). Bounds and shape rules
  // are left to the validator, so the form can keep an out-of-range value and say why.
  contract::ValueRule r;
  r.type = *contract::type_from_name(s.type.toStdString());
  std::string err;
  const auto v = contract::parse_value(r, raw.trimmed().toStdString(), err);
  if (!v) return std::nullopt;
  if (v->is_boolean()) return QVariant(v->get<bool>());
  if (v->is_number_integer()) return QVariant(qlonglong(v->get<int64_t>()));
  return QVariant(v->get<double>());
}

QString OptionSchema::toText(const OptionSpec& s, const QVariant& value) {
  if (!value.isValid() || value.isNull()) return {};
  if (s.list) {
    QStringList parts;
    OptionSpec one = s;
    one.list = false;
    for (const QVariant& x : value.toList()) parts << toText(one, x);
    return parts.join(QStringLiteral(", "));
  }
  if (s.type == QLatin1String("bool")) return value.toBool() ? QStringLiteral("true") : QStringLiteral("false");
  if (s.type == QLatin1String("int")) return QString::number(value.toLongLong());
  if (s.type == QLatin1String("float")) return QString::number(value.toDouble(), 'g', QLocale::FloatingPointShortest);
  return value.toString();
}

bool OptionSchema::sameValue(const OptionSpec& s, const QVariant& a, const QVariant& b) {
  const bool an = !a.isValid() || a.isNull(), bn = !b.isValid() || b.isNull();
  if (s.list) {
    const QVariantList la = an ? QVariantList{} : a.toList(), lb = bn ? QVariantList{} : b.toList();
    if (la.size() != lb.size()) return false;
    OptionSpec one = s;
    one.list = false;
    for (qsizetype i = 0; i < la.size(); ++i)
      if (!sameValue(one, la[i], lb[i])) return false;
    return true;
  }
  if (an || bn) return an == bn;
  if (s.type == QLatin1String("bool")) return a.toBool() == b.toBool();
  if (s.type == QLatin1String("int")) return a.toLongLong() == b.toLongLong();
  if (s.type == QLatin1String("float")) return a.toDouble() == b.toDouble();
  return a.toString() == b.toString();
}

contract::ValueRule OptionSpec::rule() const {
  contract::ValueRule r;
  r.type = contract::type_from_name(type.toStdString()).value_or(contract::ValueType::String);
  for (const QString& c : choices) r.choices.push_back(c.toStdString());
  r.min = min;
  r.max = max;
  r.multiple_of = multipleOf;
  r.remainder = remainder;
  return r;
}

}  // namespace ws
