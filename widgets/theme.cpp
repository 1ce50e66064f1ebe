// SPDX-License-Identifier: Apache-2.0
#include "theme.h"

#include <QEvent>
#include <QStyle>
#include <QWidget>

#include <qcustomplot.h>

namespace ws {

bool isDarkPalette(const QPalette& palette) { return palette.color(QPalette::Window).lightness() < 128; }

QColor toneColor(Tone tone, const QPalette& palette) {
  // Primer-like colours, each at least 4.5:1 against both the window and the base of its theme.
  const bool dark = isDarkPalette(palette);
  switch (tone) {
    case Tone::Running: return dark ? QColor(0x58, 0xa6, 0xff) : QColor(0x0a, 0x5f, 0xcc);
    case Tone::Completed: return dark ? QColor(0x3f, 0xb9, 0x50) : QColor(0x11, 0x63, 0x29);
    case Tone::Warning: return dark ? QColor(0xd2, 0x99, 0x22) : QColor(0x7d, 0x4e, 0x00);
    case Tone::Error: return dark ? QColor(0xff, 0x7b, 0x72) : QColor(0xb6, 0x23, 0x24);
    case Tone::None: break;
  }
  return palette.color(QPalette::WindowText);
}

void setTone(QWidget* widget, Tone tone) {
  static const char* names[] = {"", "running", "completed", "warning", "error"};
  const char* name = names[int(tone)];
  if (widget->property("tone").toString() == QLatin1String(name)) return;
  widget->setProperty("tone", QString::fromLatin1(name));
  // A dynamic property takes effect in the style sheet only after a re-polish.
  widget->style()->unpolish(widget);
  widget->style()->polish(widget);
  widget->update();
}

namespace {

void restyle(QCustomPlot* plot);

// Watches the plot itself: a parent hears of a palette change before its children's palettes
// are resolved, so restyling from the parent could read the old colours.
class ChartPaletteWatcher : public QObject {
 public:
  explicit ChartPaletteWatcher(QCustomPlot* plot) : QObject(plot) {
    setObjectName(QStringLiteral("ws-chart-palette-watcher"));
  }
  bool eventFilter(QObject* watched, QEvent* event) override {
    if (event->type() == QEvent::PaletteChange) restyle(static_cast<QCustomPlot*>(watched));
    return false;
  }
};

void restyle(QCustomPlot* plot) {
  const QPalette pal = plot->palette();
  const QColor base = pal.color(QPalette::Base), text = pal.color(QPalette::Text);
  QColor grid = text;
  grid.setAlpha(40);
  QColor subGrid = text;
  subGrid.setAlpha(18);
  plot->setBackground(base);
  for (QCPAxisRect* rect : plot->axisRects()) rect->setBackground(base);
  for (QCPAxis* axis : plot->axisRects().isEmpty() ? QList<QCPAxis*>() : plot->axisRect()->axes()) {
    axis->setBasePen(QPen(text, 1));
    axis->setTickPen(QPen(text, 1));
    axis->setSubTickPen(QPen(text, 1));
    axis->setTickLabelColor(text);
    axis->setLabelColor(text);
    axis->grid()->setPen(QPen(grid, 1, Qt::DotLine));
    axis->grid()->setSubGridPen(QPen(subGrid, 1, Qt::DotLine));
    axis->grid()->setZeroLinePen(QPen(grid, 1));
  }
  QColor legend = base;
  legend.setAlpha(200);
  plot->legend->setBrush(legend);
  plot->legend->setBorderPen(QPen(pal.color(QPalette::Mid)));
  plot->legend->setTextColor(text);
  plot->replot(QCustomPlot::rpQueuedReplot);
}

}  // namespace

void styleChart(QCustomPlot* plot) {
  // Found by name: a class without Q_OBJECT has no meta-object of its own to look up by.
  if (!plot->findChild<QObject*>(QStringLiteral("ws-chart-palette-watcher"), Qt::FindDirectChildrenOnly))
    plot->installEventFilter(new ChartPaletteWatcher(plot));
  restyle(plot);
}

}  // namespace ws
