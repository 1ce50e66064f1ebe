// SPDX-License-Identifier: Apache-2.0
#include "thumbnail_loader.h"

#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QMutexLocker>
#include <QSaveFile>
#include <QStandardPaths>

#include <cstring>

#ifdef WANSTUDIO_HAVE_VIDEO
#include "video/video_decode.h"
#endif

namespace ws {

namespace {

// The thumbnail of one file: by default the middle frame, so fades from black do not hide the content.
QImage decode_thumbnail(const QString& path, int edge, bool first, QString* error) {
#ifdef WANSTUDIO_HAVE_VIDEO
  try {
    video::VideoReader reader(path.toStdString());
    const int64_t n = reader.info().still_image ? 1 : reader.frame_count();
    const video::RgbFrame f = reader.read(n > 1 && !first ? n / 2 : 0);
    QImage image(f.width, f.height, QImage::Format_RGB888);
    for (int y = 0; y < f.height; ++y) std::memcpy(image.scanLine(y), f.pixel(0, y), size_t(f.width) * 3);
    return image.scaled(edge, edge, Qt::KeepAspectRatio, Qt::SmoothTransformation);
  } catch (const std::exception& e) {
    *error = QString::fromUtf8(e.what());
    return {};
  }
#else
  Q_UNUSED(path);
  Q_UNUSED(edge);
  Q_UNUSED(first);
  *error = QStringLiteral("this build has no video decoding (WANSTUDIO_VIDEO=OFF)");
  return {};
#endif
}

}  // namespace

ThumbnailLoader::ThumbnailLoader(int edge, QObject* parent, Frame frame)
    : QThread(parent),
      cacheDir_(QStandardPaths::writableLocation(QStandardPaths::CacheLocation) + QStringLiteral("/thumbnails")),
      edge_(edge),
      frame_(frame) {}

void ThumbnailLoader::setCacheDir(const QString& dir) {
  QMutexLocker lock(&mutex_);
  cacheDir_ = dir;
}

int ThumbnailLoader::decodedCount() const {
  QMutexLocker lock(&mutex_);
  return decoded_;
}

QString ThumbnailLoader::contentKey(const QString& path) {
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly)) return {};
  constexpr qint64 kPart = 64 * 1024;
  QCryptographicHash h(QCryptographicHash::Sha1);
  const qint64 size = f.size();
  h.addData(QByteArray::number(size));
  h.addData(f.read(kPart));
  if (size > 2 * kPart && f.seek(size - kPart)) h.addData(f.read(kPart));
  return QString::fromLatin1(h.result().toHex());
}

ThumbnailLoader::~ThumbnailLoader() {
  {
    QMutexLocker lock(&mutex_);
    abort_ = true;
    wake_.wakeOne();
  }
  wait();
}

void ThumbnailLoader::request(int key, const QString& path) {
  QMutexLocker lock(&mutex_);
  if (const auto it = queued_.find(key); it != queued_.end()) {
    queue_.erase(it.value());
    queued_.erase(it);
  }
  queue_.push_front({key, path});
  queued_.insert(key, queue_.begin());
  if (!isRunning()) start(QThread::LowPriority);
  wake_.wakeOne();
}

void ThumbnailLoader::clear() {
  QMutexLocker lock(&mutex_);
  queue_.clear();
  queued_.clear();
  ++generation_;
}

quint64 ThumbnailLoader::generation() const {
  QMutexLocker lock(&mutex_);
  return generation_;
}

void ThumbnailLoader::run() {
  for (;;) {
    Job job;
    quint64 gen = 0;
    QString cacheDir;
    {
      QMutexLocker lock(&mutex_);
      while (!abort_ && queue_.empty()) wake_.wait(&mutex_);
      if (abort_) return;
      job = queue_.front();
      queue_.pop_front();
      queued_.remove(job.key);
      gen = generation_;
      cacheDir = cacheDir_;
    }
    QString error;
    const QString key = cacheDir.isEmpty() ? QString() : contentKey(job.path);
    const bool first = frame_ == Frame::First;
    const QString cached = key.isEmpty() ? QString()
                                         : QStringLiteral("%1/%2-%3%4.png")
                                               .arg(cacheDir, key)
                                               .arg(edge_)
                                               .arg(first ? QStringLiteral("-first") : QString());
    QImage image;
    if (!cached.isEmpty()) image.load(cached, "PNG");
    if (image.isNull()) {
      image = decode_thumbnail(job.path, edge_, first, &error);
      {
        QMutexLocker lock(&mutex_);
        ++decoded_;
      }
      // Written under a temporary name and renamed (QSaveFile): a crash leaves no half PNG.
      if (!image.isNull() && !cached.isEmpty() && QDir().mkpath(cacheDir)) {
        QSaveFile out(cached);
        if (out.open(QIODevice::WriteOnly) && image.save(&out, "PNG")) out.commit();
      }
    }
    if (image.isNull()) Q_EMIT thumbnailFailed(job.key, error, gen);
    else Q_EMIT thumbnailReady(job.key, image, gen);
  }
}

}  // namespace ws
