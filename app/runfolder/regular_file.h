// SPDX-License-Identifier: Apache-2.0
// The studio's one way to open a file it reads from a run or dataset folder: only a regular file.
// A FIFO planted as a run's events.jsonl (or a device, a socket, a folder) would block the GUI
// thread in open() or never end a read; the engine's readers refuse them the same way
// (docs/design/security.md).
#pragma once
#include <QFile>
#include <QString>

namespace ws {

// Opens `f` (its fileName()) in `mode` when it names a regular file: opened non-blocking and checked
// with fstat on that same descriptor, so nothing can be swapped in between. On failure returns false
// and sets `error` ("PATH: not a regular file", or the system's reason).
bool openRegularFile(QFile& f, QIODevice::OpenMode mode, QString* error = nullptr);

}  // namespace ws
