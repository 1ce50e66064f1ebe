// SPDX-License-Identifier: Apache-2.0
// Light and dark: which one the palette is, the studio's status colours for each (chosen to
// read on that background), and the look of a QCustomPlot chart drawn from the palette, so
// charts follow a theme switch like every other widget.
#pragma once

#include <QColor>
#include <QPalette>

class QCustomPlot;
class QWidget;

namespace ws {

// Status colours: running, completed, cancelled (warning), failed (error).
enum class Tone { None, Running, Completed, Warning, Error };

bool isDarkPalette(const QPalette& palette);
QColor toneColor(Tone tone, const QPalette& palette);
// A label's text in a status colour, through its `tone` property and the style sheet (so a
// theme switch recolours it): Tone::None goes back to the palette's text colour.
void setTone(QWidget* widget, Tone tone);
// Background, axes, grid, tick labels and legend from the plot's palette, now and on every
// later change of that palette (a theme switch).
void styleChart(QCustomPlot* plot);

}  // namespace ws
