// SPDX-License-Identifier: Apache-2.0
#include "runfolder/run_lock.h"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <QFile>
#include <QStringList>

#include "contract/run_layout.h"

namespace ws {

qint64 runLockHolder(const QString& runDir) {
  struct stat st {};
  const QByteArray lock = (runDir + QLatin1Char('/') + QLatin1String(contract::kLockFile)).toLocal8Bit();
  if (::stat(lock.constData(), &st) != 0) return 0;
  QFile locks(QStringLiteral("/proc/locks"));
  if (!locks.open(QIODevice::ReadOnly | QIODevice::Text)) return 0;
  // "1: FLOCK  ADVISORY  WRITE 4242 08:01:131090 0 EOF" (a "->" marks a waiter, not a holder).
  const QString device = QStringLiteral("%1:%2:%3")
                             .arg(major(st.st_dev), 2, 16, QLatin1Char('0'))
                             .arg(minor(st.st_dev), 2, 16, QLatin1Char('0'))
                             .arg(qulonglong(st.st_ino));
  // On an overlay filesystem the kernel names the lower device: the inode alone then decides.
  const QString inode = QLatin1Char(':') + QString::number(qulonglong(st.st_ino));
  qint64 byInode = 0;
  for (const QByteArray& raw : locks.readAll().split('\n')) {
    const QStringList f = QString::fromLatin1(raw).split(QLatin1Char(' '), Qt::SkipEmptyParts);
    if (f.size() < 6 || f.at(1) == QLatin1String("->")) continue;
    if (f.at(5).compare(device, Qt::CaseInsensitive) == 0) return f.at(4).toLongLong();
    if (!byInode && f.at(5).endsWith(inode) && f.at(5).count(QLatin1Char(':')) == 2) byInode = f.at(4).toLongLong();
  }
  return byInode;
}

}  // namespace ws
