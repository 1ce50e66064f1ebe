// SPDX-License-Identifier: Apache-2.0
#include "jobs/events_file_tail.h"

#include <sys/stat.h>

#include <QFile>
#include <QFileInfo>

#include "runfolder/regular_file.h"

namespace ws {

EventsFileTail::EventsFileTail(QObject* parent) : QObject(parent) {
  connect(&watcher_, &QFileSystemWatcher::fileChanged, this, &EventsFileTail::poll);
  connect(&watcher_, &QFileSystemWatcher::directoryChanged, this, &EventsFileTail::poll);
  pollTimer_.setInterval(1000);
  connect(&pollTimer_, &QTimer::timeout, this, &EventsFileTail::poll);
}

void EventsFileTail::setPollInterval(int ms) { pollTimer_.setInterval(ms); }

void EventsFileTail::setFile(const QString& path) {
  if (!watcher_.files().isEmpty()) watcher_.removePaths(watcher_.files());
  if (!watcher_.directories().isEmpty()) watcher_.removePaths(watcher_.directories());
  path_ = path;
  offset_ = 0;
  inode_ = 0;
  if (path_.isEmpty()) {
    pollTimer_.stop();
    return;
  }
  watch();
  pollTimer_.start();
  poll();
}

void EventsFileTail::watch() {
  // The directory catches the file's creation; the file itself, its appends.
  const QString dir = QFileInfo(path_).absolutePath();
  if (!watcher_.directories().contains(dir) && QFileInfo(dir).isDir()) watcher_.addPath(dir);
  if (watcher_.files().isEmpty() && QFileInfo::exists(path_)) watcher_.addPath(path_);
}

void EventsFileTail::poll() {
  if (path_.isEmpty()) return;
  watch();
  struct stat st {};
  if (::stat(QFile::encodeName(path_).constData(), &st) != 0) {
    if (offset_ > 0) {  // deleted
      offset_ = 0;
      inode_ = 0;
      Q_EMIT reset();
    }
    return;
  }
  const quint64 inode = quint64(st.st_ino);
  if ((inode_ != 0 && inode != inode_) || qint64(st.st_size) < offset_) {
    offset_ = 0;
    Q_EMIT reset();
  }
  inode_ = inode;
  if (qint64(st.st_size) == offset_) return;
  QFile f(path_);
  if (!openRegularFile(f, QIODevice::ReadOnly) || !f.seek(offset_)) return;
  const QByteArray bytes = f.readAll();
  if (bytes.isEmpty()) return;
  offset_ += bytes.size();
  Q_EMIT dataAppended(bytes);
}

}  // namespace ws
