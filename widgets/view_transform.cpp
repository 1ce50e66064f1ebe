// SPDX-License-Identifier: Apache-2.0
#include "view_transform.h"

#include <algorithm>

namespace ws {

namespace {
constexpr double kMinZoom = 0.25, kMaxZoom = 64;
}

ViewTransform::ViewTransform(QObject* parent) : QObject(parent) {}

QRectF ViewTransform::imageRect(const QSizeF& image, const QRectF& pane) const {
  if (image.isEmpty() || pane.isEmpty()) return {};
  const double fit = std::min(pane.width() / image.width(), pane.height() / image.height());
  const double w = image.width() * fit * zoom_, h = image.height() * fit * zoom_;
  return {pane.center().x() - center_.x() * w, pane.center().y() - center_.y() * h, w, h};
}

QPointF ViewTransform::toImage(const QPointF& p, const QSizeF& image, const QRectF& pane) const {
  const QRectF r = imageRect(image, pane);
  if (r.isEmpty()) return {0.5, 0.5};
  return {(p.x() - r.x()) / r.width(), (p.y() - r.y()) / r.height()};
}

void ViewTransform::setZoom(double zoom) {
  zoom = std::clamp(zoom, kMinZoom, kMaxZoom);
  if (zoom == zoom_) return;
  zoom_ = zoom;
  Q_EMIT changed();
}

void ViewTransform::zoomAt(double factor, const QPointF& panePoint, const QSizeF& image, const QRectF& pane) {
  const QPointF anchor = toImage(panePoint, image, pane);
  const double old = zoom_;
  zoom_ = std::clamp(zoom_ * factor, kMinZoom, kMaxZoom);
  if (zoom_ == old) return;
  // Keep `anchor` under the cursor: solve imageRect(...) for the new centre.
  const QRectF r = imageRect(image, pane);
  if (!r.isEmpty()) {
    const QPointF offset = panePoint - pane.center();
    center_ = QPointF(std::clamp(anchor.x() - offset.x() / r.width(), 0.0, 1.0),
                      std::clamp(anchor.y() - offset.y() / r.height(), 0.0, 1.0));
  }
  Q_EMIT changed();
}

void ViewTransform::panBy(const QPointF& delta, const QSizeF& image, const QRectF& pane) {
  const QRectF r = imageRect(image, pane);
  if (r.isEmpty()) return;
  setCenter(center_ - QPointF(delta.x() / r.width(), delta.y() / r.height()));
}

void ViewTransform::setCenter(const QPointF& c) {
  // Some of the frame always stays in view.
  const QPointF clamped(std::clamp(c.x(), 0.0, 1.0), std::clamp(c.y(), 0.0, 1.0));
  if (clamped == center_) return;
  center_ = clamped;
  Q_EMIT changed();
}

void ViewTransform::reset() {
  zoom_ = 1;
  center_ = {0.5, 0.5};
  Q_EMIT changed();
}

}  // namespace ws
