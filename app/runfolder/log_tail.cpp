// SPDX-License-Identifier: Apache-2.0
#include "runfolder/log_tail.h"
#include "runfolder/regular_file.h"

#include <QFile>

namespace ws {

QStringList lastLines(const QString& path, int count, qint64 maxBytes) {
  QFile f(path);
  if (count <= 0 || !openRegularFile(f, QIODevice::ReadOnly)) return {};
  const qint64 start = std::max<qint64>(0, f.size() - maxBytes);
  if (!f.seek(start)) return {};
  QByteArray bytes = f.readAll();
  // Reading from the middle: the first line is probably cut.
  if (start > 0) {
    const qsizetype nl = bytes.indexOf('\n');
    bytes = nl < 0 ? QByteArray() : bytes.mid(nl + 1);
  }
  QStringList lines;
  for (const QByteArray& l : bytes.split('\n')) {
    QString s = QString::fromUtf8(l);
    if (s.endsWith(QLatin1Char('\r'))) s.chop(1);
    lines << s;
  }
  while (!lines.isEmpty() && lines.last().trimmed().isEmpty()) lines.removeLast();
  return lines.mid(std::max<qsizetype>(0, lines.size() - count));
}

}  // namespace ws
