// SPDX-License-Identifier: Apache-2.0
#include "jobs/unix_signal_notifier.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

namespace ws {
namespace {

int g_fds[2] = {-1, -1};

void onSignal(int signo) {
  const int saved = errno;
  const unsigned char b = static_cast<unsigned char>(signo);
  [[maybe_unused]] const ssize_t n = ::write(g_fds[0], &b, 1);
  errno = saved;
}

}  // namespace

UnixSignalNotifier::UnixSignalNotifier(std::initializer_list<int> signos, QObject* parent)
    : QObject(parent), signals_(signos) {
  if (g_fds[0] >= 0 || ::socketpair(AF_UNIX, SOCK_STREAM, 0, g_fds) != 0) return;
  for (int fd : g_fds) ::fcntl(fd, F_SETFD, FD_CLOEXEC);
  ::fcntl(g_fds[0], F_SETFL, O_NONBLOCK);
  notifier_ = new QSocketNotifier(g_fds[1], QSocketNotifier::Read, this);
  connect(notifier_, &QSocketNotifier::activated, this, &UnixSignalNotifier::onReadable);
  struct sigaction sa {};
  sa.sa_handler = onSignal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  for (int s : signals_) ::sigaction(s, &sa, nullptr);
}

UnixSignalNotifier::~UnixSignalNotifier() {
  if (!notifier_) return;
  for (int s : signals_) ::signal(s, SIG_DFL);
  ::close(g_fds[0]);
  ::close(g_fds[1]);
  g_fds[0] = g_fds[1] = -1;
}

void UnixSignalNotifier::onReadable() {
  unsigned char b = 0;
  if (::read(g_fds[1], &b, 1) == 1) Q_EMIT received(int(b));
}

}  // namespace ws
