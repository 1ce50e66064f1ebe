// SPDX-License-Identifier: Apache-2.0
// Decoded frames of one video for the players, from a background thread (cf. Qt's
// Mandelbrot example): request(N) supersedes every older request, only the newest result is
// delivered (frameReady, queued to the receivers' GUI thread), and while idle the thread
// decodes a few frames ahead into a cache with a byte budget. Validation clips are short
// (17-81 frames), so most of a clip ends up cached and scrubbing back is instant.
#pragma once

#include <QCache>
#include <QImage>
#include <QMutex>
#include <QSize>
#include <QThread>
#include <QWaitCondition>

namespace ws {

class FrameSource : public QThread {
  Q_OBJECT
 public:
  explicit FrameSource(QObject* parent = nullptr);
  ~FrameSource() override;

  // Opens `path` in the background: opened() or failed() follows.
  void open(const QString& path);
  QString path() const;
  // Asks for frame `index` (clamped to the clip); a newer request drops this one unless it
  // is already delivered. Returns the request's id (increasing).
  quint64 request(int index);

  // Known once opened() arrived (0 / empty before).
  int frameCount() const;
  QSize frameSize() const;
  double fps() const;

  void setCacheBudget(qint64 bytes);
  void setReadAhead(int frames);
  void setDecodeDelayForTesting(int ms);  // a slow decoder, to test latest-wins
  int decodedCount() const;               // frames decoded so far (cache misses)
  bool isCached(int index) const;

 Q_SIGNALS:
  void opened(int frameCount, QSize size, double fps);
  void failed(const QString& message);
  void frameReady(int index, const QImage& image, quint64 requestId);

 protected:
  void run() override;

 private:
  QImage frame(int index, QString* error);  // cache or decode; on the decode thread

  mutable QMutex mutex_;
  QWaitCondition wake_;
  // Shared with the thread (under mutex_).
  QString path_;
  bool reopen_ = false;
  bool abort_ = false;
  bool pending_ = false;
  int pendingIndex_ = 0;
  quint64 requestId_ = 0;
  int frameCount_ = 0;
  QSize size_;
  double fps_ = 0;
  QCache<int, QImage> cache_;
  int readAhead_ = 6;
  int delayMs_ = 0;
  int decoded_ = 0;
  // Decode thread only.
  struct Reader;
  Reader* reader_ = nullptr;
};

}  // namespace ws
