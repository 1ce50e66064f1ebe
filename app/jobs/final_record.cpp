#include "jobs/final_record.h"

#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>

namespace ws {

bool appendSupervisorRecord(const QString& runDir, const JobResult& result) {
  if (runDir.isEmpty() || result.sawFinished) return false;
  QFile f(QDir(runDir).filePath(QStringLiteral("events.jsonl")));
  if (!f.exists() || !f.open(QIODevice::ReadWrite)) return false;
  QByteArray out;
  // A worker killed mid-write leaves a torn line: end it so our lines start clean.
  if (f.size() > 0 && f.seek(f.size() - 1) && f.read(1) != "\n") out += '\n';
  const double now = QDateTime::currentMSecsSinceEpoch() / 1000.0;
  const QString status = result.state == RunState::Cancelled ? QStringLiteral("cancelled") : QStringLiteral("failed");
  if (result.state != RunState::Completed && !result.reason.isEmpty()) {
    QJsonObject err{{QStringLiteral("type"), QStringLiteral("error")},
                    {QStringLiteral("time"), now},
                    {QStringLiteral("message"), result.reason},
                    {QStringLiteral("supervisor"), true}};
    out += QJsonDocument(err).toJson(QJsonDocument::Compact) + '\n';
  }
  QJsonObject fin{{QStringLiteral("type"), QStringLiteral("finished")},
                  {QStringLiteral("time"), now},
                  {QStringLiteral("status"), status},
                  {QStringLiteral("step"), qMax<qint64>(0, result.step)},
                  {QStringLiteral("supervisor"), true}};
  out += QJsonDocument(fin).toJson(QJsonDocument::Compact) + '\n';
  if (!f.seek(f.size())) return false;
  const bool ok = f.write(out) == out.size() && f.flush();
  f.close();
  return ok;
}

}  // namespace ws
