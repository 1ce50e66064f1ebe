// SPDX-License-Identifier: Apache-2.0
// The compare player's videos as one MP4: side by side at the height of the first, each with
// its title drawn on a strip above it; a shorter video holds its last frame. The file appears
// only when complete (the encoder writes a temporary file and renames it).
#pragma once

#include <QList>
#include <QString>

#include <atomic>
#include <functional>

namespace ws {

struct ExportVideo {
  QString title;
  QString path;
};

// progress(done, total) after each frame. False with *error on failure or abort.
bool exportSideBySide(const QList<ExportVideo>& videos, const QString& outPath, QString* error,
                      const std::function<void(int, int)>& progress = {}, const std::atomic_bool* abort = nullptr);

}  // namespace ws
