// SPDX-License-Identifier: Apache-2.0
#include "pages/start_image_strip.h"

#include <QFileInfo>
#include <QImageReader>
#include <QLabel>
#include <QScrollArea>
#include <QStyle>
#include <QVBoxLayout>
#include <QtConcurrent>

#include <algorithm>

#include "thumbnail_loader.h"

namespace ws {

StartImageStrip::StartImageStrip(QWidget* parent) : QWidget(parent) {
  setObjectName(QStringLiteral("startImages"));
  auto* inner = new QWidget;
  tilesLayout_ = new QVBoxLayout(inner);
  tilesLayout_->setContentsMargins(0, 0, 0, 0);
  tilesLayout_->addStretch(1);
  // Four prompts' images outgrow a short window: they scroll, the player keeps its room.
  auto* scroll = new QScrollArea(this);
  scroll->setFrameShape(QFrame::NoFrame);
  scroll->setWidgetResizable(true);
  scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  scroll->setWidget(inner);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(scroll);
  setFixedWidth(kEdge + style()->pixelMetric(QStyle::PM_ScrollBarExtent) + 8);

  frames_ = new ThumbnailLoader(kEdge, this, ThumbnailLoader::Frame::First);
  connect(frames_, &ThumbnailLoader::thumbnailReady, this, [this](int key, const QImage& image, quint64 generation) {
    if (generation != frames_->generation() || key < 0 || key >= images_.size()) return;
    const QPixmap pixmap = QPixmap::fromImage(image);
    cache_.insert(images_[key].path, pixmap);
    place(key, pixmap);
  });
  connect(frames_, &ThumbnailLoader::thumbnailFailed, this, [this](int key, const QString& why, quint64 generation) {
    if (generation == frames_->generation() && key >= 0 && key < images_.size())
      say(key, tr("cannot read it: %1").arg(why));
  });
  connect(&reader_, &QFutureWatcher<QList<Read>>::finished, this, &StartImageStrip::pictureBatchDone);
  hide();
}

StartImageStrip::~StartImageStrip() { reader_.waitForFinished(); }

void StartImageStrip::setImages(const QList<Image>& images) {
  const bool same = images.size() == images_.size() &&
                    std::equal(images.begin(), images.end(), images_.begin(), [](const Image& a, const Image& b) {
                      return a.path == b.path && a.caption == b.caption;
                    });
  if (same) return;
  frames_->clear();
  qDeleteAll(tiles_);
  tiles_.clear();
  pictures_.clear();
  images_ = images;
  QList<QPair<int, QString>> toRead;
  for (int i = 0; i < images_.size(); ++i) {
    const Image& im = images_[i];
    auto* tile = new QWidget;
    auto* v = new QVBoxLayout(tile);
    v->setContentsMargins(0, 0, 0, 4);
    v->setSpacing(2);
    auto* picture = new QLabel(tile);
    picture->setObjectName(QStringLiteral("startImage"));
    picture->setAlignment(Qt::AlignCenter);
    picture->setMinimumSize(kEdge, kEdge / 2);
    picture->setWordWrap(true);
    picture->setToolTip(im.path);
    picture->setAccessibleName(tr("Start image of %1").arg(im.caption));
    picture->setAccessibleDescription(im.path);
    auto* caption = new QLabel(tr("start image · %1").arg(im.caption), tile);
    caption->setObjectName(QStringLiteral("hint"));
    caption->setAlignment(Qt::AlignCenter);
    caption->setWordWrap(true);
    caption->setToolTip(im.path);
    v->addWidget(picture);
    v->addWidget(caption);
    tilesLayout_->insertWidget(i, tile);
    tiles_ << tile;
    pictures_ << picture;

    if (const auto it = cache_.constFind(im.path); it != cache_.constEnd()) {
      place(i, *it);
    } else if (!QFileInfo(im.path).isFile()) {
      say(i, tr("not found"));
    } else if (im.path.endsWith(QLatin1String(".safetensors"), Qt::CaseInsensitive)) {
      say(i, tr("an image latent (no picture)"));
    } else {
      toRead << qMakePair(i, im.path);
    }
  }
  ++generation_;
  if (!toRead.isEmpty()) {
    reader_.setProperty("generation", generation_);
    reader_.setFuture(QtConcurrent::run([toRead] {
      QList<Read> out;
      for (const auto& [index, path] : toRead) {
        Read r{index, {}, {}};
        QImageReader reader(path);
        if (reader.canRead()) {
          // Scaled as it decodes: a large picture is never held whole.
          const QSize size = reader.size();
          if (size.isValid()) reader.setScaledSize(size.scaled(kEdge, kEdge, Qt::KeepAspectRatio));
          r.image = reader.read();
          if (r.image.isNull()) r.error = reader.errorString();
        }
        out << r;
      }
      return out;
    }));
  }
  setVisible(!images_.isEmpty());
}

void StartImageStrip::pictureBatchDone() {
  if (reader_.isCanceled() || reader_.property("generation").toULongLong() != generation_) return;
  for (const Read& r : reader_.result()) {
    if (r.index >= images_.size()) continue;
    if (!r.image.isNull()) {
      cache_.insert(images_[r.index].path, QPixmap::fromImage(r.image));
      place(r.index, cache_.value(images_[r.index].path));
    } else if (!r.error.isEmpty()) {
      say(r.index, tr("cannot read it: %1").arg(r.error));
    } else {
      frames_->request(r.index, images_[r.index].path);  // a video: its first frame is the start image
    }
  }
}

void StartImageStrip::place(int index, const QPixmap& pixmap) {
  QLabel* picture = pictures_.value(index);
  if (!picture) return;
  picture->setText({});
  picture->setPixmap(pixmap);
}

void StartImageStrip::say(int index, const QString& text) {
  if (QLabel* picture = pictures_.value(index)) picture->setText(text);
}

}  // namespace ws
