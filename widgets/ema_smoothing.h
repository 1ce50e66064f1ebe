// SPDX-License-Identifier: Apache-2.0
// Bias-corrected exponential moving average, the smoothing TensorBoard's loss curves use.
#pragma once

#include <QVector>

namespace ws {

// s_t = beta * s_{t-1} + (1 - beta) * x_t with s_0 = 0, reported as s_t / (1 - beta^t), so
// the first points are not pulled towards 0. beta is clamped into [0, 1); beta = 0 returns x.
// Non-finite inputs (a NaN loss) give NaN at their index and do not enter the average.
QVector<double> emaSmooth(const QVector<double>& values, double beta);

}  // namespace ws
