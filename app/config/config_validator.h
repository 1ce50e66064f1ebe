// SPDX-License-Identifier: Apache-2.0
// The checks a run config gets before the studio launches it, so mistakes show next to
// their field instead of as a failed run: required options, allowed values, and the schema's
// bounds and shape rules (checked by the contract's own code, as the worker checks them), and
// input files that must exist.
// (The worker validates again; this is the fast first line.)
#pragma once

#include <QMap>
#include <QString>
#include <QVariantMap>

#include "option_schema.h"

namespace ws {

class ConfigValidator {
 public:
  // `values` holds the options a run sets (others are at their default); relative paths
  // resolve against `baseDir`. Returns one message per option with a problem.
  static QMap<QString, QString> validate(const OptionSchema& schema, const QVariantMap& values, const QString& baseDir);
  // Path options whose file or folder must already exist when set (not outputs or caches).
  static bool isInputPath(const QString& option);
};

}  // namespace ws
