// SPDX-License-Identifier: Apache-2.0
#include "video_pane.h"

#include <QMouseEvent>
#include <QPainter>
#include <QPainterPath>
#include <QWheelEvent>

#include <algorithm>
#include <cmath>

#include "frame_source.h"
#include "view_transform.h"

namespace ws {

VideoPane::VideoPane(ViewTransform* transform, QWidget* parent) : QWidget(parent), transform_(transform) {
  setMinimumSize(160, 120);
  setMouseTracking(true);
  setAttribute(Qt::WA_OpaquePaintEvent);
  setFocusPolicy(Qt::ClickFocus);  // a click on the picture takes the keys from a field elsewhere
  connect(transform_, &ViewTransform::changed, this, qOverload<>(&QWidget::update));
}

void VideoPane::setSource(FrameSource* source, const QString& title) { bind(0, source, title); }

void VideoPane::setWipeSource(FrameSource* source, const QString& title) { bind(1, source, title); }

void VideoPane::bind(int i, FrameSource* source, const QString& title) {
  Layer& l = layers_[i];
  disconnect(l.connection);
  l = Layer{};
  l.source = source;
  l.title = title;
  if (source) {
    // Decoded on the source's thread, handed over to this (GUI) thread.
    l.connection = connect(
        source, &FrameSource::frameReady, this,
        [this, i](int index, const QImage& image) {
          Layer& layer = layers_[i];
          if (index != layer.wanted) return;  // an older request's frame
          layer.image = image;
          layer.frame = index;
          update();
          Q_EMIT frameShown(i, index);
        },
        Qt::QueuedConnection);
  }
  update();
}

void VideoPane::setCaption(const QString& text) {
  caption_ = text;
  update();
}

int VideoPane::target(int i, int index) const {
  const Layer& l = layers_[i];
  const int count = l.source ? l.source->frameCount() : 0;
  return count > 0 ? std::clamp(index, 0, count - 1) : index;  // a shorter clip holds its last frame
}

void VideoPane::showFrame(int index) {
  for (int i = 0; i < 2; ++i) {
    Layer& l = layers_[i];
    if (!l.source) continue;
    const int t = target(i, index);
    if (t == l.wanted && (l.frame == t || l.source->frameCount() > 0)) continue;  // already asked
    l.wanted = t;
    if (l.frame != t) l.source->request(t);
  }
}

bool VideoPane::isPresenting(int index) const {
  for (int i = 0; i < 2; ++i)
    if (layers_[i].source && layers_[i].frame != target(i, index)) return false;
  return layers_[0].source != nullptr;
}

void VideoPane::setDivider(double x) {
  divider_ = std::clamp(x, 0.0, 1.0);
  update();
}

QSizeF VideoPane::imageSize() const {
  if (!layers_[0].image.isNull()) return layers_[0].image.size();
  return layers_[0].source ? QSizeF(layers_[0].source->frameSize()) : QSizeF();
}

bool VideoPane::nearDivider(const QPointF& p) const { return isWipe() && std::abs(p.x() - divider_ * width()) < 8; }

void VideoPane::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.fillRect(rect(), QColor(24, 24, 24));
  // Past 2x the pixels themselves are the point: no smoothing.
  p.setRenderHint(QPainter::SmoothPixmapTransform, transform_->zoom() < 2);
  const double split = divider_ * width();
  for (int i = 0; i < 2; ++i) {
    const Layer& l = layers_[i];
    if (l.image.isNull()) continue;
    p.save();
    if (isWipe()) p.setClipRect(i == 0 ? QRectF(0, 0, split, height()) : QRectF(split, 0, width() - split, height()));
    p.drawImage(transform_->imageRect(l.image.size(), rect()), l.image);
    p.restore();
  }
  if (layers_[0].image.isNull()) {
    p.setPen(QColor(160, 160, 160));
    p.drawText(rect(), Qt::AlignCenter, layers_[0].source ? tr("Decoding…") : tr("No video"));
  }
  // Titles and caption on a dark band so they read over any picture.
  auto label = [&p](const QString& text, const QPointF& at, Qt::Alignment align) {
    if (text.isEmpty()) return;
    const QFontMetrics fm(p.font());
    const QRectF r(0, 0, fm.horizontalAdvance(text) + 12, fm.height() + 6);
    QRectF placed = r.translated(at);
    if (align & Qt::AlignRight) placed.moveRight(at.x());
    if (align & Qt::AlignBottom) placed.moveBottom(at.y());
    p.fillRect(placed, QColor(0, 0, 0, 150));
    p.setPen(Qt::white);
    p.drawText(placed, Qt::AlignCenter, text);
  };
  label(layers_[0].title, QPointF(6, 6), Qt::AlignLeft);
  if (isWipe()) {
    label(layers_[1].title, QPointF(width() - 6, 6), Qt::AlignRight);
    p.setPen(QPen(QColor(255, 255, 255, 220), 2));
    p.drawLine(QPointF(split, 0), QPointF(split, height()));
    p.setBrush(Qt::white);
    p.drawEllipse(QPointF(split, height() / 2.0), 6, 6);
  }
  label(caption_, QPointF(6, height() - 6), Qt::AlignBottom);
}

void VideoPane::wheelEvent(QWheelEvent* event) {
  const double factor = std::pow(1.0015, event->angleDelta().y());
  transform_->zoomAt(factor, event->position(), imageSize(), rect());
  event->accept();
}

void VideoPane::mousePressEvent(QMouseEvent* event) {
  if (event->button() != Qt::LeftButton) return;
  drag_ = nearDivider(event->position()) ? Drag::Divider : Drag::Pan;
  lastPos_ = event->position();
  if (drag_ == Drag::Pan) setCursor(Qt::ClosedHandCursor);
}

void VideoPane::mouseMoveEvent(QMouseEvent* event) {
  const QPointF pos = event->position();
  if (drag_ == Drag::Divider) {
    setDivider(pos.x() / std::max(1, width()));
  } else if (drag_ == Drag::Pan) {
    transform_->panBy(pos - lastPos_, imageSize(), rect());
  } else {
    setCursor(nearDivider(pos) ? Qt::SplitHCursor : Qt::OpenHandCursor);
  }
  lastPos_ = pos;
}

void VideoPane::mouseReleaseEvent(QMouseEvent*) {
  drag_ = Drag::None;
  unsetCursor();
}

void VideoPane::mouseDoubleClickEvent(QMouseEvent*) { transform_->reset(); }

}  // namespace ws
