// SPDX-License-Identifier: Apache-2.0
// A run YAML (docs/design/architecture.md "Run configs"): flat `key: value` options plus `job`.
// The app reads only what it needs to start and describe a run; the worker validates it.
#pragma once

#include <QList>
#include <QPair>
#include <QString>

#include <optional>

namespace ws {

struct RunConfig {
  QString path;                            // absolute
  QString job;                             // "upsampler" | "experts" | "vae" | "" when absent
  QString outputDir;                       // absolute (relative ones resolve against the YAML's folder), or ""
  QList<QPair<QString, QString>> options;  // top-level keys in file order, values as text

  // nullopt with a one-line *error naming the file (and line) when it cannot be used.
  static std::optional<RunConfig> load(const QString& path, QString* error);
  // "upsampler" -> "train-upsampler", "experts" -> "train-experts", "vae" -> "train-vae"; else "".
  static QString verbForJob(const QString& job);
  static QString knownJobs();  // "upsampler, experts or vae", for messages
};

}  // namespace ws
