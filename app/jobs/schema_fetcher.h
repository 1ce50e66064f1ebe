// SPDX-License-Identifier: Apache-2.0
// The option schema of a training verb, from the worker itself (`wanstudio-engine schema
// <verb>`), so the New Run form never drifts from what the worker accepts. Cached per
// worker and verb: the answer only changes with the worker binary.
#pragma once

#include <QString>

#include <optional>

#include "option_schema.h"

namespace ws {

class SchemaFetcher {
 public:
  // nullopt with the worker's one-line message when it has no schema for `verb`.
  // `program` "" means engineExecutable().
  static std::optional<OptionSchema> fetch(const QString& verb, QString* error, const QString& program = {});
  static void clearCache();
};

}  // namespace ws
