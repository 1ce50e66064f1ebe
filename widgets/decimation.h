// SPDX-License-Identifier: Apache-2.0
// Reduces a long x-sorted series to what a plot of `buckets` pixel columns can show: the
// min and max of each column (in their original order), so spikes survive decimation.
#pragma once

#include <QVector>

namespace ws {

// x must be ascending. Points outside [xmin, xmax] are dropped except the nearest one on
// each side (so lines run to the edge). Non-finite y values are skipped. When the range
// holds no more than 2 * buckets points, all of them are kept.
void decimateMinMax(const QVector<double>& x, const QVector<double>& y, double xmin, double xmax, int buckets,
                    QVector<double>& outX, QVector<double>& outY);

}  // namespace ws
