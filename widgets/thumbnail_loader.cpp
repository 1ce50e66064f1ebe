// SPDX-License-Identifier: Apache-2.0
#include "thumbnail_loader.h"

#include <QMutexLocker>

#include <cstring>

#ifdef WANSTUDIO_HAVE_VIDEO
#include "video/video_decode.h"
#endif

namespace ws {

namespace {

// The thumbnail of one file: the middle frame, so fades from black do not hide the content.
QImage decode_thumbnail(const QString& path, int edge, QString* error) {
#ifdef WANSTUDIO_HAVE_VIDEO
  try {
    video::VideoReader reader(path.toStdString());
    const int64_t n = reader.info().still_image ? 1 : reader.frame_count();
    const video::RgbFrame f = reader.read(n > 1 ? n / 2 : 0);
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
  *error = QStringLiteral("this build has no video decoding (WANSTUDIO_VIDEO=OFF)");
  return {};
#endif
}

}  // namespace

ThumbnailLoader::ThumbnailLoader(int edge, QObject* parent) : QThread(parent), edge_(edge) {}

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
  for (auto it = queue_.begin(); it != queue_.end(); ++it)
    if (it->key == key) {
      queue_.erase(it);
      break;
    }
  queue_.push_front({key, path});
  if (!isRunning()) start(QThread::LowPriority);
  wake_.wakeOne();
}

void ThumbnailLoader::clear() {
  QMutexLocker lock(&mutex_);
  queue_.clear();
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
    {
      QMutexLocker lock(&mutex_);
      while (!abort_ && queue_.empty()) wake_.wait(&mutex_);
      if (abort_) return;
      job = queue_.front();
      queue_.pop_front();
      gen = generation_;
    }
    QString error;
    const QImage image = decode_thumbnail(job.path, edge_, &error);
    if (image.isNull()) Q_EMIT thumbnailFailed(job.key, error, gen);
    else Q_EMIT thumbnailReady(job.key, image, gen);
  }
}

}  // namespace ws
