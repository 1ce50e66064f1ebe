// SPDX-License-Identifier: Apache-2.0
// The start images of image-to-video validation videos, shown beside the player: one small
// picture per image, captioned "start image" and whose it is (a prompt, a side), the path as
// its tooltip. A picture file is read with Qt's image readers on the thread pool; a video shows
// its first frame, decoded on a ThumbnailLoader's thread as the dataset and validation grids do; an
// image_latent file has no picture and says so. Hidden while there are none (text-to-video runs).
#pragma once

#include <QFutureWatcher>
#include <QHash>
#include <QImage>
#include <QList>
#include <QPixmap>
#include <QString>
#include <QWidget>

class QLabel;
class QVBoxLayout;

namespace ws {

class ThumbnailLoader;

class StartImageStrip : public QWidget {
  Q_OBJECT
 public:
  static constexpr int kEdge = 120;
  struct Image {
    QString path;     // absolute
    QString caption;  // whose start image it is: "prompt 0", "A", "A and B"
  };

  explicit StartImageStrip(QWidget* parent = nullptr);
  ~StartImageStrip() override;

  void setImages(const QList<Image>& images);
  const QList<Image>& images() const { return images_; }
  // The picture of each image, in order (a null pixmap until it is decoded, or when it cannot be).
  QList<QLabel*> pictures() const { return pictures_; }

 private:
  void place(int index, const QPixmap& pixmap);
  void say(int index, const QString& text);  // instead of a picture

  // Pictures are read on the thread pool, a batch per setImages(); a newer batch supersedes it.
  struct Read {
    int index = 0;
    QImage image;   // null: not a picture Qt reads (then a video), or unreadable
    QString error;  // set when Qt knew the format but could not read the file
  };
  void pictureBatchDone();

  QList<Image> images_;
  QFutureWatcher<QList<Read>> reader_;
  quint64 generation_ = 0;
  QList<QLabel*> pictures_;
  QList<QWidget*> tiles_;
  QVBoxLayout* tilesLayout_;
  ThumbnailLoader* frames_;
  QHash<QString, QPixmap> cache_;  // by path: a new selection needs no new decode
};

}  // namespace ws
