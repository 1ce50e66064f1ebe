// SPDX-License-Identifier: Apache-2.0
// The scene splitter's timeline: each frame's change score as a curve with the threshold line,
// the cuts as markers, and a thumbnail of each scene's first frame along the bottom. A person
// edits the cuts before anything is written: drag a marker to move it, double-click to add a cut
// there, select one and press Delete to drop it; a click elsewhere moves the cursor.
#pragma once

#include <QImage>
#include <QMap>
#include <QVector>
#include <QWidget>

namespace ws {

class SceneTimeline : public QWidget {
  Q_OBJECT
 public:
  explicit SceneTimeline(QWidget* parent = nullptr);

  void setScores(const QVector<double>& scores);  // one per frame; sets the frame count
  void setThreshold(double t);
  void setCuts(QVector<qint64> cuts);
  const QVector<qint64>& cuts() const { return cuts_; }
  qint64 frames() const { return qint64(scores_.size()); }
  void setThumbnail(qint64 frame, const QImage& image);

  // The edits the mouse and keys make, for code and tests. A cut at 0, past the end or on
  // another cut is refused (false); a move stays between its neighbours.
  bool addCut(qint64 frame);
  bool removeCut(int index);
  bool moveCut(int index, qint64 frame);
  int selectedCut() const { return selected_; }
  void selectCut(int index);
  qint64 cursor() const { return cursor_; }
  void setCursor(qint64 frame);

  QSize sizeHint() const override { return {800, 170}; }

 Q_SIGNALS:
  void cutsChanged();
  void cutSelected(int index, qint64 frame);
  void cursorMoved(qint64 frame);

 protected:
  void paintEvent(QPaintEvent*) override;
  void mousePressEvent(QMouseEvent* e) override;
  void mouseMoveEvent(QMouseEvent* e) override;
  void mouseReleaseEvent(QMouseEvent* e) override;
  void mouseDoubleClickEvent(QMouseEvent* e) override;
  void keyPressEvent(QKeyEvent* e) override;

 private:
  qint64 frameAt(double x) const;
  double xOf(qint64 frame) const;
  int cutNear(double x) const;
  void describe();

  QVector<double> scores_;
  QVector<qint64> cuts_;
  QMap<qint64, QImage> thumbs_;
  double threshold_ = 27;
  int selected_ = -1, dragging_ = -1;
  qint64 cursor_ = 0;
};

}  // namespace ws
