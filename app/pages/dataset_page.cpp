// SPDX-License-Identifier: Apache-2.0
#include "pages/dataset_page.h"

#include <QComboBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QHeaderView>
#include <QStackedWidget>
#include <QTabWidget>
#include <QTableView>

#include <algorithm>
#include <cmath>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QListView>
#include <QMenu>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScrollBar>
#include <QSortFilterProxyModel>
#include <QSpinBox>
#include <QSplitter>
#include <QTimer>
#include <QVBoxLayout>

#include "item_models/dataset_model.h"
#include "item_models/row_filter.h"
#include "pages/dataset_filter.h"
#include "pages/caption_encoder_panel.h"
#include "pages/caption_panel.h"
#include "pages/caption_tools_bar.h"
#include "pages/buckets_panel.h"
#include "pages/dataset_edit_bar.h"
#include "pages/extraction_picker.h"
#include "pages/scores_panel.h"
#include "pages/suggestion_box.h"
#include "pages/trim_bar.h"
#include "theme.h"

namespace ws {

DatasetPage::DatasetPage(QWidget* parent) : QWidget(parent), model_(new DatasetModel(this)) {
  proxy_ = new DatasetFilter(this);
  proxy_->setSourceModel(model_);
  proxy_->setSortRole(DatasetModel::SortRole);

  auto* open = new QPushButton(tr("Open…"), this);
  save_ = new QPushButton(tr("Save"), this);
  save_->setShortcut(QKeySequence::Save);  // only while the page is on screen
  revert_ = new QPushButton(tr("Revert"), this);
  check_ = new QPushButton(tr("Check files"), this);
  check_->setToolTip(tr("Open every file and compare it with its row (the engine's probe)"));
  fill_ = new QPushButton(tr("Fill sizes"), this);
  fill_->setToolTip(tr("Write the checked width and height into the rows"));
  filter_ = new QLineEdit(this);
  filter_->setAccessibleName(tr("Filter rows"));
  filter_->setPlaceholderText(tr("Filter: words, ! (problems), ? (suggestions), motion_score < 0.5 and frames >= 49"));
  filter_->setToolTip(tr("Words match captions and file names; ! keeps rows with problems; ? rows with a suggested "
                         "caption to review; comparisons (< <= > >= = !=) on %1, joined by \"and\"")
                          .arg(RowFilter::fields().join(QStringLiteral(", "))));
  filter_->setClearButtonEnabled(true);
  auto* bar = new QHBoxLayout;
  for (QWidget* w : {static_cast<QWidget*>(open), static_cast<QWidget*>(save_), static_cast<QWidget*>(revert_),
                     static_cast<QWidget*>(check_), static_cast<QWidget*>(fill_)})
    bar->addWidget(w);
  bar->addWidget(filter_, 1);

  // Which size and frames each row trains at, for the run being prepared.
  sampleSize_ = new QSpinBox(this);
  sampleSize_->setAccessibleName(tr("Train at size"));
  sampleSize_->setRange(32, 4096);
  sampleSize_->setValue(512);
  sampleSize_->setToolTip(QStringLiteral("video_sample_size"));
  frames_ = new QSpinBox(this);
  frames_->setAccessibleName(tr("Frames"));
  frames_->setRange(1, 1001);
  frames_->setSingleStep(4);
  frames_->setValue(81);
  frames_->setToolTip(QStringLiteral("video_sample_n_frames"));
  stride_ = new QSpinBox(this);
  stride_->setAccessibleName(tr("Stride"));
  stride_->setRange(1, 1000);
  stride_->setValue(2);
  stride_->setToolTip(QStringLiteral("video_sample_stride"));
  trainer_ = new QComboBox(this);
  trainer_->setAccessibleName(tr("Trainer"));
  trainer_->addItem(tr("latent upsampler (48 px buckets)"), 1.5);
  trainer_->addItem(tr("Wan experts (32 px buckets)"), 2.0);
  extraction_ = new ExtractionPicker(this);
  auto* shape = new QHBoxLayout;
  shape->addWidget(new QLabel(tr("Train at size"), this));
  shape->addWidget(sampleSize_);
  shape->addWidget(new QLabel(tr("frames"), this));
  shape->addWidget(frames_);
  shape->addWidget(new QLabel(tr("stride"), this));
  shape->addWidget(stride_);
  shape->addWidget(trainer_);
  shape->addWidget(extraction_);
  shape->addStretch(1);

  grid_ = new QListView(this);
  grid_->setAccessibleName(tr("Dataset rows"));
  grid_->setModel(proxy_);
  grid_->setViewMode(QListView::IconMode);
  grid_->setIconSize(QSize(160, 160));
  grid_->setGridSize(QSize(180, 200));
  grid_->setResizeMode(QListView::Adjust);
  grid_->setMovement(QListView::Static);
  grid_->setTextElideMode(Qt::ElideMiddle);
  grid_->setSpacing(4);
  grid_->setWordWrap(true);
  grid_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  grid_->setSelectionMode(QAbstractItemView::ExtendedSelection);  // several rows to remove at once
  table_ = new QTableView(this);
  table_->setAccessibleName(tr("Dataset rows as a table"));
  table_->setModel(proxy_);
  table_->setSelectionModel(grid_->selectionModel());  // one selection, one current row for both views
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setSelectionMode(QAbstractItemView::ExtendedSelection);
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table_->setSortingEnabled(true);
  table_->sortByColumn(-1, Qt::AscendingOrder);  // the file's order until a header is clicked
  table_->horizontalHeader()->setStretchLastSection(true);
  table_->verticalHeader()->setDefaultSectionSize(22);
  views_ = new QStackedWidget(this);
  views_->addWidget(grid_);
  views_->addWidget(table_);
  tableToggle_ = new QPushButton(tr("Table"), this);
  tableToggle_->setAccessibleName(tr("Show rows as a table"));
  tableToggle_->setCheckable(true);
  tableToggle_->setToolTip(tr("Rows as a table with their scores, sortable by any column"));
  connect(tableToggle_, &QPushButton::toggled, this, [this](bool on) {
    views_->setCurrentWidget(on ? static_cast<QWidget*>(table_) : grid_);
    if (!on) visibleTimer_->start();
  });
  bar->addWidget(tableToggle_);
  edits_ = new DatasetEditBar(this);

  preview_ = new QLabel(this);
  preview_->setMinimumSize(320, 180);
  preview_->setAlignment(Qt::AlignCenter);
  preview_->setObjectName(QStringLiteral("datasetPreview"));
  facts_ = new QLabel(this);
  facts_->setWordWrap(true);
  facts_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  problems_ = new QLabel(this);
  problems_->setWordWrap(true);
  setTone(problems_, Tone::Error);
  training_ = new QLabel(this);
  training_->setWordWrap(true);
  training_->setObjectName(QStringLiteral("trainingShape"));
  caption_ = new QPlainTextEdit(this);
  caption_->setAccessibleName(tr("Caption"));
  caption_->setPlaceholderText(tr("Caption"));
  caption_->setEnabled(false);
  auto* details = new QWidget(this);
  auto* dl = new QVBoxLayout(details);
  dl->addWidget(preview_);
  trim_ = new TrimBar(model_, details);
  connect(trim_, &TrimBar::frameShown, this, [this](int, const QImage& image) {
    preview_->setPixmap(QPixmap::fromImage(image.scaled(320, 180, Qt::KeepAspectRatio, Qt::SmoothTransformation)));
  });
  connect(trim_, &TrimBar::trimChanged, this, [this] {
    refreshCurrent();
    refreshBuckets();
  });
  dl->addWidget(trim_);
  dl->addWidget(facts_);
  dl->addWidget(training_);
  dl->addWidget(problems_);
  dl->addWidget(new QLabel(tr("Caption"), details));
  dl->addWidget(caption_, 1);
  suggestion_ = new SuggestionBox(this);  // the model's suggested caption, to accept or reject
  dl->addWidget(suggestion_);
  captionTools_ = new CaptionToolsBar(this);
  dl->addWidget(captionTools_);

  scores_ = new ScoresPanel(this);
  buckets_ = new BucketsPanel(this);
  tabs_ = new QTabWidget(this);
  tabs_->setAccessibleName(tr("Row, scores, buckets and captioner"));
  tabs_->addTab(details, tr("Row"));
  tabs_->addTab(scores_, tr("Scores"));
  tabs_->addTab(buckets_, tr("Buckets"));
  captioner_ = new CaptionPanel(this);  // model captions as suggestions (wanstudio-engine caption)
  tabs_->addTab(captioner_, tr("Captioner"));

  auto* split = new QSplitter(this);
  split->addWidget(views_);
  split->addWidget(tabs_);
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 2);

  // Which rows have a text embedding from the chosen encoder, and "Encode captions".
  encoder_ = new CaptionEncoderPanel(this);
  connect(encoder_, &CaptionEncoderPanel::pathsChanged, this, [this] {
    model_->setTextEmbeddings(encoder_->embeddingsDir(), encoder_->encoderPath());
    // Caption lengths in the encoder's tokens (the Tokens column, the row's facts, `tokens` in filters).
    if (QString error; !model_->setTokenizer(encoder_->tokenizerPath(), &error)) status_->setText(error);
    showRow(currentRow());
    updateStatus();
  });
  connect(encoder_, &CaptionEncoderPanel::encodingFinished, this, [this] {
    model_->refreshEmbeddings();
    showRow(currentRow());
    updateStatus();
  });

  status_ = new QLabel(tr("No dataset open: Open… a metadata.json, or make one with New from folder…"), this);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(bar);
  layout->addWidget(edits_);
  layout->addLayout(shape);
  layout->addWidget(encoder_);
  layout->addWidget(split, 1);
  layout->addWidget(status_);

  visibleTimer_ = new QTimer(this);
  visibleTimer_->setSingleShot(true);
  visibleTimer_->setInterval(60);
  connect(visibleTimer_, &QTimer::timeout, this, &DatasetPage::requestVisibleThumbnails);
  connect(grid_->verticalScrollBar(), &QScrollBar::valueChanged, visibleTimer_, qOverload<>(&QTimer::start));

  for (QSpinBox* b : {sampleSize_, frames_, stride_})
    connect(b, qOverload<int>(&QSpinBox::valueChanged), this, &DatasetPage::applyTrainingShape);
  connect(extraction_, &ExtractionPicker::changed, this, &DatasetPage::applyTrainingShape);
  connect(trainer_, qOverload<int>(&QComboBox::currentIndexChanged), this, &DatasetPage::applyTrainingShape);
  // Open… offers both kinds of dataset: a metadata.json, or a folder (clips with .txt captions).
  auto* openMenu = new QMenu(open);
  openMenu->addAction(tr("metadata.json…"), this, &DatasetPage::chooseAndOpen);
  openMenu->addAction(tr("Folder of clips…"), this, &DatasetPage::chooseFolderAndOpen);
  open->setMenu(openMenu);
  connect(save_, &QPushButton::clicked, this, &DatasetPage::save);
  connect(revert_, &QPushButton::clicked, this, &DatasetPage::revert);
  connect(check_, &QPushButton::clicked, this, &DatasetPage::checkFiles);
  connect(fill_, &QPushButton::clicked, this, &DatasetPage::fillSizes);
  connect(filter_, &QLineEdit::textChanged, this, [this](const QString& t) {
    static_cast<DatasetFilter*>(proxy_)->setText(t);
    updateStatus();
    if (const RowFilter& f = static_cast<DatasetFilter*>(proxy_)->rowFilter(); !f.ok())
      status_->setText(status_->text() + tr(" — filter: %1").arg(f.error()));
    visibleTimer_->start();
  });
  connect(grid_->selectionModel(), &QItemSelectionModel::currentChanged, this,
          [this](const QModelIndex& cur) { showRow(cur.isValid() ? proxy_->mapToSource(cur).row() : -1); });
  connect(caption_, &QPlainTextEdit::textChanged, this, [this] {
    if (!showing_ && currentRow() >= 0) model_->setCaption(currentRow(), caption_->toPlainText());
  });
  connect(model_, &DatasetModel::modifiedChanged, this, [this] { updateStatus(); });
  // Edits change the caption counts: counted once typing pauses, not at every key.
  statusTimer_ = new QTimer(this);
  statusTimer_->setSingleShot(true);
  statusTimer_->setInterval(250);
  connect(statusTimer_, &QTimer::timeout, this, &DatasetPage::updateStatus);
  connect(model_, &QAbstractItemModel::dataChanged, statusTimer_, qOverload<>(&QTimer::start));
  connect(model_, &DatasetModel::probeFinished, this, [this] {
    updateStatus();
    showRow(currentRow());
    refreshBuckets();
  });
  connect(model_, &QAbstractItemModel::modelReset, this, &DatasetPage::refreshBuckets);
  connect(model_, &QAbstractItemModel::rowsRemoved, this, &DatasetPage::refreshBuckets);
  connect(model_, &QAbstractItemModel::rowsInserted, this, &DatasetPage::refreshBuckets);
  connect(model_, &QAbstractItemModel::dataChanged, this, [this] {
    if (tabs_->currentIndex() == 2) refreshBuckets();  // a trim or size changed; cheap enough while shown
  });
  connect(tabs_, &QTabWidget::currentChanged, this, &DatasetPage::refreshBuckets);
  connect(model_, &DatasetModel::thumbnailArrived, this, [this](int row) {
    if (row == currentRow()) showRow(row);
  });
  updateStatus();
}

int DatasetPage::currentRow() const {
  const QModelIndex cur = grid_->currentIndex();
  return cur.isValid() ? proxy_->mapToSource(cur).row() : -1;
}

QVector<int> DatasetPage::selectedRows() const {
  QVector<int> rows;
  for (const QModelIndex& i : grid_->selectionModel()->selectedIndexes()) rows << proxy_->mapToSource(i).row();
  std::sort(rows.begin(), rows.end());
  rows.erase(std::unique(rows.begin(), rows.end()), rows.end());  // the table selects every cell of a row
  return rows;
}

void DatasetPage::selectRow(int sourceRow) {
  const QModelIndex p = proxy_->mapFromSource(model_->index(sourceRow));
  if (p.isValid()) grid_->setCurrentIndex(p);
}

bool DatasetPage::maybeKeepEdits() {
  if (!model_->isModified() || !ask_) return true;
  const auto answer =
      QMessageBox::question(this, tr("Unsaved captions"), tr("%1 has unsaved edits. Save them?").arg(model_->path()),
                            QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel);
  if (answer == QMessageBox::Save) return save();
  return answer == QMessageBox::Discard;
}

bool DatasetPage::openDataset(const QString& given, QString* error) {
  QString path = given;
  if (QFileInfo(given).isDir()) {
    // A folder: its metadata.json, or a new one made from its clips and .txt captions.
    path = QDir(given).filePath(QStringLiteral("metadata.json"));
    if (!QFileInfo::exists(path)) {
      if (edits_->importFolder(given, path)) {
        status_->setText(tr("%1 has no metadata.json: making one from its clips and captions…").arg(given));
        return true;
      }
      if (error) *error = tr("%1: an import is already running").arg(given);
      return false;
    }
  }
  if (!maybeKeepEdits()) return false;
  QString err;
  if (!model_->load(path, &err)) {
    if (error) *error = err;
    status_->setText(err);
    return false;
  }
  encoder_->setMetadata(path);
  showRow(-1);
  if (model_->rowCount() > 0) selectRow(0);
  grid_->scrollToTop();
  updateStatus();
  visibleTimer_->start();
  Q_EMIT datasetOpened(path);
  return true;
}

void DatasetPage::chooseFolderAndOpen() {
  const QString dir = QFileDialog::getExistingDirectory(this, tr("A dataset folder (its metadata.json, or its clips "
                                                                 "and .txt captions)"));
  if (dir.isEmpty()) return;
  QString error;
  if (!openDataset(dir, &error) && !error.isEmpty()) QMessageBox::warning(this, tr("Cannot open the dataset"), error);
}

void DatasetPage::chooseAndOpen() {
  const QString path = QFileDialog::getOpenFileName(this, tr("Open a dataset"), {}, tr("metadata (*.json)"));
  if (path.isEmpty()) return;
  QString error;
  if (!openDataset(path, &error) && !error.isEmpty()) QMessageBox::warning(this, tr("Cannot open the dataset"), error);
}

bool DatasetPage::save() {
  QString error;
  if (model_->save(&error)) {
    showRow(currentRow());
    updateStatus();
    return true;
  }
  status_->setText(error);
  if (ask_) QMessageBox::warning(this, tr("Cannot save"), error);
  return false;
}

void DatasetPage::revert() {
  if (model_->path().isEmpty()) return;
  const bool ask = ask_;
  ask_ = false;  // reverting is the answer
  const int row = currentRow();
  openDataset(model_->path());
  ask_ = ask;
  if (row >= 0) selectRow(row);
}

void DatasetPage::checkFiles() {
  model_->probe();
  updateStatus();
}

void DatasetPage::fillSizes() {
  const int n = model_->fillSizesFromProbe();
  updateStatus();
  showRow(currentRow());
  status_->setText(status_->text() + tr(" — filled the size of %n row(s)", nullptr, n));
}

void DatasetPage::applyTrainingShape() {
  DatasetModel::TrainingShape s;
  s.sampleSize = sampleSize_->value();
  s.frames = frames_->value();
  s.stride = stride_->value();
  s.scale = trainer_->currentData().toDouble();
  s.extraction = extraction_->rule();
  model_->setTrainingShape(s);
  showRow(currentRow());
  refreshBuckets();
}

QComboBox* DatasetPage::extraction() const { return extraction_->mode(); }
QDoubleSpinBox* DatasetPage::extractionParameter() const { return extraction_->parameter(); }
BarChart* DatasetPage::bucketChart() const { return buckets_->chart(); }

void DatasetPage::refreshBuckets() { buckets_->refresh(model_, extraction_->mode()->currentText()); }

void DatasetPage::showRow(int row) {
  showing_ = true;
  if (trim_) trim_->setRow(row);
  if (row < 0) {
    preview_->clear();
    facts_->clear();
    problems_->clear();
    training_->clear();
    caption_->clear();
    caption_->setEnabled(false);
    showing_ = false;
    return;
  }
  const QModelIndex i = model_->index(row);
  const QImage thumb = model_->thumbnail(row);
  if (thumb.isNull()) preview_->setText(tr("(decoding…)"));
  else preview_->setPixmap(QPixmap::fromImage(thumb.scaled(320, 180, Qt::KeepAspectRatio, Qt::SmoothTransformation)));
  QStringList facts;
  facts << i.data(DatasetModel::FileRole).toString() << i.data(DatasetModel::TypeRole).toString();
  const QString size = i.data(DatasetModel::SizeRole).toString();
  facts << (size.isEmpty() ? tr("size unknown (Check files)") : size);
  if (const qlonglong n = i.data(DatasetModel::FramesRole).toLongLong(); n > 0) facts << tr("%1 frames").arg(n);
  if (const int t = model_->captionTokens(row); t >= 0)
    facts << (t > 511 ? tr("%1 tokens: cut to 511 by the text encoder").arg(t) : tr("%1 tokens").arg(t));
  if (const QString e = i.data(DatasetModel::EmbeddingRole).toString(); !e.isEmpty())
    facts << tr("text embedding: %1").arg(e);
  facts_->setText(facts.join(QStringLiteral(" · ")));
  problems_->setText(i.data(DatasetModel::ProblemsRole).toStringList().join(QLatin1Char('\n')));
  training_->setText(i.data(DatasetModel::TrainingRole).toString());
  const QString text = i.data(DatasetModel::CaptionRole).toString();
  // Laying out megabytes of text on the GUI thread freezes the window for minutes: a caption
  // past the limit is shown cut and read-only (it is kept whole in the file).
  const bool tooLong = text.size() > kCaptionEditLimit;
  const QString shown = tooLong ? text.left(2000) + QStringLiteral("…") : text;
  if (caption_->toPlainText() != shown) caption_->setPlainText(shown);
  caption_->setReadOnly(tooLong);
  if (tooLong)
    problems_->setText((problems_->text().isEmpty() ? QString() : problems_->text() + QLatin1Char('\n')) +
                       tr("the caption has %1 characters: shown cut and read-only here; edit metadata.json elsewhere")
                           .arg(text.size()));
  caption_->setEnabled(true);
  showing_ = false;
}

void DatasetPage::updateStatus() {
  const bool open = !model_->path().isEmpty();
  save_->setEnabled(model_->isModified());
  revert_->setEnabled(model_->isModified());
  check_->setEnabled(open && !model_->probing());
  fill_->setEnabled(open);
  if (!open) return;
  QString s = tr("%1 — %n row(s)", nullptr, model_->rowCount()).arg(model_->path());
  if (proxy_->rowCount() != model_->rowCount()) s += tr(", %1 shown").arg(proxy_->rowCount());
  const int p = model_->problemCount();
  if (model_->checked() && !model_->probing())  // what Check files found, said once it is done
    s += p ? tr(", files checked: %n with problems (the filter ! lists them)", nullptr, p)
           : tr(", files checked: no problems");
  else if (p) s += tr(", %n with problems", nullptr, p);
  if (model_->probing()) s += tr(", checking files…");
  if (model_->isModified()) s += tr(", unsaved edits");
  if (!encoder_->encoderPath().isEmpty()) s += tr(", %1 with a text embedding").arg(model_->embeddingsReady());
  // Captions at a glance; the token limit only when a tokenizer is chosen.
  const DatasetModel::CaptionCounts c = model_->captionCounts();
  QStringList captions;
  if (c.empty) captions << tr("%n without a caption", nullptr, c.empty);
  if (c.duplicated) captions << tr("%n with a caption another row has too", nullptr, c.duplicated);
  if (c.overLong > 0) captions << tr("%n cut at 511 tokens by the text encoder", nullptr, c.overLong);
  if (!captions.isEmpty()) s += QStringLiteral(", ") + captions.join(QStringLiteral(", "));
  status_->setText(s);
}

void DatasetPage::requestVisibleThumbnails() {
  QVector<int> rows;
  const QRect view = grid_->viewport()->rect();
  for (int r = 0; r < proxy_->rowCount(); ++r) {
    const QModelIndex p = proxy_->index(r, 0);
    if (grid_->visualRect(p).intersects(view)) rows << proxy_->mapToSource(p).row();
  }
  model_->requestThumbnails(rows);
}

}  // namespace ws
