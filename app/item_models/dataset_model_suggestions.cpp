// SPDX-License-Identifier: Apache-2.0
// DatasetModel's suggested captions: the `text_suggested` key a row keeps in its raw object (the
// metadata reader keeps unknown keys and the writer writes them back), accepted or rejected here.
#include "dataset/caption_suggestions.h"
#include "item_models/dataset_model.h"

namespace ws {

QString DatasetModel::suggestion(int row) const {
  if (row < 0 || row >= rowCount()) return {};
  const auto& raw = meta_.rows[size_t(row)].raw;
  if (!raw.is_object()) return {};
  const auto it = raw.find(dataset::kSuggestedKey);
  return it != raw.end() && it->is_string() ? QString::fromStdString(it->get<std::string>()) : QString();
}

bool DatasetModel::acceptSuggestion(int row) {
  const QString text = suggestion(row);
  if (text.isEmpty()) return false;
  meta_.rows[size_t(row)].raw.erase(dataset::kSuggestedKey);
  // setCaption marks the row edited and works out its text embedding again (another caption,
  // another embedding file: the row's embedding reads "missing" until encoded again).
  setCaption(row, text);
  rowChanged(row);
  return true;
}

bool DatasetModel::rejectSuggestion(int row) {
  if (suggestion(row).isEmpty()) return false;
  meta_.rows[size_t(row)].raw.erase(dataset::kSuggestedKey);
  rowChanged(row);
  return true;
}

bool DatasetModel::setSuggestion(int row, const QString& text) {
  if (row < 0 || row >= rowCount() || text.isEmpty()) return false;
  auto& raw = meta_.rows[size_t(row)].raw;
  if (raw.is_null()) raw = nlohmann::ordered_json::object();
  if (!raw.is_object()) return false;  // a malformed row is written back as it was
  raw[dataset::kSuggestedKey] = text.toStdString();
  Q_EMIT dataChanged(index(row, 0), index(row, ColumnCount - 1));
  return true;
}

int DatasetModel::suggestionCount() const {
  int n = 0;
  for (int r = 0; r < rowCount(); ++r)
    if (!suggestion(r).isEmpty()) ++n;
  return n;
}

}  // namespace ws
