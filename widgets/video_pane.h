// SPDX-License-Identifier: Apache-2.0
// One pane of a video comparison: a frame of one video, or in wipe mode two videos split by
// a draggable divider. Wheel zooms and drag pans through the ViewTransform all panes share.
// Frames arrive from FrameSources over queued connections; a frame that is not the one
// asked for last is ignored.
#pragma once

#include <QImage>
#include <QPointer>
#include <QWidget>

namespace ws {

class FrameSource;
class ViewTransform;

class VideoPane : public QWidget {
  Q_OBJECT
 public:
  explicit VideoPane(ViewTransform* transform, QWidget* parent = nullptr);

  void setSource(FrameSource* source, const QString& title);      // layer 0
  void setWipeSource(FrameSource* source, const QString& title);  // layer 1; nullptr: no wipe
  bool isWipe() const { return layers_[1].source != nullptr; }
  void setCaption(const QString& text);  // a line drawn at the bottom (e.g. the PSNR)

  void showFrame(int index);  // asks the sources for it
  // True when every layer shows frame `index` (clamped to each video's length).
  bool isPresenting(int index) const;
  int shownFrame(int layer = 0) const { return layers_[layer].frame; }
  QImage image(int layer = 0) const { return layers_[layer].image; }
  QString title(int layer = 0) const { return layers_[layer].title; }

  double divider() const { return divider_; }  // 0..1 across the pane
  void setDivider(double x);

 Q_SIGNALS:
  void frameShown(int layer, int index);

 protected:
  void paintEvent(QPaintEvent* event) override;
  void wheelEvent(QWheelEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void mouseReleaseEvent(QMouseEvent* event) override;
  void mouseDoubleClickEvent(QMouseEvent* event) override;

 private:
  struct Layer {
    QPointer<FrameSource> source;
    QString title;
    QImage image;
    int frame = -1;   // index of `image`
    int wanted = -1;  // the index asked for last
    QMetaObject::Connection connection;
  };
  void bind(int layer, FrameSource* source, const QString& title);
  int target(int layer, int index) const;
  QSizeF imageSize() const;
  bool nearDivider(const QPointF& p) const;

  ViewTransform* transform_;
  Layer layers_[2];
  QString caption_;
  double divider_ = 0.5;
  enum class Drag { None, Pan, Divider } drag_ = Drag::None;
  QPointF lastPos_;
};

}  // namespace ws
