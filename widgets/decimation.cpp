// SPDX-License-Identifier: Apache-2.0
#include "decimation.h"

#include <algorithm>
#include <cmath>

namespace ws {

void decimateMinMax(const QVector<double>& x, const QVector<double>& y, double xmin, double xmax, int buckets,
                    QVector<double>& outX, QVector<double>& outY) {
  outX.clear();
  outY.clear();
  const qsizetype n = std::min(x.size(), y.size());
  if (n == 0) return;
  buckets = std::max(1, buckets);
  // The visible slice plus one neighbour on each side.
  qsizetype lo = std::lower_bound(x.begin(), x.begin() + n, xmin) - x.begin();
  qsizetype hi = std::upper_bound(x.begin(), x.begin() + n, xmax) - x.begin();
  lo = std::max<qsizetype>(0, lo - 1);
  hi = std::min<qsizetype>(n, hi + 1);
  auto push = [&](qsizetype i) {
    if (std::isfinite(y[i])) {
      outX.push_back(x[i]);
      outY.push_back(y[i]);
    }
  };
  if (hi - lo <= 2 * qsizetype(buckets) || !(xmax > xmin)) {
    outX.reserve(hi - lo);
    outY.reserve(hi - lo);
    for (qsizetype i = lo; i < hi; ++i) push(i);
    return;
  }
  outX.reserve(2 * buckets + 4);
  outY.reserve(2 * buckets + 4);
  const double width = (xmax - xmin) / buckets;
  qsizetype i = lo;
  while (i < hi) {
    // Bucket of point i; points left of xmin or right of xmax form their own end buckets.
    const double b = std::floor((x[i] - xmin) / width);
    qsizetype j = i, iMin = -1, iMax = -1;
    for (; j < hi && std::floor((x[j] - xmin) / width) == b; ++j) {
      if (!std::isfinite(y[j])) continue;
      if (iMin < 0 || y[j] < y[iMin]) iMin = j;
      if (iMax < 0 || y[j] > y[iMax]) iMax = j;
    }
    if (iMin >= 0) {
      push(std::min(iMin, iMax));
      if (iMax != iMin) push(std::max(iMin, iMax));
    }
    i = j;
  }
}

}  // namespace ws
