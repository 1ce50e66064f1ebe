// SPDX-License-Identifier: Apache-2.0
#include "frame_source.h"

#include <QMutexLocker>

#include <cstring>
#include <memory>

#ifdef WANSTUDIO_HAVE_VIDEO
#include "video/video_decode.h"
#endif

namespace ws {

struct FrameSource::Reader {
#ifdef WANSTUDIO_HAVE_VIDEO
  std::unique_ptr<video::VideoReader> video;
#endif
};

FrameSource::FrameSource(QObject* parent) : QThread(parent) { setCacheBudget(256LL << 20); }

FrameSource::~FrameSource() {
  {
    QMutexLocker lock(&mutex_);
    abort_ = true;
    wake_.wakeOne();
  }
  wait();
  delete reader_;
}

void FrameSource::open(const QString& path) {
  QMutexLocker lock(&mutex_);
  path_ = path;
  reopen_ = true;
  pending_ = false;
  frameCount_ = 0;
  size_ = {};
  fps_ = 0;
  cache_.clear();
  if (!isRunning()) start(QThread::LowPriority);
  wake_.wakeOne();
}

QString FrameSource::path() const {
  QMutexLocker lock(&mutex_);
  return path_;
}

quint64 FrameSource::request(int index) {
  QMutexLocker lock(&mutex_);
  if (frameCount_ > 0) index = std::clamp(index, 0, frameCount_ - 1);
  pending_ = true;
  pendingIndex_ = std::max(0, index);
  wake_.wakeOne();
  return ++requestId_;
}

int FrameSource::frameCount() const {
  QMutexLocker lock(&mutex_);
  return frameCount_;
}

QSize FrameSource::frameSize() const {
  QMutexLocker lock(&mutex_);
  return size_;
}

double FrameSource::fps() const {
  QMutexLocker lock(&mutex_);
  return fps_;
}

void FrameSource::setCacheBudget(qint64 bytes) {
  QMutexLocker lock(&mutex_);
  cache_.setMaxCost(qsizetype(std::max<qint64>(bytes, 1)));
}

void FrameSource::setReadAhead(int frames) {
  QMutexLocker lock(&mutex_);
  readAhead_ = std::max(0, frames);
}

void FrameSource::setDecodeDelayForTesting(int ms) {
  QMutexLocker lock(&mutex_);
  delayMs_ = ms;
}

int FrameSource::decodedCount() const {
  QMutexLocker lock(&mutex_);
  return decoded_;
}

bool FrameSource::isCached(int index) const {
  QMutexLocker lock(&mutex_);
  return cache_.contains(index);
}

QImage FrameSource::frame(int index, QString* error) {
  int delay = 0;
  {
    QMutexLocker lock(&mutex_);
    if (const QImage* hit = cache_.object(index)) return *hit;
    delay = delayMs_;
  }
  if (delay > 0) QThread::msleep(ulong(delay));
  QImage image;
#ifdef WANSTUDIO_HAVE_VIDEO
  if (!reader_ || !reader_->video) return {};
  try {
    // Forward reads continue decoding; only a jump back or far ahead seeks.
    const video::RgbFrame f = reader_->video->read(index);
    image = QImage(f.width, f.height, QImage::Format_RGB888);
    for (int y = 0; y < f.height; ++y) std::memcpy(image.scanLine(y), f.pixel(0, y), size_t(f.width) * 3);
  } catch (const std::exception& e) {
    if (error) *error = QString::fromUtf8(e.what());
    return {};
  }
#else
  Q_UNUSED(index);
  if (error) *error = QStringLiteral("this build has no video decoding (WANSTUDIO_VIDEO=OFF)");
  return {};
#endif
  QMutexLocker lock(&mutex_);
  ++decoded_;
  cache_.insert(index, new QImage(image), qsizetype(image.sizeInBytes()));
  return image;
}

void FrameSource::run() {
  int aheadNext = 0, aheadLeft = 0;  // read-ahead after the last served frame
  for (;;) {
    QMutexLocker lock(&mutex_);
    while (!abort_ && !reopen_ && !pending_ && !(aheadLeft > 0 && aheadNext < frameCount_)) wake_.wait(&mutex_);
    if (abort_) return;

    if (reopen_) {
      reopen_ = false;
      const QString path = path_;
      aheadLeft = 0;
      lock.unlock();
      delete reader_;
      reader_ = new Reader;
      QString error;
      int count = 0;
      QSize size;
      double fps = 0;
#ifdef WANSTUDIO_HAVE_VIDEO
      try {
        reader_->video = std::make_unique<video::VideoReader>(path.toStdString());
        count = int(reader_->video->frame_count());
        size = QSize(reader_->video->info().width, reader_->video->info().height);
        fps = reader_->video->info().fps;
      } catch (const std::exception& e) {
        reader_->video.reset();
        error = QString::fromUtf8(e.what());
      }
#else
      error = QStringLiteral("%1: this build has no video decoding (WANSTUDIO_VIDEO=OFF)").arg(path);
#endif
      lock.relock();
      if (reopen_ || abort_) continue;  // opened again meanwhile: that one counts
      frameCount_ = count;
      size_ = size;
      fps_ = fps;
      if (pending_ && count > 0) pendingIndex_ = std::clamp(pendingIndex_, 0, count - 1);
      lock.unlock();
      if (error.isEmpty()) Q_EMIT opened(count, size, fps);
      else Q_EMIT failed(error);
      continue;
    }

    if (pending_) {
      pending_ = false;
      const int index = pendingIndex_;
      const quint64 id = requestId_;
      const int count = frameCount_;
      lock.unlock();
      if (count <= 0) continue;  // nothing open (or it failed)
      QString error;
      const QImage image = frame(index, &error);
      lock.relock();
      // Latest wins: a request that arrived while this one decoded supersedes it.
      const bool latest = id == requestId_ && !reopen_;
      aheadNext = index + 1;
      aheadLeft = readAhead_;
      lock.unlock();
      if (latest && !image.isNull()) Q_EMIT frameReady(index, image, id);
      if (latest && image.isNull()) Q_EMIT failed(error);
      continue;
    }

    // Idle: decode ahead of the playhead so playback does not wait on the decoder.
    const int index = aheadNext++;
    --aheadLeft;
    const bool cached = cache_.contains(index);
    lock.unlock();
    if (!cached) frame(index, nullptr);
  }
}

}  // namespace ws
