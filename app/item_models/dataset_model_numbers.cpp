// SPDX-License-Identifier: Apache-2.0
// DatasetModel's numbers: the table's columns, the fields the filter and the histograms read,
// scores and trims written into rows, and what the trainer makes of each row (bucket, windows).
#include <QFileInfo>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "dataset/buckets.h"
#include "dataset/frame_sampling.h"
#include "item_models/dataset_model.h"
#include "text/umt5_tokenizer.h"

namespace ws {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

double rawNumber(const dataset::MetaRow& row, const char* key) {
  if (!row.raw.is_object()) return kNaN;
  const auto it = row.raw.find(key);
  return it != row.raw.end() && it->is_number() ? it->get<double>() : kNaN;
}

QString scoreText(double v, int decimals) { return std::isnan(v) ? QString() : QString::number(v, 'f', decimals); }

}  // namespace

int DatasetModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant DatasetModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
    return QAbstractListModel::headerData(section, orientation, role);
  switch (section) {
    case NameColumn: return tr("File");
    case FramesColumn: return tr("Frames");
    case SizeColumn: return tr("Size");
    case MotionColumn: return tr("Motion");
    case SharpnessColumn: return tr("Sharpness");
    case BrightnessColumn: return tr("Brightness");
    case TokensColumn: return tr("Tokens");
    case CaptionColumn: return tr("Caption");
    default: return {};
  }
}

QVariant DatasetModel::columnData(size_t r, int column, int role) const {
  const int row = int(r);
  const auto num = [&](const char* field) { return number(row, QString::fromLatin1(field)); };
  if (role == SortRole) {
    switch (column) {
      case NameColumn: return QString::fromStdString(meta_.rows[r].file_path);
      case FramesColumn: return num("frames");
      case SizeColumn: return num("width") * num("height");
      case MotionColumn: return num("motion_score");
      case SharpnessColumn: return num("sharpness");
      case BrightnessColumn: return num("brightness");
      case TokensColumn: return num("tokens");
      case CaptionColumn: return QString::fromStdString(meta_.rows[r].text);
      default: return {};
    }
  }
  if (role == Qt::ToolTipRole || role == CaptionRole || role >= Qt::UserRole)
    return data(index(row, 0), role);  // the row's roles answer on every column
  if (role != Qt::DisplayRole) return {};
  switch (column) {
    case FramesColumn: return scoreText(num("frames"), 0);
    case SizeColumn: return data(index(row, 0), SizeRole);
    case MotionColumn: return scoreText(num("motion_score"), 3);
    case SharpnessColumn: return scoreText(num("sharpness"), 1);
    case BrightnessColumn: return scoreText(num("brightness"), 1);
    case TokensColumn: return scoreText(num("tokens"), 0);
    case CaptionColumn: {
      const std::string& t = meta_.rows[r].text;
      return t.size() > 200 ? QString::fromUtf8(t.data(), 200) + QStringLiteral("…") : QString::fromStdString(t);
    }
    default: return {};
  }
}

void DatasetModel::allChanged(const QList<int>& roles) {
  if (!meta_.rows.empty()) Q_EMIT dataChanged(index(0, 0), index(rowCount() - 1, ColumnCount - 1), roles);
}

double DatasetModel::number(int r, const QString& field) const {
  if (r < 0 || r >= rowCount()) return kNaN;
  const dataset::MetaRow& row = meta_.rows[size_t(r)];
  const dataset::RowReport* rep = size_t(r) < reports_.size() ? &reports_[size_t(r)] : nullptr;
  const bool known = rep && rep->readable;
  if (field == QLatin1String("frames")) {
    const qint64 n = fileFrames(r);
    return n > 0 ? double(n) : kNaN;
  }
  if (field == QLatin1String("width"))
    return row.width ? double(*row.width) : known ? double(rep->width) : rawNumber(row, "width");
  if (field == QLatin1String("height"))
    return row.height ? double(*row.height) : known ? double(rep->height) : rawNumber(row, "height");
  if (field == QLatin1String("tokens")) {
    const int n = captionTokens(r);
    return n < 0 ? kNaN : double(n);
  }
  if (field == QLatin1String("trim_in")) return row.trim ? double(row.trim->first) : kNaN;
  if (field == QLatin1String("trim_out")) return row.trim ? double(row.trim->second) : kNaN;
  if (field == QLatin1String("fps")) return known && rep->fps > 0 ? rep->fps : rawNumber(row, "fps");
  if (field == QLatin1String("duration_s"))
    return known && rep->duration_s > 0 ? rep->duration_s : rawNumber(row, "duration_s");
  return rawNumber(row, field.toLatin1().constData());
}

qint64 DatasetModel::fileFrames(int r) const {
  if (r < 0 || r >= rowCount()) return 0;
  const dataset::MetaRow& row = meta_.rows[size_t(r)];
  if (row.is_image()) return 1;
  if (size_t(r) < reports_.size() && reports_[size_t(r)].readable) return reports_[size_t(r)].frames;
  const double n = rawNumber(row, "frames");
  return std::isnan(n) || n < 1 ? 0 : qint64(n);
}

void DatasetModel::setScores(int r, double motion, double sharpness, double brightness) {
  if (r < 0 || r >= rowCount()) return;
  auto& raw = meta_.rows[size_t(r)].raw;
  if (!raw.is_object()) raw = nlohmann::ordered_json::object();
  // Rounded as the engine's `dataset score` writes them.
  raw["motion_score"] = std::round(motion * 1e5) / 1e5;
  raw["sharpness"] = std::round(sharpness * 1e3) / 1e3;
  raw["brightness"] = std::round(brightness * 1e3) / 1e3;
  rowModified_[size_t(r)] = true;
  Q_EMIT dataChanged(index(r, 0), index(r, ColumnCount - 1));
  setModified(true);
}

QVector<int> DatasetModel::lowestRows(const QString& field, double percent, double* cut) const {
  std::vector<std::pair<double, int>> values;
  for (int r = 0; r < rowCount(); ++r)
    if (const double v = number(r, field); !std::isnan(v)) values.emplace_back(v, r);
  QVector<int> out;
  const auto k = size_t(std::floor(double(values.size()) * std::clamp(percent, 0.0, 100.0) / 100.0 + 1e-9));
  if (cut) *cut = kNaN;
  if (k == 0) return out;
  std::sort(values.begin(), values.end());
  for (size_t i = 0; i < k; ++i) out << values[i].second;
  if (cut) *cut = values[k - 1].first;
  std::sort(out.begin(), out.end());
  return out;
}

bool DatasetModel::setTokenizer(const QString& path, QString* error) {
  tokenCounts_.clear();
  tokenizer_.reset();
  bool ok = true;
  if (!path.isEmpty()) {
    try {
      tokenizer_ = std::make_shared<text::Umt5Tokenizer>(path.toStdString());
    } catch (const std::exception& e) {
      if (error) *error = QString::fromUtf8(e.what());
      ok = false;
    }
  }
  allChanged();
  return ok;
}

int DatasetModel::captionTokens(int r) const {
  if (!tokenizer_ || r < 0 || r >= rowCount()) return -1;
  const std::string& caption = meta_.rows[size_t(r)].text;
  if (const auto it = tokenCounts_.find(caption); it != tokenCounts_.end()) return it->second;
  int n = -1;
  try {
    n = int(tokenizer_->encode(caption).content_tokens);
  } catch (const std::exception&) {
  }
  tokenCounts_.emplace(caption, n);
  return n;
}

bool DatasetModel::setTrim(int r, qint64 in, qint64 out, QString* error) {
  if (r < 0 || r >= rowCount()) return false;
  dataset::MetaRow& row = meta_.rows[size_t(r)];
  if (in == -1 && out == -1) {
    row.trim.reset();
    if (row.raw.is_object()) row.raw.erase("trim");
  } else {
    const qint64 total = fileFrames(r);
    QString why;
    if (row.is_image()) why = tr("a picture has no frames to trim");
    else if (in < 0 || out <= in) why = tr("the out point must come after the in point");
    else if (total > 0 && out > total) why = tr("the out point %1 is past the file's %2 frames").arg(out).arg(total);
    if (!why.isEmpty()) {
      if (error) *error = why;
      return false;
    }
    row.trim = std::make_pair(int64_t(in), int64_t(out));
  }
  rowChanged(r);
  return true;
}

// What the loader does with the row (docs/design/upsampler-training.md §3.3, §4.2; datasets.md §5): the
// bucket its size falls in, and the frames and windows a clip gives; the functions the engine's loader calls.
QString DatasetModel::trainingText(size_t r) const {
  const dataset::MetaRow& row = meta_.rows[r];
  const dataset::RowReport* rep = r < reports_.size() ? &reports_[r] : nullptr;
  if (rep && !rep->readable)
    return tr("dropped: %1").arg(QString::fromStdString(rep->problems.empty() ? "unreadable" : rep->problems.front()));
  const double H0 = number(int(r), QStringLiteral("height")), W0 = number(int(r), QStringLiteral("width"));
  if (!(H0 > 0) || !(W0 > 0)) return tr("size unknown: Check files");
  dataset::BucketSize b;
  try {
    b = dataset::bucket_size(qint64(H0), qint64(W0), shape_.sampleSize, shape_.scale);
  } catch (const std::exception& e) {
    return tr("no bucket: %1").arg(QString::fromUtf8(e.what()));
  }
  const QString size = tr("trains at %1×%2 (aspect bucket h/w %3)").arg(b.W).arg(b.H).arg(b.key);
  if (row.is_image()) return size + tr(", 1 frame");
  const qint64 inFile = fileFrames(int(r));
  if (inFile <= 0) return size + tr("; frames: Check files");
  const qint64 T = row.trim ? row.trim->second - row.trim->first : inFile;
  const QString trimmed = row.trim ? tr(" (trimmed to %1–%2)").arg(row.trim->first).arg(row.trim->second) : QString();
  const dataset::ClipPlan plan = dataset::plan_clip(T, shape_.frames, shape_.stride);
  if (shape_.extraction.mode != dataset::Extraction::Random) {
    const auto windows = dataset::extraction_windows(T, number(int(r), QStringLiteral("fps")), shape_.frames,
                                                     shape_.stride, shape_.extraction);
    if (windows.empty()) return tr("dropped: too short (%1 frames%2)").arg(T).arg(trimmed);
    QStringList starts;
    for (size_t i = 0; i < windows.size() && i < 8; ++i) starts << QString::number(windows[i].front());
    if (windows.size() > 8) starts << QStringLiteral("…");
    const qint64 L = dataset::batch_frames(shape_.frames, qint64(windows.front().size()));
    return size + tr(", %n sample(s) (%1): %2 frames each from frame %3 of its %4%5", nullptr, int(windows.size()))
                      .arg(QString::fromStdString(dataset::extraction_name(shape_.extraction.mode)))
                      .arg(L)
                      .arg(starts.join(QStringLiteral(", ")))
                      .arg(inFile)
                      .arg(trimmed);
  }
  if (plan.n == 0) return tr("dropped: too short (%1 frames%3, stride %2)").arg(T).arg(shape_.stride).arg(trimmed);
  const qint64 L = dataset::batch_frames(shape_.frames, plan.n);
  return size + tr(", %1 of its %3 frames%5 at stride %2 (start 0–%4)")
                    .arg(L)
                    .arg(shape_.stride)
                    .arg(inFile)
                    .arg(plan.max_start)
                    .arg(trimmed);
}

QVector<DatasetModel::BucketCount> DatasetModel::bucketCounts() const {
  std::map<QString, BucketCount> counts;
  for (int r = 0; r < rowCount(); ++r) {
    const dataset::MetaRow& row = meta_.rows[size_t(r)];
    const dataset::RowReport* rep = size_t(r) < reports_.size() ? &reports_[size_t(r)] : nullptr;
    const double H0 = number(r, QStringLiteral("height")), W0 = number(r, QStringLiteral("width"));
    QString key;
    qint64 samples = 1;
    if (rep && !rep->readable) key = tr("dropped");
    else if (!(H0 > 0) || !(W0 > 0) || (!row.is_image() && fileFrames(r) <= 0)) key = tr("unknown");
    else {
      if (!row.is_image()) {
        const qint64 T = row.trim ? row.trim->second - row.trim->first : fileFrames(r);
        if (shape_.extraction.mode != dataset::Extraction::Random)
          samples = qint64(dataset::extraction_windows(T, number(r, QStringLiteral("fps")), shape_.frames,
                                                       shape_.stride, shape_.extraction)
                               .size());
        else samples = dataset::plan_clip(T, shape_.frames, shape_.stride).n > 0 ? 1 : 0;
      }
      if (samples == 0) key = tr("dropped");
      else {
        const auto b = dataset::bucket_size(qint64(H0), qint64(W0), shape_.sampleSize, shape_.scale);
        key = QStringLiteral("%1 %2×%3").arg(QString::fromStdString(row.type)).arg(b.W).arg(b.H);
      }
    }
    BucketCount& c = counts[key];
    c.bucket = key;
    ++c.rows;
    c.samples += samples;
  }
  QVector<BucketCount> out;
  for (auto& [k, c] : counts) out << c;
  return out;
}

}  // namespace ws
