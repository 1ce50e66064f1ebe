// SPDX-License-Identifier: Apache-2.0
#include "item_models/row_filter.h"

#include <QRegularExpression>

#include <cmath>

namespace ws {

const QStringList& RowFilter::fields() {
  static const QStringList f{QStringLiteral("motion_score"), QStringLiteral("sharpness"),  QStringLiteral("brightness"),
                             QStringLiteral("frames"),       QStringLiteral("width"),      QStringLiteral("height"),
                             QStringLiteral("fps"),          QStringLiteral("duration_s"), QStringLiteral("tokens")};
  return f;
}

RowFilter::RowFilter(const QString& text) {
  // A comparison: field, operator, number (spaces optional).
  static const QRegularExpression cmp(QStringLiteral(R"(^\s*([A-Za-z_]+)\s*(<=|>=|!=|==|=|<|>)\s*(\S*)\s*$)"));
  const QStringList parts = text.split(QRegularExpression(QStringLiteral(R"(\s+and\s+|\s*&&\s*)")), Qt::SkipEmptyParts);
  for (const QString& raw : parts) {
    const QString part = raw.trimmed();
    if (part.isEmpty()) continue;
    if (part == QLatin1String("!")) {
      problems_ = true;
      continue;
    }
    if (part == QLatin1String("?")) {
      suggestions_ = true;
      continue;
    }
    const auto m = cmp.match(part);
    if (!m.hasMatch()) {
      words_ << part;
      continue;
    }
    Comparison c{m.captured(1), m.captured(2), 0};
    if (c.field == QLatin1String("motion")) c.field = QStringLiteral("motion_score");
    if (!fields().contains(c.field)) {
      error_ = QObject::tr("unknown field '%1' (known: %2)").arg(c.field, fields().join(QStringLiteral(", ")));
      continue;
    }
    bool isNumber = false;
    c.value = m.captured(3).toDouble(&isNumber);
    if (!isNumber || !std::isfinite(c.value)) {
      error_ = QObject::tr("'%1' needs a number after %2").arg(c.field, c.op);
      continue;
    }
    comparisons_ << c;
  }
  if (!ok()) {
    words_.clear();
    comparisons_.clear();
    problems_ = false;
    suggestions_ = false;
  }
}

bool RowFilter::matches(const std::function<double(const QString&)>& number, const QString& text, bool hasProblems,
                        bool hasSuggestion) const {
  if (problems_ && !hasProblems) return false;
  if (suggestions_ && !hasSuggestion) return false;
  for (const QString& w : words_)
    if (!text.contains(w, Qt::CaseInsensitive)) return false;
  for (const Comparison& c : comparisons_) {
    const double v = number(c.field);
    if (std::isnan(v)) return false;
    const bool pass = c.op == QLatin1String("<")    ? v < c.value
                      : c.op == QLatin1String("<=") ? v <= c.value
                      : c.op == QLatin1String(">")  ? v > c.value
                      : c.op == QLatin1String(">=") ? v >= c.value
                      : c.op == QLatin1String("!=") ? v != c.value
                                                    : v == c.value;
    if (!pass) return false;
  }
  return true;
}

}  // namespace ws
