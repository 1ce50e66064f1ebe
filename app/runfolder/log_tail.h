// SPDX-License-Identifier: Apache-2.0
// The last lines of a text file (logs/engine.log), read from its end so a long log costs
// no more than the lines asked for.
#pragma once

#include <QStringList>

namespace ws {

QStringList lastLines(const QString& path, int count, qint64 maxBytes = 64 * 1024);

}  // namespace ws
