// SPDX-License-Identifier: Apache-2.0
#include "jobs/estimate_job.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>

#include <algorithm>
#include <cmath>

#include "jobs/engine_locator.h"

namespace ws {

EstimateJob::EstimateJob(QObject* parent) : QObject(parent) {}

EstimateJob::~EstimateJob() {
  if (process_) {
    process_->disconnect(this);
    process_->kill();
    process_->waitForFinished(2000);
  }
}

bool EstimateJob::isRunning() const { return process_ && process_->state() != QProcess::NotRunning; }

QString EstimateJob::formatBytes(double bytes) {
  const double gib = bytes / (1024.0 * 1024.0 * 1024.0);
  if (gib >= 1) return QStringLiteral("%1 GiB").arg(gib, 0, 'f', gib >= 100 ? 0 : 2);
  return QStringLiteral("%1 MiB").arg(bytes / (1024.0 * 1024.0), 0, 'f', 0);
}

namespace {

// "weights 1.20 GiB", largest first, of an estimate's {"parts": [{"name", "bytes"}, ...]}.
QStringList partsOf(const QJsonObject& estimate) {
  QList<QPair<double, QString>> parts;
  for (const QJsonValue& v : estimate.value(QLatin1String("parts")).toArray()) {
    const QJsonObject p = v.toObject();
    parts.append({p.value(QLatin1String("bytes")).toDouble(), p.value(QLatin1String("name")).toString()});
  }
  std::sort(parts.begin(), parts.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  QStringList out;
  for (const auto& [bytes, name] : parts) out << QStringLiteral("%1 %2").arg(name, EstimateJob::formatBytes(bytes));
  return out;
}

}  // namespace

QString FitSuggestion::words() const {
  QStringList out;
  for (auto it = changes.cbegin(); it != changes.cend(); ++it) {
    const QVariant& v = *it;
    QString text;
    if (v.typeId() == QMetaType::Bool) text = v.toBool() ? QStringLiteral("true") : QStringLiteral("false");
    else if (v.typeId() == QMetaType::Double && v.toDouble() == std::floor(v.toDouble()))
      text = QString::number(qlonglong(v.toDouble()));
    else text = v.toString();
    out << QStringLiteral("%1 %2").arg(it.key(), text);
  }
  return out.join(QStringLiteral(", "));
}

MemoryEstimateResult EstimateJob::parse(const QByteArray& out, int exitCode, const QByteArray& err) {
  MemoryEstimateResult r;
  const QList<QByteArray> lines = out.trimmed().split('\n');
  const QJsonObject j = QJsonDocument::fromJson(lines.isEmpty() ? QByteArray() : lines.last()).object();
  if (exitCode != 0 || j.isEmpty() || j.contains(QLatin1String("error"))) {
    r.error = j.value(QLatin1String("error")).toString();
    if (r.error.isEmpty()) {
      const QList<QByteArray> e = err.trimmed().split('\n');
      r.error = e.isEmpty() ? QString() : QString::fromUtf8(e.last());
      if (r.error.startsWith(QLatin1String("error: "))) r.error = r.error.mid(7);
    }
    if (r.error.isEmpty()) r.error = QStringLiteral("the estimate failed (exit code %1)").arg(exitCode);
    return r;
  }
  r.ok = true;
  r.totalBytes = j.value(QLatin1String("total_bytes")).toDouble();
  r.machineBytes = j.value(QLatin1String("machine_bytes")).toDouble();
  r.fits = j.value(QLatin1String("fits")).toBool(true);
  r.parts = partsOf(j.value(QLatin1String("estimate")).toObject());
  r.gpu = j.value(QLatin1String("device")).toString() == QLatin1String("cuda");
  const QJsonObject host = j.value(QLatin1String("host")).toObject();
  r.hostBytes = host.value(QLatin1String("total_bytes")).toDouble();
  r.hostParts = partsOf(host);
  for (const QJsonValue& v : j.value(QLatin1String("to_fit")).toArray()) {
    const QJsonObject w = v.toObject();
    FitSuggestion f;
    f.changes = w.value(QLatin1String("changes")).toObject().toVariantMap();
    f.deviceBytes = w.value(QLatin1String("device_bytes")).toDouble();
    f.hostBytes = w.value(QLatin1String("host_bytes")).toDouble();
    f.fits = w.value(QLatin1String("fits")).toBool();
    if (!f.changes.isEmpty()) r.toFit << f;
  }
  return r;
}

void EstimateJob::start(const QString& yamlText, int processes, const QString& gpuMemory) {
  if (process_) {
    process_->disconnect(this);  // only the latest request answers
    process_->kill();
    process_->deleteLater();
  }
  scratch_ = std::make_unique<QTemporaryDir>();
  const QString path = scratch_->filePath(QStringLiteral("run.yaml"));
  QFile f(path);
  if (!scratch_->isValid() || !f.open(QIODevice::WriteOnly) || f.write(yamlText.toUtf8()) < 0) {
    MemoryEstimateResult r;
    r.error = QStringLiteral("cannot write a scratch copy of the run file");
    Q_EMIT finished(r);
    return;
  }
  f.close();
  auto* p = new QProcess(this);
  process_ = p;
  connect(p, &QProcess::finished, this, [this, p](int code, QProcess::ExitStatus status) {
    const MemoryEstimateResult r =
        parse(p->readAllStandardOutput(), status == QProcess::NormalExit ? code : -1, p->readAllStandardError());
    p->deleteLater();
    Q_EMIT finished(r);
  });
  connect(p, &QProcess::errorOccurred, this, [this, p](QProcess::ProcessError e) {
    if (e != QProcess::FailedToStart) return;
    MemoryEstimateResult r;
    r.error = QStringLiteral("cannot start %1: %2").arg(p->program(), p->errorString());
    p->deleteLater();
    Q_EMIT finished(r);
  });
  QStringList args{QStringLiteral("estimate"), QStringLiteral("--config"), path, QStringLiteral("--nproc"),
                   QString::number(std::max(1, processes))};
  if (!gpuMemory.isEmpty())
    args << QStringLiteral("--device") << QStringLiteral("cuda") << QStringLiteral("--device_memory") << gpuMemory;
  p->start(engineExecutable(), args);
}

}  // namespace ws
