// SPDX-License-Identifier: Apache-2.0
// A file of a run folder as a Qt path. The names are the contract's (contract/run_layout.h):
// runFile(dir, contract::kEventsFile), runFile(dir, contract::kRunYaml).
#pragma once
#include <QDir>
#include <QString>

#include "contract/run_layout.h"

namespace ws {

inline QString runFile(const QString& runDir, const char* name) {
  return QDir(runDir).filePath(QString::fromUtf8(name));
}

}  // namespace ws
