// SPDX-License-Identifier: Apache-2.0
// DatasetModel's rows coming and going: a dataset made by the import, files added, rows removed
// and put back, captions exported beside the files.
#include <QFileInfo>

#include <algorithm>

#include "core/fs.h"
#include "dataset/import_folder.h"
#include "dataset/sidecar_caption.h"
#include "item_models/dataset_model.h"
#include "thumbnail_loader.h"

namespace ws {

void DatasetModel::adopt(const QString& metadataPath, std::vector<dataset::MetaRow> rows) {
  dataset::Metadata meta;
  meta.path = metadataPath.toStdString();
  meta.data_dir = fs::dirname(fs::absolute(meta.path));
  meta.rows = std::move(rows);
  reset(metadataPath, std::move(meta), true);
}

void DatasetModel::restartThumbnails() {
  thumbnails_->clear();
  // The first screenful; the page asks for the rows it shows as they scroll into view.
  for (int r = std::min(rowCount(), kEagerThumbnails) - 1; r >= 0; --r)
    if (!thumbs_.contains(rowPath(r))) thumbnails_->request(r, rowPath(r));
}

void DatasetModel::setRowsChanged() {
  refreshEmbeddings();
  restartThumbnails();
  setModified(true);
}

int DatasetModel::addFiles(const QStringList& files, QStringList* problems) {
  if (path_.isEmpty()) {
    if (problems) *problems << tr("open or make a dataset first");
    return 0;
  }
  const std::string metaDir = fs::dirname(fs::absolute(path_.toStdString()));
  dataset::ImportOptions options;
  options.count_frames = false;  // the header's count: adding stays quick, Check files counts exactly
  std::vector<dataset::ImportProblem> found;
  std::vector<dataset::MetaRow> rows;
  for (const QString& f : files) {
    const std::string file = f.toStdString();
    if (!dataset::is_video_name(file) && !dataset::is_picture_name(file)) {
      found.push_back({file, "not a video or picture this studio reads", true});
      continue;
    }
    if (auto row = dataset::media_row(file, metaDir, options, found)) rows.push_back(std::move(*row));
  }
  if (problems)
    for (const auto& p : found)
      *problems << QStringLiteral("%1: %2").arg(QFileInfo(QString::fromStdString(p.file)).fileName(),
                                                QString::fromStdString(p.message));
  if (rows.empty()) return 0;
  watcher_.waitForFinished();
  const int first = rowCount();
  beginInsertRows({}, first, first + int(rows.size()) - 1);
  for (auto& r : rows) {
    meta_.rows.push_back(std::move(r));
    rowModified_.push_back(true);
    embedding_.push_back(-1);
  }
  reports_.clear();  // the check covers the rows it saw: Check files again
  endInsertRows();
  setRowsChanged();
  return int(rows.size());
}

int DatasetModel::removeDatasetRows(QVector<int> rows) {
  std::sort(rows.begin(), rows.end());
  rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
  rows.erase(std::remove_if(rows.begin(), rows.end(), [this](int r) { return r < 0 || r >= rowCount(); }), rows.end());
  if (rows.isEmpty()) return 0;
  watcher_.waitForFinished();
  std::vector<RemovedRow> taken;
  // From the last so the earlier numbers stay right.
  for (auto it = rows.rbegin(); it != rows.rend(); ++it) {
    const size_t r = size_t(*it);
    beginRemoveRows({}, *it, *it);
    RemovedRow gone{r, std::move(meta_.rows[r]), bool(rowModified_[r]), std::nullopt};
    if (r < reports_.size()) {
      gone.report = reports_[r];
      reports_.erase(reports_.begin() + long(r));
    }
    meta_.rows.erase(meta_.rows.begin() + long(r));
    rowModified_.erase(rowModified_.begin() + long(r));
    embedding_.erase(embedding_.begin() + long(r));
    endRemoveRows();
    taken.push_back(std::move(gone));
  }
  removed_.push_back(std::move(taken));
  setRowsChanged();
  return int(rows.size());
}

bool DatasetModel::undoRemove() {
  if (removed_.empty()) return false;
  watcher_.waitForFinished();
  std::vector<RemovedRow> back = std::move(removed_.back());
  removed_.pop_back();
  // They were taken from the last; put back from the first, each at its old number.
  const bool withReports = !reports_.empty();
  for (auto it = back.rbegin(); it != back.rend(); ++it) {
    const long r = long(it->index);
    beginInsertRows({}, int(r), int(r));
    meta_.rows.insert(meta_.rows.begin() + r, std::move(it->row));
    rowModified_.insert(rowModified_.begin() + r, it->modified);
    embedding_.insert(embedding_.begin() + r, -1);
    if (withReports && it->report) reports_.insert(reports_.begin() + r, *it->report);
    endInsertRows();
  }
  if (reports_.size() != meta_.rows.size()) reports_.clear();
  setRowsChanged();
  return true;
}

int DatasetModel::exportCaptions(QString* error) {
  try {
    return int(dataset::write_sidecar_captions(meta_));
  } catch (const std::exception& e) {
    if (error) *error = QString::fromUtf8(e.what());
    return -1;
  }
}

}  // namespace ws
