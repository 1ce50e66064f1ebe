// SPDX-License-Identifier: Apache-2.0
// Thumbnails for the dataset and validation grids, decoded on one background thread: the middle
// (or first) frame of a video (or the picture), scaled to fit `edge` pixels. Requests queue in the order asked and
// a repeated request moves to the front (both O(1): a dataset of 100,000 rows asks often), so
// the rows on screen come first; clear() drops everything queued (a newly opened dataset).
// Each thumbnail is also kept on disk, keyed by the file's content (its size and a SHA-1 of its
// first and last 64 KiB, so a renamed or copied clip is not decoded again and an edited one is).
// Results arrive through thumbnailReady, queued to the receivers' GUI thread.
#pragma once

#include <QImage>
#include <QMutex>
#include <QString>
#include <QThread>
#include <QWaitCondition>

#include <QHash>

#include <list>

namespace ws {

class ThumbnailLoader : public QThread {
  Q_OBJECT
 public:
  // Which frame stands for a video: the middle one (clips that fade in) or the first one.
  enum class Frame { Middle, First };

  explicit ThumbnailLoader(int edge = 160, QObject* parent = nullptr, Frame frame = Frame::Middle);
  ~ThumbnailLoader() override;

  // `key` comes back with the image (the row); `generation` tells results of a cleared batch
  // from the current one.
  void request(int key, const QString& path);
  void clear();
  quint64 generation() const;
  // Where thumbnails are kept between sessions (default: the user's cache folder + /thumbnails;
  // empty: none kept).
  void setCacheDir(const QString& dir);
  // Decodes done so far (cache misses), for tests.
  int decodedCount() const;
  // The cache key of a file's content; empty when it cannot be read.
  static QString contentKey(const QString& path);

 Q_SIGNALS:
  void thumbnailReady(int key, const QImage& image, quint64 generation);
  void thumbnailFailed(int key, const QString& message, quint64 generation);

 protected:
  void run() override;

 private:
  struct Job {
    int key;
    QString path;
  };
  mutable QMutex mutex_;
  QWaitCondition wake_;
  std::list<Job> queue_;
  QHash<int, std::list<Job>::iterator> queued_;  // key -> its place in queue_
  QString cacheDir_;
  int decoded_ = 0;
  quint64 generation_ = 0;
  bool abort_ = false;
  int edge_;
  Frame frame_;
};

}  // namespace ws
