// SPDX-License-Identifier: Apache-2.0
// Run YAML text <-> option values of a schema (docs/design/architecture.md "Run configs": flat
// `job:` plus options under their flag names). Writes only what it is given, in schema order.
#pragma once

#include <QString>
#include <QVariantMap>

#include "config/parsed_run_yaml.h"
#include "option_schema.h"

namespace ws {

class RunYamlCodec {
 public:
  static QString write(const OptionSchema& schema, const QString& job, const QVariantMap& values,
                       const QString& comment = {});
  static ParsedRunYaml parse(const OptionSchema& schema, const QString& text);
  // Relative path options made absolute against `dir` (a preset's folder).
  static QVariantMap absolutePaths(const OptionSchema& schema, const QVariantMap& values, const QString& dir);
};

}  // namespace ws
