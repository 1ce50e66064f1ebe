// SPDX-License-Identifier: Apache-2.0
#include "item_models/dataset_model.h"

#include <QFileInfo>
#include <QtConcurrent>

#include "core/error.h"
#include "dataset/text_embedding_file.h"
#include "thumbnail_loader.h"

namespace ws {

DatasetModel::DatasetModel(QObject* parent) : QAbstractListModel(parent), thumbnails_(new ThumbnailLoader(160, this)) {
  connect(thumbnails_, &ThumbnailLoader::thumbnailReady, this, [this](int row, const QImage& image, quint64 gen) {
    if (gen != thumbnails_->generation() || row < 0 || row >= rowCount()) return;  // a previous dataset's
    thumbs_.insert(rowPath(row), new QImage(image), std::max<qsizetype>(1, image.sizeInBytes() / 1024));
    const QModelIndex i = index(row);
    Q_EMIT dataChanged(i, i, {Qt::DecorationRole});
    Q_EMIT thumbnailArrived(row);
  });
  connect(&watcher_, &QFutureWatcher<std::vector<dataset::RowReport>>::finished, this, [this] {
    auto reports = watcher_.result();
    if (reports.size() != meta_.rows.size()) return;  // the dataset changed meanwhile
    reports_ = std::move(reports);
    allChanged();
    Q_EMIT probeFinished(problemCount());
  });
}

DatasetModel::~DatasetModel() { watcher_.waitForFinished(); }

bool DatasetModel::load(const QString& metadataPath, QString* error) {
  dataset::Metadata meta;
  try {
    meta = dataset::read_metadata(metadataPath.toStdString());
  } catch (const std::exception& e) {
    if (error) *error = QString::fromUtf8(e.what());
    return false;
  }
  reset(metadataPath, std::move(meta), false);
  return true;
}

void DatasetModel::reset(const QString& path, dataset::Metadata meta, bool modified) {
  watcher_.waitForFinished();
  beginResetModel();
  path_ = path;
  meta_ = std::move(meta);
  reports_.clear();
  removed_.clear();
  thumbs_.clear();
  rowModified_.assign(meta_.rows.size(), modified);
  thumbnails_->clear();
  embedding_.assign(meta_.rows.size(), -1);
  endResetModel();
  refreshEmbeddings();
  setModified(modified);
  restartThumbnails();
}

bool DatasetModel::save(QString* error) {
  try {
    dataset::write_metadata(path_.toStdString(), meta_.rows);
  } catch (const std::exception& e) {
    if (error) *error = QString::fromUtf8(e.what());
    return false;
  }
  rowModified_.assign(meta_.rows.size(), false);
  removed_.clear();  // what is saved is the new starting point
  if (!meta_.rows.empty()) Q_EMIT dataChanged(index(0), index(rowCount() - 1), {ModifiedRole});
  setModified(false);
  return true;
}

int DatasetModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : int(meta_.rows.size()); }

QVariant DatasetModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rowCount()) return {};
  const size_t r = size_t(index.row());
  const dataset::MetaRow& row = meta_.rows[r];
  const dataset::RowReport* rep = r < reports_.size() ? &reports_[r] : nullptr;
  if (index.column() > 0 || role == SortRole) return columnData(r, index.column(), role);
  switch (role) {
    case Qt::DisplayRole:
      // ✎: a suggested caption waits for review (the filter ? lists these rows).
      return QFileInfo(QString::fromStdString(row.file_path)).fileName() +
             (suggestion(int(r)).isEmpty() ? QString() : QStringLiteral(" ✎")) +
             (rowModified_[r] ? QStringLiteral(" *") : QString());
    case Qt::AccessibleTextRole:
      return QFileInfo(QString::fromStdString(row.file_path)).fileName() +
             (suggestion(int(r)).isEmpty() ? QString() : tr(", suggested caption to review")) +
             (rowModified_[r] ? tr(", edited") : QString());
    case SuggestionRole: return suggestion(int(r));
    case Qt::ToolTipRole:
      // A tooltip lays out all its text: a few hundred characters say what the caption is.
      return row.text.size() > 400 ? QString::fromUtf8(row.text.data(), 400) + QStringLiteral("…")
                                   : QString::fromStdString(row.text);
    case CaptionRole: return QString::fromStdString(row.text);
    case Qt::DecorationRole: {
      const QImage* t = thumbs_.object(rowPath(int(r)));
      return t ? QVariant(*t) : QVariant();
    }
    case Qt::SizeHintRole:
      return QSize(172, 196);  // a thumbnail and two lines of file name, before any thumbnail exists
    case FileRole: return QString::fromStdString(row.file_path);
    case PathRole: return QString::fromStdString(meta_.resolve(row));
    case TypeRole: return QString::fromStdString(row.type);
    case SizeRole:
      if (row.width && row.height) return QStringLiteral("%1×%2").arg(*row.width).arg(*row.height);
      if (rep && rep->readable) return QStringLiteral("%1×%2 (from the file)").arg(rep->width).arg(rep->height);
      return QString();
    case FramesRole: return rep ? qlonglong(rep->frames) : qlonglong(0);
    case ProblemsRole: {
      QStringList p;
      for (const auto& s : row.problems) p << QString::fromStdString(s);
      if (rep)
        for (const auto& s : rep->problems)
          if (!p.contains(QString::fromStdString(s))) p << QString::fromStdString(s);
      return p;
    }
    case ModifiedRole: return bool(rowModified_[r]);
    case TrainingRole: return trainingText(r);
    case EmbeddingRole: {
      const int e = r < embedding_.size() ? embedding_[r] : -1;
      if (e < 0) return QString();
      switch (static_cast<dataset::EmbeddingState>(e)) {
        case dataset::EmbeddingState::Ready: return QStringLiteral("ready");
        case dataset::EmbeddingState::Missing: return QStringLiteral("missing");
        case dataset::EmbeddingState::OtherEncoder: return QStringLiteral("other encoder");
      }
      return QString();
    }
    default: return {};
  }
}

void DatasetModel::setTextEmbeddings(const QString& dir, const QString& encoderPath) {
  embeddingsDir_ = dir;
  encoderPath_ = encoderPath;
  refreshEmbeddings();
}

int DatasetModel::embeddingState(size_t r, const std::string& identity) const {
  return int(dataset::embedding_state(dataset::text_embedding_path(embeddingsDir_.toStdString(), meta_, meta_.rows[r]),
                                      identity));
}

void DatasetModel::refreshEmbeddings() {
  embedding_.assign(meta_.rows.size(), -1);
  if (!embeddingsDir_.isEmpty() && !encoderPath_.isEmpty()) {
    // The engine's own rules: the file a row's caption maps to, and the encoder that made it.
    const std::string identity = dataset::encoder_identity(encoderPath_.toStdString());
    for (size_t r = 0; r < meta_.rows.size(); ++r) embedding_[r] = embeddingState(r, identity);
  }
  if (!meta_.rows.empty()) Q_EMIT dataChanged(index(0), index(rowCount() - 1), {EmbeddingRole});
}

int DatasetModel::embeddingsReady() const {
  return int(std::count(embedding_.begin(), embedding_.end(), int(dataset::EmbeddingState::Ready)));
}

bool DatasetModel::setData(const QModelIndex& index, const QVariant& value, int role) {
  if (!index.isValid() || (role != Qt::EditRole && role != CaptionRole)) return false;
  return setCaption(index.row(), value.toString());
}

Qt::ItemFlags DatasetModel::flags(const QModelIndex& index) const {
  return index.isValid() ? Qt::ItemIsSelectable | Qt::ItemIsEnabled | Qt::ItemIsEditable : Qt::NoItemFlags;
}

bool DatasetModel::setCaption(int row, const QString& text) {
  if (row < 0 || row >= rowCount()) return false;
  dataset::MetaRow& r = meta_.rows[size_t(row)];
  const std::string t = text.toStdString();
  if (r.text == t) return true;
  r.text = t;
  // A caption was the one problem a missing `text` field reports.
  r.problems.erase(std::remove_if(r.problems.begin(), r.problems.end(),
                                  [](const std::string& p) { return p.find("`text`") != std::string::npos; }),
                   r.problems.end());
  // Another caption is another embedding file.
  if (size_t(row) < embedding_.size() && embedding_[size_t(row)] >= 0)
    embedding_[size_t(row)] = embeddingState(size_t(row), dataset::encoder_identity(encoderPath_.toStdString()));
  rowChanged(row);
  return true;
}

void DatasetModel::probe() {
  if (watcher_.isRunning() || meta_.rows.empty()) return;
  const dataset::Metadata copy = meta_;  // the probe reads its own copy while the user edits
  watcher_.setFuture(QtConcurrent::run([copy] {
    try {
      return dataset::check_rows(copy);
    } catch (const std::exception& e) {
      // No video support: every row reports why.
      std::vector<dataset::RowReport> out(copy.rows.size());
      for (size_t i = 0; i < out.size(); ++i) out[i].index = i, out[i].problems.push_back(e.what());
      return out;
    }
  }));
}

int DatasetModel::fillSizesFromProbe() {
  int changed = 0;
  for (size_t i = 0; i < reports_.size() && i < meta_.rows.size(); ++i) {
    const dataset::RowReport& rep = reports_[i];
    dataset::MetaRow& row = meta_.rows[i];
    if (!rep.readable || rep.width <= 0 || rep.height <= 0) continue;
    if (row.width == rep.width && row.height == rep.height) continue;
    row.width = rep.width;
    row.height = rep.height;
    row.problems.erase(std::remove_if(row.problems.begin(), row.problems.end(),
                                      [](const std::string& p) {
                                        return p.find("`width`") != std::string::npos ||
                                               p.find("`height`") != std::string::npos;
                                      }),
                       row.problems.end());
    // The probe's size complaints are answered now.
    auto& rp = reports_[i].problems;
    rp.erase(
        std::remove_if(rp.begin(), rp.end(), [](const std::string& p) { return p.find("width") != std::string::npos; }),
        rp.end());
    rowChanged(int(i));
    ++changed;
  }
  return changed;
}

int DatasetModel::problemCount() const {
  int n = 0;
  for (int r = 0; r < rowCount(); ++r)
    if (!data(index(r), ProblemsRole).toStringList().isEmpty()) ++n;
  return n;
}

QImage DatasetModel::thumbnail(int row) const {
  const QImage* t = row >= 0 && row < rowCount() ? thumbs_.object(rowPath(row)) : nullptr;
  return t ? *t : QImage();
}

QString DatasetModel::rowPath(int row) const { return QString::fromStdString(meta_.resolve(meta_.rows[size_t(row)])); }

void DatasetModel::requestThumbnails(const QVector<int>& rows) {
  for (auto it = rows.rbegin(); it != rows.rend(); ++it)
    if (*it >= 0 && *it < rowCount() && !thumbs_.contains(rowPath(*it)))
      thumbnails_->request(*it, QString::fromStdString(meta_.resolve(meta_.rows[size_t(*it)])));
}

void DatasetModel::setTrainingShape(const TrainingShape& shape) {
  shape_ = shape;
  allChanged({TrainingRole});
}

void DatasetModel::setModified(bool on) {
  if (modified_ == on) return;
  modified_ = on;
  Q_EMIT modifiedChanged(on);
}

void DatasetModel::rowChanged(int row) {
  rowModified_[size_t(row)] = true;
  Q_EMIT dataChanged(index(row, 0), index(row, ColumnCount - 1));
  setModified(true);
}

}  // namespace ws
