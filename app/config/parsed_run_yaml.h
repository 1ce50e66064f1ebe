// SPDX-License-Identifier: Apache-2.0
// What a run YAML's text says in terms of a schema: the job, the options it sets, and what
// is wrong with it (RunYamlCodec::parse).
#pragma once

#include <QMap>
#include <QString>
#include <QStringList>
#include <QVariantMap>

namespace ws {

struct ParsedRunYaml {
  QString parseError;                 // the text is not YAML or not a mapping: nothing else is valid
  QString job;                        // "" when the YAML has no `job:`
  QVariantMap values;                 // options with a value of the right type (null = explicitly unset)
  QMap<QString, QString> typeErrors;  // option -> "line 4: expected an int, got \"abc\""
  QStringList unknownKeys;            // "line 7: unknown option foo"

  bool ok() const { return parseError.isEmpty(); }
};

}  // namespace ws
