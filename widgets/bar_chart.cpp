// SPDX-License-Identifier: Apache-2.0
#include "bar_chart.h"

#include <QPainter>

#include <algorithm>

namespace ws {

namespace {
constexpr int kBarHeight = 16, kGap = 3, kMargin = 4;
}

BarChart::BarChart(QWidget* parent) : QWidget(parent) { setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed); }

void BarChart::setBars(const QVector<Bar>& bars) {
  bars_ = bars;
  QStringList lines;
  for (const Bar& b : bars_)
    lines << QStringLiteral("%1: %2%3")
                 .arg(b.label)
                 .arg(b.value)
                 .arg(b.note.isEmpty() ? QString() : QLatin1Char(' ') + b.note);
  setAccessibleDescription(lines.join(QStringLiteral("; ")));
  updateGeometry();
  update();
}

void BarChart::setMutedBefore(int index) {
  mutedBefore_ = index;
  update();
}

QSize BarChart::sizeHint() const {
  return {320, 2 * kMargin + std::max<int>(1, int(bars_.size())) * (kBarHeight + kGap)};
}

QSize BarChart::minimumSizeHint() const { return {160, sizeHint().height()}; }

void BarChart::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.fillRect(rect(), palette().base());
  if (bars_.isEmpty()) {
    p.setPen(palette().color(QPalette::PlaceholderText));
    p.drawText(rect(), Qt::AlignCenter, tr("nothing to show"));
    return;
  }
  const QFontMetrics fm(font());
  int labelWidth = 0, valueWidth = 0;
  double top = 0;
  for (const Bar& b : bars_) {
    labelWidth = std::max(labelWidth, fm.horizontalAdvance(b.label));
    valueWidth = std::max(valueWidth, fm.horizontalAdvance(QString::number(b.value) + QLatin1Char(' ') + b.note));
    top = std::max(top, b.value);
  }
  labelWidth = std::min(labelWidth, width() / 3);
  const int x0 = kMargin + labelWidth + kMargin;
  const int barSpace = std::max(10, width() - x0 - valueWidth - 2 * kMargin);
  const QColor bar = palette().color(QPalette::Highlight), muted = palette().color(QPalette::Mid);
  for (int i = 0; i < bars_.size(); ++i) {
    const Bar& b = bars_[i];
    const int y = kMargin + i * (kBarHeight + kGap);
    p.setPen(palette().color(QPalette::Text));
    p.drawText(QRect(kMargin, y, labelWidth, kBarHeight), Qt::AlignRight | Qt::AlignVCenter,
               fm.elidedText(b.label, Qt::ElideMiddle, labelWidth));
    const int w = top > 0 ? int(double(barSpace) * std::max(0.0, b.value) / top) : 0;
    p.fillRect(QRect(x0, y + 2, std::max(w, b.value > 0 ? 1 : 0), kBarHeight - 4), i < mutedBefore_ ? muted : bar);
    p.drawText(QRect(x0 + w + kMargin, y, valueWidth + kMargin, kBarHeight), Qt::AlignLeft | Qt::AlignVCenter,
               QString::number(b.value) + (b.note.isEmpty() ? QString() : QLatin1Char(' ') + b.note));
  }
}

}  // namespace ws
