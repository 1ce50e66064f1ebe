// SPDX-License-Identifier: Apache-2.0
// Thumbnails for the dataset grid, decoded on one background thread: the middle frame of a
// video (or the picture), scaled to fit `edge` pixels. Requests queue in the order asked and
// a repeated request moves to the front, so the rows on screen come first; clear() drops
// everything queued (a newly opened dataset). Results arrive through thumbnailReady, queued
// to the receivers' GUI thread.
#pragma once

#include <QImage>
#include <QMutex>
#include <QString>
#include <QThread>
#include <QWaitCondition>

#include <deque>

namespace ws {

class ThumbnailLoader : public QThread {
  Q_OBJECT
 public:
  explicit ThumbnailLoader(int edge = 160, QObject* parent = nullptr);
  ~ThumbnailLoader() override;

  // `key` comes back with the image (the row); `generation` tells results of a cleared batch
  // from the current one.
  void request(int key, const QString& path);
  void clear();
  quint64 generation() const;

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
  std::deque<Job> queue_;
  quint64 generation_ = 0;
  bool abort_ = false;
  int edge_;
};

}  // namespace ws
