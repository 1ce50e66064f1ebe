// SPDX-License-Identifier: Apache-2.0
// A VideoX-Fun metadata.json as a list model for the dataset page: one item per row with its
// file, type, caption, size and, once probed, frames, fps and problems; thumbnails arrive from
// a background loader. Captions and sizes are edited here and saved atomically with the
// previous file kept as metadata.json.bak; fields the page does not know stay as they were.
#pragma once

#include <QAbstractListModel>
#include <QFutureWatcher>
#include <QCache>
#include <QImage>
#include <QStringList>
#include <QVector>

#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

#include "dataset/frame_sampling.h"
#include "dataset/metadata.h"
#include "dataset/row_check.h"

namespace ws {
namespace text {
class Umt5Tokenizer;
}

class ThumbnailLoader;

class DatasetModel : public QAbstractListModel {
  Q_OBJECT
 public:
  enum Role {
    CaptionRole = Qt::UserRole + 1,
    FileRole,        // file_path as written
    PathRole,        // resolved path
    TypeRole,        // video | image
    SizeRole,        // "W×H" or "" when unknown
    FramesRole,      // probed frame count, 0 before the probe
    ProblemsRole,    // QStringList: metadata problems, then the probe's
    ModifiedRole,    // bool: edited since the last save
    TrainingRole,    // QString: the size and frames a run with trainingShape() trains on, or why it drops the row
    EmbeddingRole,   // QString: "ready", "missing" or "other encoder" for the chosen encoder; "" when none is chosen
    SuggestionRole,  // QString: the model caption waiting for review (`text_suggested`), "" when none
  };

  // The run options that decide a row's bucket and frames (video_sample_size, video_sample_n_frames,
  // video_sample_stride, and the alignment scale: 1.5 for the upsampler, 2 for the experts' 32 px).
  struct TrainingShape {
    qint64 sampleSize = 512, frames = 81, stride = 2;
    double scale = 1.5;
    dataset::ExtractionRule extraction;  // frame_extraction: how many samples a clip gives
  };

  // The table view's columns (the grid shows the first); SortRole gives numbers to sort by.
  enum Column {
    NameColumn,
    FramesColumn,
    SizeColumn,
    MotionColumn,
    SharpnessColumn,
    BrightnessColumn,
    TokensColumn,
    CaptionColumn,
    ColumnCount
  };
  static constexpr int SortRole = Qt::UserRole + 100;

  // Rows and samples per aspect bucket for the training shape (rows whose size or frames are not
  // known yet count as "unknown", dropped rows as "dropped").
  struct BucketCount {
    QString bucket;
    int rows = 0;
    qint64 samples = 0;
  };
  QVector<BucketCount> bucketCounts() const;

  explicit DatasetModel(QObject* parent = nullptr);
  ~DatasetModel() override;

  // Replaces the model's content; false (and `error`) leaves it as it was.
  bool load(const QString& metadataPath, QString* error);
  bool save(QString* error);
  bool isModified() const { return modified_; }
  QString path() const { return path_; }

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  bool setData(const QModelIndex& index, const QVariant& value, int role = Qt::EditRole) override;
  Qt::ItemFlags flags(const QModelIndex& index) const override;

  bool setCaption(int row, const QString& text);
  void setTrainingShape(const TrainingShape& shape);
  TrainingShape trainingShape() const { return shape_; }
  // Checks every row against its file in the background (the `probe` verb's check).
  void probe();
  bool probing() const { return watcher_.isRunning(); }
  // Every row has a report of the last check (rows added since need Check files again).
  bool checked() const { return !meta_.rows.empty() && reports_.size() == meta_.rows.size(); }
  // Writes the probed width/height into rows that lack them or disagree (probe --fix).
  int fillSizesFromProbe();
  // Rows with problems / modified rows, for the status line.
  int problemCount() const;
  // The text embeddings the rows are checked against (encode-text's folder and checkpoint);
  // empty strings: none chosen. Re-reads every row's file state.
  void setTextEmbeddings(const QString& dir, const QString& encoderPath);
  void refreshEmbeddings();
  // Rows whose embedding is ready for the chosen encoder.
  int embeddingsReady() const;
  // Rows added and removed (dataset_model_rows.cpp). A dataset made from files (the import): not
  // yet saved; Save writes it to metadataPath.
  void adopt(const QString& metadataPath, std::vector<dataset::MetaRow> rows);
  // Appends a row per file (probed from its header, its sidecar caption as text; file_path relative
  // to the metadata's folder when inside it). Files left out are named in `problems`.
  int addFiles(const QStringList& files, QStringList* problems);
  // Removes the rows (any order); undoable, one removal at a time, until saved or another dataset opens.
  int removeDatasetRows(QVector<int> rows);
  bool canUndoRemove() const { return !removed_.empty(); }
  bool undoRemove();
  // Each row's caption as a .txt beside its file; -1 with `error`.
  int exportCaptions(QString* error);

  // Captions at scale (dataset_model_captions.cpp), on `rows` (all rows when empty); each returns the
  // number of captions changed, all undone by Revert until saved.
  int replaceInCaptions(const QString& find, const QString& replace, const QVector<int>& rows = {},
                        Qt::CaseSensitivity cs = Qt::CaseSensitive);
  // "word, caption" on every caption that does not start with the word already.
  int addTriggerWord(const QString& word, const QVector<int>& rows = {});
  // The word (with the comma and spaces after it) taken off the front of every caption that starts with it.
  int removeTriggerWord(const QString& word, const QVector<int>& rows = {});

  // Suggested captions (`text_suggested`, written by `wanstudio-engine caption`;
  // dataset_model_suggestions.cpp). Accept makes the suggestion the caption and drops the key,
  // Reject drops the key; both are edits like any caption edit (Save writes them, Revert undoes).
  QString suggestion(int row) const;
  bool acceptSuggestion(int row);
  bool rejectSuggestion(int row);
  // A suggestion that arrived while the page is open (the caption job's event): set in memory only,
  // not an edit, since the job writes it into the file itself.
  bool setSuggestion(int row, const QString& text);
  int suggestionCount() const;

  // A row's number by RowFilter's field names (motion_score, sharpness, brightness from `dataset
  // score`; frames, width, height, fps, duration_s from the row or the check); NaN when unknown.
  double number(int row, const QString& field) const;
  // Writes the scores into the row (the keys `dataset score` writes); undone by Revert until saved.
  void setScores(int row, double motion, double sharpness, double brightness);
  // Rows whose `field` is below the `percent` lowest values' cut (rows without the number are not
  // counted or returned), and the cut itself.
  QVector<int> lowestRows(const QString& field, double percent, double* cut = nullptr) const;
  // The UMT5 tokenizer captions are counted with (spiece.model or its folder; empty: none). False
  // with `error` when it cannot be loaded (the counts are then unknown).
  bool setTokenizer(const QString& path, QString* error = nullptr);
  bool hasTokenizer() const { return bool(tokenizer_); }
  // Tokens the row's caption takes (EOS not counted, before the cut at 511); -1 without a tokenizer.
  int captionTokens(int row) const;
  // The dataset's captions at a glance: rows with none, rows whose caption another row has word
  // for word, rows the text encoder cuts (over 511 tokens; -1 without a tokenizer).
  struct CaptionCounts {
    int empty = 0, duplicated = 0, overLong = -1;
  };
  CaptionCounts captionCounts() const;
  // Sets or clears (in == out == -1) a row's trim [in, out); false when the range is bad for the file.
  bool setTrim(int row, qint64 in, qint64 out, QString* error = nullptr);
  // The frames a row's file holds (the check's count, else the row's `frames`), 0 when unknown.
  qint64 fileFrames(int row) const;

  QImage thumbnail(int row) const;
  ThumbnailLoader* thumbnailLoader() const { return thumbnails_; }
  // Asks for the thumbnails of `rows` first (those on screen). Nothing else is decoded: rows get
  // thumbnails when they are seen (and from the disk cache after the first time).
  void requestThumbnails(const QVector<int>& rows);

 Q_SIGNALS:
  void probeFinished(int rowsWithProblems);
  void modifiedChanged(bool modified);
  void thumbnailArrived(int row);

 private:
  void setModified(bool on);
  QString trainingText(size_t row) const;
  QVariant columnData(size_t row, int column, int role) const;
  // Every cell of every row changed (the grid and the table).
  void allChanged(const QList<int>& roles = {});
  int embeddingState(size_t row, const std::string& encoderIdentity) const;
  void rowChanged(int row);
  // Replaces everything (load, adopt).
  void reset(const QString& path, dataset::Metadata meta, bool modified);
  // Row numbers moved: thumbnails in flight are dropped and the missing ones asked for again.
  void restartThumbnails();
  void setRowsChanged();

  // One row taken out by removeDatasetRows, with what the model knew of it.
  struct RemovedRow {
    size_t index;
    dataset::MetaRow row;
    bool modified;
    std::optional<dataset::RowReport> report;
  };
  std::vector<std::vector<RemovedRow>> removed_;  // one entry per removal, the latest last

  QString path_;
  dataset::Metadata meta_;
  std::vector<dataset::RowReport> reports_;  // empty until probed
  // Thumbnails by resolved file path, least recently used dropped past kThumbnailBudgetKiB: a
  // dataset of 100,000 rows scrolled end to end must not keep 100,000 images.
  static constexpr int kThumbnailBudgetKiB = 128 * 1024;
  static constexpr int kEagerThumbnails = 64;  // asked for at open, before the page says what is on screen
  mutable QCache<QString, QImage> thumbs_{kThumbnailBudgetKiB};
  std::shared_ptr<text::Umt5Tokenizer> tokenizer_;
  mutable std::unordered_map<std::string, int> tokenCounts_;  // caption -> tokens, made when first asked
  QString rowPath(int row) const;
  std::vector<bool> rowModified_;
  QString embeddingsDir_, encoderPath_;
  std::vector<int> embedding_;  // dataset::EmbeddingState per row, or -1 with no encoder chosen
  bool modified_ = false;
  TrainingShape shape_;
  ThumbnailLoader* thumbnails_;
  QFutureWatcher<std::vector<dataset::RowReport>> watcher_;
};

}  // namespace ws
