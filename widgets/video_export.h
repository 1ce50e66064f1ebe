// SPDX-License-Identifier: Apache-2.0
// The compare player's videos as one MP4: side by side at the height of the first, each with
// its title drawn on a strip above it; a shorter video holds its last frame. The file appears
// only when complete (the encoder writes a temporary file and renames it).
#pragma once

#include <QFuture>
#include <QList>
#include <QString>

#include <atomic>
#include <functional>
#include <memory>

namespace ws {

struct ExportVideo {
  QString title;
  QString path;
};

// progress(done, total) after each frame. False with *error on failure or abort.
bool exportSideBySide(const QList<ExportVideo>& videos, const QString& outPath, QString* error,
                      const std::function<void(int, int)>& progress = {}, const std::atomic_bool* abort = nullptr);

// The same on a pool thread, for a page's Export button: the future holds "" once the file is
// written, else the error. Setting *abort stops it early.
QFuture<QString> exportSideBySideInBackground(QList<ExportVideo> videos, QString outPath,
                                              std::shared_ptr<std::atomic_bool> abort);

}  // namespace ws
