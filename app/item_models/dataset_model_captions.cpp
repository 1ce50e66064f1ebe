// SPDX-License-Identifier: Apache-2.0
// DatasetModel's edits across many captions: find and replace, a trigger word added or removed;
// and the counts of empty, repeated and over-long captions.
#include <QHash>
#include <QRegularExpression>

#include "item_models/dataset_model.h"

namespace ws {

namespace {

// The rows an edit applies to: the given ones in range, else all.
QVector<int> target_rows(const QVector<int>& rows, int count) {
  QVector<int> out;
  if (rows.isEmpty())
    for (int r = 0; r < count; ++r) out << r;
  else
    for (int r : rows)
      if (r >= 0 && r < count && !out.contains(r)) out << r;
  return out;
}

// The caption with `word` and the separator after it taken off the front, or a null string when it
// does not start with the word as a whole word.
QString without_trigger(const QString& caption, const QString& word) {
  const QRegularExpression re(QStringLiteral("^\\s*%1(?:\\s*[,:;]\\s*|\\s+|$)").arg(QRegularExpression::escape(word)));
  const auto m = re.match(caption);
  return m.hasMatch() ? caption.mid(m.capturedLength()) : QString();
}

}  // namespace

int DatasetModel::replaceInCaptions(const QString& find, const QString& replace, const QVector<int>& rows,
                                    Qt::CaseSensitivity cs) {
  if (find.isEmpty()) return 0;
  int changed = 0;
  for (int r : target_rows(rows, rowCount())) {
    QString text = index(r).data(CaptionRole).toString();
    const QString before = text;
    text.replace(find, replace, cs);
    if (text != before && setCaption(r, text)) ++changed;
  }
  return changed;
}

int DatasetModel::addTriggerWord(const QString& word, const QVector<int>& rows) {
  const QString w = word.trimmed();
  if (w.isEmpty()) return 0;
  int changed = 0;
  for (int r : target_rows(rows, rowCount())) {
    const QString text = index(r).data(CaptionRole).toString();
    if (!without_trigger(text, w).isNull()) continue;  // already there
    if (setCaption(r, text.trimmed().isEmpty() ? w : w + QStringLiteral(", ") + text)) ++changed;
  }
  return changed;
}

int DatasetModel::removeTriggerWord(const QString& word, const QVector<int>& rows) {
  const QString w = word.trimmed();
  if (w.isEmpty()) return 0;
  int changed = 0;
  for (int r : target_rows(rows, rowCount())) {
    const QString rest = without_trigger(index(r).data(CaptionRole).toString(), w);
    if (!rest.isNull() && setCaption(r, rest)) ++changed;
  }
  return changed;
}

DatasetModel::CaptionCounts DatasetModel::captionCounts() const {
  CaptionCounts c;
  QHash<QString, int> seen;  // caption, trimmed -> rows with it
  for (int r = 0; r < rowCount(); ++r) {
    const QString text = index(r).data(CaptionRole).toString().trimmed();
    if (text.isEmpty()) ++c.empty;
    else ++seen[text];
  }
  for (const int n : seen)
    if (n > 1) c.duplicated += n;
  if (hasTokenizer()) {
    c.overLong = 0;
    for (int r = 0; r < rowCount(); ++r) c.overLong += captionTokens(r) > 511;  // cached by caption
  }
  return c;
}

}  // namespace ws
