// SPDX-License-Identifier: Apache-2.0
#include "ema_smoothing.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace ws {

QVector<double> emaSmooth(const QVector<double>& values, double beta) {
  if (!(beta >= 0)) beta = 0;  // also catches NaN
  beta = std::min(beta, 0.999999);
  QVector<double> out(values.size());
  double s = 0;
  double betaPow = 1;  // beta^t for the t finite values seen so far
  for (qsizetype i = 0; i < values.size(); ++i) {
    const double x = values[i];
    if (!std::isfinite(x)) {
      out[i] = std::numeric_limits<double>::quiet_NaN();
      continue;
    }
    s = beta * s + (1 - beta) * x;
    betaPow *= beta;
    out[i] = s / (1 - betaPow);
  }
  return out;
}

}  // namespace ws
