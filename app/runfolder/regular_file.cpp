// SPDX-License-Identifier: Apache-2.0
#include "runfolder/regular_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace ws {

bool openRegularFile(QFile& f, QIODevice::OpenMode mode, QString* error) {
  auto fail = [&](const QString& why) {
    if (error) *error = QStringLiteral("%1: %2").arg(f.fileName(), why);
    return false;
  };
  const int access = (mode & QIODevice::WriteOnly) ? ((mode & QIODevice::ReadOnly) ? O_RDWR : O_WRONLY) : O_RDONLY;
  const int fd = ::open(QFile::encodeName(f.fileName()).constData(), access | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return fail(QString::fromLocal8Bit(std::strerror(errno)));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return fail(QStringLiteral("not a regular file"));
  }
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);  // reads of a regular file never block anyway
  if (!f.open(fd, mode, QFileDevice::AutoCloseHandle)) {
    ::close(fd);
    return fail(f.errorString());
  }
  return true;
}

}  // namespace ws
