// SPDX-License-Identifier: Apache-2.0
#include "pages/scene_timeline.h"

#include <QKeyEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QPainterPath>

#include <algorithm>

namespace ws {

namespace {
constexpr int kThumbHeight = 54, kMargin = 4;
}

SceneTimeline::SceneTimeline(QWidget* parent) : QWidget(parent) {
  setFocusPolicy(Qt::StrongFocus);
  setMinimumHeight(140);
  setAccessibleName(tr("Scene cuts timeline"));
}

void SceneTimeline::setScores(const QVector<double>& scores) {
  scores_ = scores;
  thumbs_.clear();
  update();
}

void SceneTimeline::setThreshold(double t) {
  threshold_ = t;
  update();
}

void SceneTimeline::setCuts(QVector<qint64> cuts) {
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  cuts_ = cuts;
  selected_ = -1;
  describe();
  update();
  Q_EMIT cutsChanged();
}

void SceneTimeline::setThumbnail(qint64 frame, const QImage& image) {
  thumbs_[frame] = image.scaledToHeight(kThumbHeight, Qt::SmoothTransformation);
  update();
}

bool SceneTimeline::addCut(qint64 frame) {
  if (frame <= 0 || frame >= frames() || cuts_.contains(frame)) return false;
  cuts_.insert(std::lower_bound(cuts_.begin(), cuts_.end(), frame), frame);
  selected_ = int(cuts_.indexOf(frame));
  describe();
  update();
  Q_EMIT cutsChanged();
  return true;
}

bool SceneTimeline::removeCut(int index) {
  if (index < 0 || index >= cuts_.size()) return false;
  cuts_.remove(index);
  selected_ = -1;
  describe();
  update();
  Q_EMIT cutsChanged();
  return true;
}

bool SceneTimeline::moveCut(int index, qint64 frame) {
  if (index < 0 || index >= cuts_.size()) return false;
  const qint64 lo = index > 0 ? cuts_[index - 1] + 1 : 1,
               hi = index + 1 < cuts_.size() ? cuts_[index + 1] - 1 : frames() - 1;
  frame = std::clamp(frame, lo, std::max(lo, hi));
  if (frame == cuts_[index]) return false;
  cuts_[index] = frame;
  describe();
  update();
  Q_EMIT cutsChanged();
  return true;
}

void SceneTimeline::selectCut(int index) {
  selected_ = index >= 0 && index < cuts_.size() ? index : -1;
  update();
  if (selected_ >= 0) Q_EMIT cutSelected(selected_, cuts_[selected_]);
}

void SceneTimeline::setCursor(qint64 frame) {
  cursor_ = std::clamp<qint64>(frame, 0, std::max<qint64>(0, frames() - 1));
  update();
  Q_EMIT cursorMoved(cursor_);
}

// What a screen reader says: the cuts as numbers.
void SceneTimeline::describe() {
  QStringList c;
  for (qint64 f : cuts_) c << QString::number(f);
  setAccessibleDescription(tr("%n cut(s) at frames %1", nullptr, int(cuts_.size())).arg(c.join(QStringLiteral(", "))));
}

double SceneTimeline::xOf(qint64 frame) const {
  const double w = width() - 2 * kMargin;
  return kMargin + (frames() > 1 ? w * double(frame) / double(frames() - 1) : 0);
}

qint64 SceneTimeline::frameAt(double x) const {
  const double w = std::max(1, width() - 2 * kMargin);
  return std::clamp<qint64>(qint64((x - kMargin) / w * double(frames() - 1) + 0.5), 0,
                            std::max<qint64>(0, frames() - 1));
}

int SceneTimeline::cutNear(double x) const {
  int best = -1;
  double bestD = 5;
  for (int i = 0; i < cuts_.size(); ++i)
    if (const double d = std::abs(xOf(cuts_[i]) - x); d <= bestD) {
      best = i;
      bestD = d;
    }
  return best;
}

void SceneTimeline::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.fillRect(rect(), palette().base());
  if (scores_.isEmpty()) {
    p.drawText(rect(), Qt::AlignCenter, tr("no scan yet"));
    return;
  }
  const int curveBottom = height() - kThumbHeight - 2 * kMargin, curveTop = kMargin;
  const double top = std::max(threshold_ * 1.5, *std::max_element(scores_.begin(), scores_.end()));
  const auto yOf = [&](double v) { return curveBottom - (curveBottom - curveTop) * std::min(v, top) / top; };
  // Scene thumbnails along the bottom, each at its scene's first frame.
  for (auto it = thumbs_.constBegin(); it != thumbs_.constEnd(); ++it)
    p.drawImage(QPointF(xOf(it.key()), curveBottom + kMargin), it.value());
  QPainterPath curve;
  for (int i = 0; i < scores_.size(); ++i) {
    const QPointF pt(xOf(i), yOf(scores_[i]));
    if (i == 0) curve.moveTo(pt);
    else curve.lineTo(pt);
  }
  p.setPen(QPen(palette().color(QPalette::Text), 1));
  p.drawPath(curve);
  p.setPen(QPen(QColor(0xc0, 0x39, 0x2b), 1, Qt::DashLine));
  p.drawLine(QPointF(kMargin, yOf(threshold_)), QPointF(width() - kMargin, yOf(threshold_)));
  for (int i = 0; i < cuts_.size(); ++i) {
    p.setPen(
        QPen(i == selected_ ? palette().color(QPalette::Highlight) : QColor(0x27, 0xae, 0x60), i == selected_ ? 3 : 2));
    p.drawLine(QPointF(xOf(cuts_[i]), 0), QPointF(xOf(cuts_[i]), height()));
  }
  p.setPen(QPen(palette().color(QPalette::Text), 1, Qt::DotLine));
  p.drawLine(QPointF(xOf(cursor_), 0), QPointF(xOf(cursor_), curveBottom));
}

void SceneTimeline::mousePressEvent(QMouseEvent* e) {
  setFocus();
  const int near = cutNear(e->position().x());
  if (near >= 0) {
    dragging_ = near;
    selectCut(near);
  } else {
    selected_ = -1;
    setCursor(frameAt(e->position().x()));
  }
}

void SceneTimeline::mouseMoveEvent(QMouseEvent* e) {
  if (dragging_ >= 0) moveCut(dragging_, frameAt(e->position().x()));
}

void SceneTimeline::mouseReleaseEvent(QMouseEvent*) {
  if (dragging_ >= 0 && dragging_ < cuts_.size()) Q_EMIT cutSelected(dragging_, cuts_[dragging_]);
  dragging_ = -1;
}

void SceneTimeline::mouseDoubleClickEvent(QMouseEvent* e) { addCut(frameAt(e->position().x())); }

void SceneTimeline::keyPressEvent(QKeyEvent* e) {
  if ((e->key() == Qt::Key_Delete || e->key() == Qt::Key_Backspace) && selected_ >= 0) removeCut(selected_);
  else if (e->key() == Qt::Key_Left && selected_ >= 0) moveCut(selected_, cuts_[selected_] - 1);
  else if (e->key() == Qt::Key_Right && selected_ >= 0) moveCut(selected_, cuts_[selected_] + 1);
  else QWidget::keyPressEvent(e);
}

}  // namespace ws
