// SPDX-License-Identifier: Apache-2.0
// Follows a growing events.jsonl (a run started by another wanstudio, a terminal, a server
// share): QFileSystemWatcher for prompt updates, plus polling because inotify misses writes
// on network file systems and the file may not exist yet.
#pragma once

#include <QByteArray>
#include <QFileSystemWatcher>
#include <QObject>
#include <QTimer>

namespace ws {

class EventsFileTail : public QObject {
  Q_OBJECT
 public:
  explicit EventsFileTail(QObject* parent = nullptr);

  void setFile(const QString& path);  // reads what is there now, then follows; "" stops
  QString file() const { return path_; }
  void setPollInterval(int ms);
  void poll();  // read what is new now

 Q_SIGNALS:
  void reset();  // the file shrank or was replaced: drop what was read and start over
  void dataAppended(const QByteArray& bytes);

 private:
  void watch();

  QFileSystemWatcher watcher_;
  QTimer pollTimer_;
  QString path_;
  qint64 offset_ = 0;
  quint64 inode_ = 0;
};

}  // namespace ws
