// SPDX-License-Identifier: Apache-2.0
// Turns Unix signals (SIGINT, SIGTERM, ...) into a Qt signal on the main thread: the handler
// only writes the number to a socket pair (the self-pipe trick), a QSocketNotifier reads it.
#pragma once

#include <QObject>
#include <QSocketNotifier>

#include <initializer_list>

namespace ws {

class UnixSignalNotifier : public QObject {
  Q_OBJECT
 public:
  // One instance per process; the previous handlers come back when it is destroyed.
  UnixSignalNotifier(std::initializer_list<int> signos, QObject* parent = nullptr);
  ~UnixSignalNotifier() override;

 Q_SIGNALS:
  void received(int signo);

 private:
  void onReadable();

  QSocketNotifier* notifier_ = nullptr;
  QList<int> signals_;
};

}  // namespace ws
