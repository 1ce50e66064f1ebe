// SPDX-License-Identifier: Apache-2.0
#include "jobs/schema_fetcher.h"

#include <QFileInfo>
#include <QHash>
#include <QProcess>

#include "jobs/engine_locator.h"

namespace ws {
namespace {

struct Entry {
  std::optional<OptionSchema> schema;
  QString error;
};

QHash<QString, Entry>& cache() {
  static QHash<QString, Entry> c;
  return c;
}

Entry run(const QString& program, const QString& verb) {
  Entry e;
  QProcess p;
  p.setProgram(program);
  p.setArguments({QStringLiteral("schema"), verb});
  p.start();
  // A few seconds at most: the worker only loads its libraries and prints.
  if (!p.waitForStarted(10'000)) {
    e.error = QStringLiteral("cannot start %1: %2").arg(program, p.errorString());
    return e;
  }
  if (!p.waitForFinished(30'000)) {
    p.kill();
    p.waitForFinished(2000);
    e.error = QStringLiteral("%1 schema %2 did not answer within 30 s").arg(program, verb);
    return e;
  }
  if (p.exitStatus() != QProcess::NormalExit || p.exitCode() != 0) {
    const QStringList lines = QString::fromUtf8(p.readAllStandardError()).trimmed().split(QLatin1Char('\n'));
    QString msg = lines.isEmpty() ? QString() : lines.last().trimmed();
    if (msg.startsWith(QLatin1String("error: "))) msg = msg.mid(7);
    e.error =
        msg.isEmpty() ? QStringLiteral("%1 schema %2 exited with code %3").arg(program, verb).arg(p.exitCode()) : msg;
    return e;
  }
  QString why;
  e.schema = OptionSchema::fromJson(p.readAllStandardOutput(), &why);
  if (!e.schema) e.error = QStringLiteral("%1 schema %2: %3").arg(program, verb, why);
  return e;
}

}  // namespace

std::optional<OptionSchema> SchemaFetcher::fetch(const QString& verb, QString* error, const QString& program) {
  const QString exe = program.isEmpty() ? engineExecutable() : program;
  const QFileInfo fi(exe);
  // Keyed by the binary's time too: a rebuilt worker may have new options.
  const QString key =
      exe + QLatin1Char('\n') + verb + QLatin1Char('\n') + QString::number(fi.lastModified().toMSecsSinceEpoch());
  auto it = cache().find(key);
  if (it == cache().end()) it = cache().insert(key, run(exe, verb));
  if (!it->schema && error) *error = it->error;
  return it->schema;
}

void SchemaFetcher::clearCache() { cache().clear(); }

}  // namespace ws
