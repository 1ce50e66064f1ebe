// SPDX-License-Identifier: Apache-2.0
#include "jobs/render_job.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QSaveFile>
#include <QTimer>

#include "contract/events.h"
#include "jobs/worker_job.h"
#include "runfolder/regular_file.h"

namespace ws {
namespace {
constexpr char kResultFile[] = "result.json";
}

RenderJob::RenderJob(const RenderRequest& request, const QString& cacheDir, QObject* parent)
    : QObject(parent), request_(request), cacheDir_(cacheDir), key_(request.cacheKey()) {}

RenderJob::~RenderJob() {
  if (worker_ && worker_->isRunning()) worker_->kill();
  if (running_ && !partial_.isEmpty()) QDir(partial_).removeRecursively();
}

void RenderJob::setProgram(const QString& program) { program_ = program; }

QString RenderJob::resultDir() const { return QDir(cacheDir_).filePath(key_); }

bool RenderJob::lookup(const QString& dir, RenderResult* out) {
  QFile f(QDir(dir).filePath(QLatin1String(kResultFile)));
  if (!openRegularFile(f, QIODevice::ReadOnly)) return false;
  const QJsonDocument doc = QJsonDocument::fromJson(f.readAll());
  if (!doc.isObject()) return false;
  RenderResult r = RenderResult::fromJson(doc.object(), dir);
  if (r.video.isEmpty() || !QFileInfo::exists(r.video)) return false;
  r.cached = true;
  *out = r;
  return true;
}

void RenderJob::start() {
  RenderResult hit;
  if (lookup(resultDir(), &hit)) {
    QTimer::singleShot(0, this, [this, hit] { Q_EMIT finished(true, hit, {}); });
    return;
  }
  const QString problem = request_.problem();
  if (!problem.isEmpty()) {
    QTimer::singleShot(0, this, [this, problem] { Q_EMIT finished(false, {}, problem); });
    return;
  }
  // A partial folder of this process: two studios rendering the same key do not collide.
  partial_ = resultDir() + QStringLiteral(".partial-%1").arg(QCoreApplication::applicationPid());
  QDir(partial_).removeRecursively();
  if (!QDir().mkpath(partial_)) {
    QTimer::singleShot(0, this, [this] { Q_EMIT finished(false, {}, tr("cannot create %1").arg(partial_)); });
    return;
  }
  pending_ = RenderResult{};
  worker_ = new WorkerJob(this);
  if (!program_.isEmpty()) worker_->setProgram(program_);
  worker_->setHeartbeatTimeout(0);  // the render verbs send no heartbeats
  worker_->setCancelGrace(15'000);  // they stop within one DiT block or VAE stage of a cancel
  worker_->setArguments(request_.arguments(partial_, QDir(cacheDir_).filePath(QStringLiteral("text_embeddings"))));
  connect(worker_, &WorkerJob::eventReceived, this, &RenderJob::onEvent);
  connect(worker_, &WorkerJob::ended, this, &RenderJob::onEnded);
  running_ = true;
  clock_.start();
  Q_EMIT progress(0, tr("starting %1").arg(request_.label()));
  worker_->start();
}

void RenderJob::cancel() {
  if (worker_ && worker_->isRunning()) worker_->cancel();
}

void RenderJob::onEvent(const RunEvent& ev) {
  namespace et = contract::event_type;
  if (ev.type == QLatin1String(et::kSampleStep)) {
    const auto e = contract::SampleStepEvent::from_json(ev.raw);
    if (e.of > 0)
      Q_EMIT progress(double(e.step) / double(e.of), tr("step %1/%2 (%3 expert), %4 s left")
                                                         .arg(e.step)
                                                         .arg(e.of)
                                                         .arg(QString::fromStdString(e.expert))
                                                         .arg(e.eta_s, 0, 'f', 0));
  } else if (ev.type == QLatin1String(et::kValidation)) {
    const auto e = contract::ValidationEvent::from_json(ev.raw);
    const QDir d(partial_);
    pending_.video = d.filePath(QString::fromStdString(e.upsampled));
    pending_.reference = d.filePath(QString::fromStdString(e.highres));
    pending_.lowres = d.filePath(QString::fromStdString(e.lowres));
    pending_.psnr = e.psnr;
    pending_.psnrLowres = e.psnr_lowres;
    pending_.psnrCeiling = e.psnr_ceiling;
    pending_.psnrSource = e.psnr_source;
    Q_EMIT progress(1, tr("decoded"));
  } else if (ev.type == QLatin1String(et::kSample)) {
    const auto e = contract::SampleEvent::from_json(ev.raw);
    pending_.video = QString::fromStdString(e.video);
    Q_EMIT progress(1, tr("decoded"));
  }
}

void RenderJob::onEnded() {
  running_ = false;
  const JobResult r = worker_->result();
  if (r.state != RunState::Completed) {
    fail(r.state == RunState::Cancelled ? tr("cancelled") : r.reason);
    return;
  }
  if (pending_.video.isEmpty()) pending_.video = QDir(partial_).filePath(QStringLiteral("video.mp4"));
  if (!QFileInfo::exists(pending_.video)) {
    fail(tr("the engine ended without writing %1").arg(pending_.video));
    return;
  }
  pending_.dir = partial_;
  pending_.seconds = double(clock_.elapsed()) / 1000.0;
  QSaveFile f(QDir(partial_).filePath(QLatin1String(kResultFile)));
  if (!f.open(QIODevice::WriteOnly) || f.write(QJsonDocument(pending_.toJson()).toJson()) < 0 || !f.commit()) {
    fail(tr("cannot write the render's record in %1").arg(partial_));
    return;
  }
  // Publish the whole folder at once; another studio may have finished the same key first.
  const QString dir = resultDir();
  if (!QDir().rename(partial_, dir)) QDir(partial_).removeRecursively();
  partial_.clear();
  RenderResult done;
  if (!lookup(dir, &done)) {
    fail(tr("the render's folder %1 cannot be read").arg(dir));
    return;
  }
  done.cached = false;
  Q_EMIT finished(true, done, {});
}

void RenderJob::fail(const QString& error) {
  if (!partial_.isEmpty()) QDir(partial_).removeRecursively();
  partial_.clear();
  Q_EMIT finished(false, {}, error);
}

}  // namespace ws
