// SPDX-License-Identifier: Apache-2.0
// Zoom and pan shared by every pane of a comparison. Kept in normalised image coordinates
// (0..1 across the frame), so a 480p low-res pane and a 720p upsampled pane show exactly
// the same region of the picture.
#pragma once

#include <QObject>
#include <QPointF>
#include <QRectF>
#include <QSizeF>

namespace ws {

class ViewTransform : public QObject {
  Q_OBJECT
 public:
  explicit ViewTransform(QObject* parent = nullptr);

  double zoom() const { return zoom_; }       // 1 = the frame fits the pane
  QPointF center() const { return center_; }  // the image point at the pane's centre

  // Where a frame of `imageSize` is drawn in `pane`.
  QRectF imageRect(const QSizeF& imageSize, const QRectF& pane) const;
  // Pane point -> normalised image point, for the same image size and pane.
  QPointF toImage(const QPointF& panePoint, const QSizeF& imageSize, const QRectF& pane) const;

 public Q_SLOTS:
  void setZoom(double zoom);
  // Zooms by `factor` keeping the image point under `panePoint` where it is.
  void zoomAt(double factor, const QPointF& panePoint, const QSizeF& imageSize, const QRectF& pane);
  void panBy(const QPointF& paneDelta, const QSizeF& imageSize, const QRectF& pane);  // pixels
  void setCenter(const QPointF& center);
  void reset();

 Q_SIGNALS:
  void changed();

 private:
  double zoom_ = 1;
  QPointF center_{0.5, 0.5};
};

}  // namespace ws
