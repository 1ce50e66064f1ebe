// SPDX-License-Identifier: Apache-2.0
// The option schema of one training verb (`wanstudio-engine schema train-upsampler`),
// parsed from its JSON, plus the value conversions every editor of it shares.
#pragma once

#include <QByteArray>
#include <QVector>

#include <optional>

#include "option_spec.h"

class QJsonValue;

namespace ws {

class OptionSchema {
 public:
  // nullopt with a one-line *error when the JSON is not a schema.
  static std::optional<OptionSchema> fromJson(const QByteArray& json, QString* error);

  QString verb() const { return verb_; }
  QString job() const { return job_; }
  const QVector<OptionSpec>& options() const { return options_; }
  const OptionSpec* find(const QString& name) const;
  QStringList groups() const;  // in order of first appearance

  // A JSON value as the option's type; nullopt when it does not fit (a string for an int).
  static std::optional<QVariant> fromJsonValue(const OptionSpec& spec, const QJsonValue& v);
  // One scalar of the option's type from text ("42", "true", "1e-4"); nullopt when it does not parse.
  static std::optional<QVariant> scalarFromText(const OptionSpec& spec, const QString& text);
  // A value as text for editors and YAML ("1e-05", "true", "a, b").
  static QString toText(const OptionSpec& spec, const QVariant& value);
  // Equality that treats 1 and 1.0, [] and null-list alike.
  static bool sameValue(const OptionSpec& spec, const QVariant& a, const QVariant& b);

 private:
  QString verb_, job_;
  QVector<OptionSpec> options_;
};

}  // namespace ws
