// SPDX-License-Identifier: Apache-2.0
// One option of a training verb, as `wanstudio-engine schema <verb>` describes it. Values
// are QVariants typed by `type`: bool, qlonglong (int), double (float), QString (string,
// path, enum); a list option holds a QVariantList of those. A null QVariant means "not set".
#pragma once

#include <QString>
#include <QStringList>
#include <QVariant>

#include <optional>

#include "contract/option_values.h"

namespace ws {

struct OptionSpec {
  QString name;
  QString type;  // "bool" | "int" | "float" | "string" | "path" | "enum"
  bool list = false;
  bool required = false;
  QVariant defaultValue;  // normalised to the type; null when the option has no default
  QString help;
  QString group;
  QStringList choices;  // enum
  std::optional<double> min, max;
  qint64 multipleOf = 0, remainder = 0;  // shape rule of an int (frames 4k+1, pixels 16k)

  bool isNumber() const { return type == QLatin1String("int") || type == QLatin1String("float"); }
  // The worker's rule for one value (contract/option_values.h): the same checks on both sides.
  contract::ValueRule rule() const;
};

}  // namespace ws
