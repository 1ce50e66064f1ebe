// SPDX-License-Identifier: Apache-2.0
// The dataset page's filter: plain words match the caption or the file name, `!` keeps rows with
// problems, `?` rows with a suggested caption to review, and comparisons keep rows by their numbers, joined by "and":
//   motion_score < 0.5 and frames >= 49      sharpness > 100      !  and  brightness <= 40
// A row without the number (not scored yet) fails a comparison on it. Pure: no Qt widgets.
#pragma once

#include <QString>
#include <QStringList>
#include <QVector>

#include <functional>

namespace ws {

class RowFilter {
 public:
  // Parses `text`; an unknown field or a missing number makes ok() false with error() saying why
  // (the filter then matches every row, so a half-typed expression hides nothing).
  explicit RowFilter(const QString& text = {});
  bool ok() const { return error_.isEmpty(); }
  QString error() const { return error_; }
  bool empty() const { return words_.isEmpty() && comparisons_.isEmpty() && !problems_ && !suggestions_; }

  // `number(field)` is NaN when the row lacks it; `text` the caption and file name.
  bool matches(const std::function<double(const QString& field)>& number, const QString& text, bool hasProblems,
               bool hasSuggestion = false) const;

  // The fields a comparison may name (DatasetModel::number knows them).
  static const QStringList& fields();

 private:
  struct Comparison {
    QString field, op;
    double value = 0;
  };
  QStringList words_;
  QVector<Comparison> comparisons_;
  bool problems_ = false;
  bool suggestions_ = false;
  QString error_;
};

}  // namespace ws
