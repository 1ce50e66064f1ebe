// SPDX-License-Identifier: Apache-2.0
// The dataset page: a metadata.json as a thumbnail grid with a filter, and beside it the
// selected row's preview, facts (size, frames, problems) and caption editor. Save writes the
// file atomically and keeps metadata.json.bak; "Check files" runs the same row check as
// `wanstudio-engine probe` and training's start, in the background; "Fill sizes" writes the
// probed width/height into the rows. A suggested caption (SuggestionBox) is accepted or rejected
// under the editor. The row above the grid (DatasetEditBar) makes a dataset
// from a folder and adds, removes and exports rows.
#pragma once

#include <QVector>
#include <QWidget>

class QLabel;
class QLineEdit;
class QListView;
class QPlainTextEdit;
class QComboBox;
class QPushButton;
class QSpinBox;
class QDoubleSpinBox;
class QSortFilterProxyModel;
class QStackedWidget;
class QTableView;
class QTabWidget;
class QTimer;

namespace ws {

class BarChart;
class BucketsPanel;
class CaptionEncoderPanel;
class CaptionPanel;
class ExtractionPicker;
class ScoresPanel;
class SuggestionBox;
class TrimBar;
class CaptionToolsBar;
class DatasetEditBar;
class DatasetModel;

class DatasetPage : public QWidget {
  Q_OBJECT
 public:
  explicit DatasetPage(QWidget* parent = nullptr);

  // Captions longer than this are shown cut and read-only (text layout is on the GUI thread).
  static constexpr int kCaptionEditLimit = 20000;

  // Opens a metadata.json (asking about unsaved edits first); false with `error` when it cannot be read.
  // A folder opens its metadata.json, or, without one, is imported into <folder>/metadata.json (New
  // from folder's import, on its thread; the result opens when it is written).
  bool openDataset(const QString& path, QString* error = nullptr);
  // Unsaved edits: ask to save or discard (true: go on). Always true when nothing is modified.
  bool maybeKeepEdits();
  // Tests answer the question themselves.
  void setAskBeforeDiscard(bool ask) { ask_ = ask; }

  DatasetModel* model() const { return model_; }
  QListView* grid() const { return grid_; }
  QLineEdit* filter() const { return filter_; }
  QPlainTextEdit* captionEditor() const { return caption_; }
  QLabel* status() const { return status_; }
  QLabel* facts() const { return facts_; }
  QLabel* training() const { return training_; }
  // The run options the "trains at" line follows.
  QSpinBox* sampleSize() const { return sampleSize_; }
  QSpinBox* frames() const { return frames_; }
  QSpinBox* stride() const { return stride_; }
  QComboBox* trainer() const { return trainer_; }
  // frame_extraction and its parameter (step, windows or fps, by the mode).
  QComboBox* extraction() const;
  QDoubleSpinBox* extractionParameter() const;
  // The rows as a sortable table (File, Frames, Size, Motion, Sharpness, Brightness, Caption) instead of the grid.
  QTableView* table() const { return table_; }
  QPushButton* tableToggle() const { return tableToggle_; }
  QTabWidget* tabs() const { return tabs_; }
  ScoresPanel* scores() const { return scores_; }
  TrimBar* trim() const { return trim_; }
  BarChart* bucketChart() const;
  CaptionEncoderPanel* textEncoder() const { return encoder_; }
  DatasetEditBar* edits() const { return edits_; }
  CaptionToolsBar* captionTools() const { return captionTools_; }
  SuggestionBox* suggestion() const { return suggestion_; }
  CaptionPanel* captioner() const { return captioner_; }
  // The source row of the grid's current item, -1 without one.
  int currentRow() const;
  // The source rows of the grid's selection, ascending.
  QVector<int> selectedRows() const;
  void selectRow(int sourceRow);

 public Q_SLOTS:
  // Shows the current row again (after edits made elsewhere, such as a find and replace).
  void refreshCurrent() { showRow(currentRow()); }
  void chooseAndOpen();
  void chooseFolderAndOpen();
  bool save();
  void revert();
  void checkFiles();
  void fillSizes();

 Q_SIGNALS:
  void datasetOpened(const QString& path);

 private:
  void showRow(int sourceRow);
  void updateStatus();
  void requestVisibleThumbnails();
  void applyTrainingShape();
  void refreshBuckets();

  DatasetModel* model_;
  QSortFilterProxyModel* proxy_;
  QListView* grid_;
  QLineEdit* filter_;
  QLabel* preview_;
  QLabel* facts_;
  QLabel* problems_;
  QLabel* training_;
  QSpinBox *sampleSize_, *frames_, *stride_;
  QComboBox* trainer_;
  ExtractionPicker* extraction_;
  QStackedWidget* views_;
  QTableView* table_;
  QPushButton* tableToggle_;
  QTabWidget* tabs_;
  ScoresPanel* scores_ = nullptr;
  TrimBar* trim_ = nullptr;
  BucketsPanel* buckets_ = nullptr;
  CaptionEncoderPanel* encoder_ = nullptr;
  DatasetEditBar* edits_ = nullptr;
  CaptionToolsBar* captionTools_ = nullptr;
  SuggestionBox* suggestion_ = nullptr;
  CaptionPanel* captioner_ = nullptr;
  QPlainTextEdit* caption_;
  QLabel* status_;
  QPushButton *save_, *revert_, *check_, *fill_;
  QTimer* visibleTimer_;
  QTimer* statusTimer_;  // the status line again shortly after edits (its caption counts)
  bool ask_ = true;
  bool showing_ = false;  // filling the editor: not an edit
};

}  // namespace ws
