// SPDX-License-Identifier: Apache-2.0
#include "pages/dataset_edit_bar.h"

#include <QDragEnterEvent>
#include <QDirIterator>
#include <QDropEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QItemSelectionModel>
#include <QLabel>
#include <QListView>
#include <QMessageBox>
#include <QMimeData>
#include <QPushButton>
#include <QTimer>
#include <QtConcurrent>

#include "core/fs.h"
#include "item_models/dataset_model.h"
#include "pages/dataset_page.h"
#include "pages/duplicates_dialog.h"
#include "pages/scene_split_dialog.h"

namespace ws {

namespace {

QPushButton* button(const QString& text, const QString& tip, QWidget* parent) {
  auto* b = new QPushButton(text, parent);
  b->setToolTip(tip);
  b->setAccessibleName(text.endsWith(QStringLiteral("…")) ? text.chopped(1) : text);
  b->setAccessibleDescription(tip);
  return b;
}

}  // namespace

DatasetEditBar::DatasetEditBar(DatasetPage* page) : QWidget(page), page_(page) {
  new_ = button(tr("New from folder…"),
                tr("A dataset from every video and picture in a folder, with the .txt caption "
                   "beside each (written as metadata.json in that folder)"),
                this);
  add_ = button(tr("Add files…"), tr("Add videos or pictures as rows (or drop them on the grid)"), this);
  remove_ =
      button(tr("Remove"), tr("Remove the selected rows from the dataset (the files stay; Undo puts them back)"), this);
  undo_ = button(tr("Undo remove"), tr("Put the last removed rows back"), this);
  export_ = button(tr("Export captions"), tr("Write each caption as a .txt beside its file, for other trainers"), this);
  dupes_ = button(tr("Find duplicates…"),
                  tr("Clips that are copies of each other (re-encoded, rescaled), side by side to keep one"), this);
  split_ = button(tr("Split scenes…"),
                  tr("Cut a long recording into one clip per scene, with the cuts shown on a timeline to move, add "
                     "or drop before anything is written"),
                  this);
  cancel_ = button(tr("Cancel import"), tr("Stop the import; nothing is written"), this);
  cancel_->hide();
  progress_ = new QLabel(this);
  progress_->setAccessibleName(tr("Import progress"));
  auto* row = new QHBoxLayout(this);
  row->setContentsMargins(0, 0, 0, 0);
  for (QWidget* w : {static_cast<QWidget*>(new_), static_cast<QWidget*>(add_), static_cast<QWidget*>(remove_),
                     static_cast<QWidget*>(undo_), static_cast<QWidget*>(export_), static_cast<QWidget*>(dupes_),
                     static_cast<QWidget*>(split_), static_cast<QWidget*>(cancel_), static_cast<QWidget*>(progress_)})
    row->addWidget(w);
  row->addStretch(1);

  connect(new_, &QPushButton::clicked, this, &DatasetEditBar::chooseFolder);
  connect(add_, &QPushButton::clicked, this, &DatasetEditBar::chooseFiles);
  connect(remove_, &QPushButton::clicked, this, &DatasetEditBar::removeSelected);
  connect(undo_, &QPushButton::clicked, this, &DatasetEditBar::undoRemove);
  connect(export_, &QPushButton::clicked, this, &DatasetEditBar::exportCaptions);
  connect(cancel_, &QPushButton::clicked, this, &DatasetEditBar::cancelImport);
  connect(dupes_, &QPushButton::clicked, this, &DatasetEditBar::findDuplicates);
  connect(split_, &QPushButton::clicked, this, &DatasetEditBar::chooseVideoToSplit);
  connect(&watcher_, &QFutureWatcher<ImportOutcome>::finished, this, &DatasetEditBar::importDone);
  DatasetModel* model = page_->model();
  connect(model, &DatasetModel::modelReset, this, &DatasetEditBar::updateButtons);
  connect(model, &DatasetModel::rowsInserted, this, &DatasetEditBar::updateButtons);
  connect(model, &DatasetModel::rowsRemoved, this, &DatasetEditBar::updateButtons);
  connect(model, &DatasetModel::modifiedChanged, this, &DatasetEditBar::updateButtons);
  connect(page_->grid()->selectionModel(), &QItemSelectionModel::selectionChanged, this,
          &DatasetEditBar::updateButtons);
  // Files dropped on the grid become rows.
  grid_ = page_->grid();
  viewport_ = grid_->viewport();
  viewport_->setAcceptDrops(true);
  viewport_->installEventFilter(this);
  // Delete removes the selection, as in a file manager.
  grid_->installEventFilter(this);
  auto* tick = new QTimer(this);
  tick->setInterval(200);
  connect(tick, &QTimer::timeout, this, [this] {
    if (importing() && done_)
      progress_->setText(tr("importing %1 of %2 files…").arg(done_->load()).arg(total_->load()));
  });
  tick->start();
  updateButtons();
}

DatasetEditBar::~DatasetEditBar() {
  if (cancel_flag_) cancel_flag_->store(true);
  watcher_.waitForFinished();
}

void DatasetEditBar::updateButtons() {
  DatasetModel* m = page_->model();
  const bool open = !m->path().isEmpty();
  new_->setEnabled(!importing());
  add_->setEnabled(open && !importing());
  remove_->setEnabled(open && page_->grid()->selectionModel()->hasSelection());
  undo_->setEnabled(m->canUndoRemove());
  export_->setEnabled(open && m->rowCount() > 0);
  dupes_->setEnabled(open && m->rowCount() > 1);
  cancel_->setVisible(importing());
}

void DatasetEditBar::chooseFolder() {
  const QString dir = QFileDialog::getExistingDirectory(this, tr("A folder of clips and their .txt captions"));
  if (dir.isEmpty()) return;
  QString meta = QDir(dir).filePath(QStringLiteral("metadata.json"));
  if (QFileInfo::exists(meta)) {
    meta =
        QFileDialog::getSaveFileName(this, tr("Where to write the new metadata.json"), meta, tr("metadata (*.json)"));
    if (meta.isEmpty()) return;
  }
  importFolder(dir, meta);
}

bool DatasetEditBar::importFolder(const QString& dir, const QString& metadataPath) {
  if (importing() || !page_->maybeKeepEdits()) return false;
  dataset::ImportOptions options;
  options.root = dir.toStdString();
  options.metadata_path = metadataPath.toStdString();
  importPath_ = metadataPath;
  problems_.clear();
  cancel_flag_ = std::make_shared<std::atomic<bool>>(false);
  done_ = std::make_shared<std::atomic<int>>(0);
  total_ = std::make_shared<std::atomic<int>>(0);
  auto cancel = cancel_flag_;
  auto done = done_, total = total_;
  watcher_.setFuture(QtConcurrent::run([options, cancel, done, total] {
    ImportOutcome out;
    try {
      out.result = dataset::import_folder(options, [&](size_t d, size_t t) {
        done->store(int(d));
        total->store(int(t));
        return !cancel->load();
      });
    } catch (const std::exception& e) {
      out.error = QString::fromUtf8(e.what());
    }
    return out;
  }));
  progress_->setText(tr("importing…"));
  updateButtons();
  return true;
}

void DatasetEditBar::cancelImport() {
  if (cancel_flag_) cancel_flag_->store(true);
}

void DatasetEditBar::importDone() {
  ImportOutcome outcome = watcher_.result();
  QString error = outcome.error;
  dataset::ImportResult& result = outcome.result;
  for (const auto& p : result.problems)
    problems_ << QStringLiteral("%1: %2%3")
                     .arg(QString::fromStdString(p.file), QString::fromStdString(p.message),
                          p.excluded ? tr(" (left out)") : QString());
  if (error.isEmpty() && result.rows.empty())
    error = tr("no usable video or picture found (%n media file(s))", nullptr, int(result.media_files));
  if (error.isEmpty()) {
    page_->model()->adopt(importPath_, std::move(result.rows));
    if (page_->save()) page_->openDataset(importPath_);  // written, then opened like any dataset
    else error = tr("could not write %1").arg(importPath_);
  }
  progress_->setText(error.isEmpty()
                         ? tr("imported %n row(s)", nullptr, page_->model()->rowCount()) +
                               (problems_.isEmpty() ? QString() : tr(", %n problem(s)", nullptr, int(problems_.size())))
                         : error);
  progress_->setToolTip(problems_.join(QLatin1Char('\n')));
  updateButtons();
  Q_EMIT importFinished(error.isEmpty() ? page_->model()->rowCount() : 0, error);
}

void DatasetEditBar::chooseFiles() {
  const QStringList files = QFileDialog::getOpenFileNames(
      this, tr("Videos or pictures to add"), {},
      tr("Media (*.mp4 *.mov *.mkv *.avi *.webm *.m4v *.mpg *.mpeg *.gif *.png *.jpg *.jpeg *.webp *.bmp)"));
  if (!files.isEmpty()) addFiles(files);
}

int DatasetEditBar::addFiles(const QStringList& files) {
  problems_.clear();
  const int n = page_->model()->addFiles(files, &problems_);
  progress_->setText(tr("added %n row(s)", nullptr, n) +
                     (problems_.isEmpty() ? QString() : tr(", %n left out", nullptr, int(problems_.size()))));
  progress_->setToolTip(problems_.join(QLatin1Char('\n')));
  if (n > 0) page_->selectRow(page_->model()->rowCount() - 1);
  updateButtons();
  return n;
}

int DatasetEditBar::removeSelected() {
  const QVector<int> rows = page_->selectedRows();
  const int n = page_->model()->removeDatasetRows(rows);
  if (n > 0) progress_->setText(tr("removed %n row(s) (unsaved; Undo remove puts them back)", nullptr, n));
  updateButtons();
  return n;
}

void DatasetEditBar::undoRemove() {
  if (page_->model()->undoRemove()) progress_->setText(tr("rows put back"));
  updateButtons();
}

int DatasetEditBar::exportCaptions() {
  QString error;
  const int n = page_->model()->exportCaptions(&error);
  progress_->setText(n < 0 ? error : tr("wrote %n caption file(s) beside the clips", nullptr, n));
  return n;
}

DuplicatesDialog* DatasetEditBar::findDuplicates() {
  auto* d = findChild<DuplicatesDialog*>();
  if (!d) d = new DuplicatesDialog(page_->model(), this);
  d->show();
  d->start();
  return d;
}

void DatasetEditBar::chooseVideoToSplit() {
  const QString video = QFileDialog::getOpenFileName(
      this, tr("A recording to split into scenes"), {},
      tr("Videos (*.mp4 *.mov *.mkv *.avi *.webm *.m4v *.mpg *.mpeg *.wmv *.flv *.ts *.mts *.m2ts)"));
  if (!video.isEmpty()) splitScenes(video);
}

SceneSplitDialog* DatasetEditBar::splitScenes(const QString& video) {
  auto* d = new SceneSplitDialog(video, this);
  d->setAttribute(Qt::WA_DeleteOnClose);
  connect(d, &SceneSplitDialog::clipsWritten, this, [this](const QString& meta, const QString& error) {
    if (error.isEmpty() && !meta.isEmpty()) page_->openDataset(meta);
  });
  d->show();
  d->startScan();
  return d;
}

bool DatasetEditBar::eventFilter(QObject* watched, QEvent* event) {
  // Compared with the pointers kept at construction: events also arrive while the page is being
  // destroyed (its window closes in ~QWidget), when it is no DatasetPage any more to ask.
  if (watched == grid_ && event->type() == QEvent::KeyPress &&
      static_cast<QKeyEvent*>(event)->key() == Qt::Key_Delete) {
    removeSelected();
    return true;
  }
  if (watched != viewport_) return QWidget::eventFilter(watched, event);
  if (event->type() == QEvent::DragEnter || event->type() == QEvent::DragMove) {
    auto* e = static_cast<QDropEvent*>(event);
    if (e->mimeData()->hasUrls()) {
      e->acceptProposedAction();
      return true;
    }
  } else if (event->type() == QEvent::Drop) {
    auto* e = static_cast<QDropEvent*>(event);
    QStringList paths;
    for (const QUrl& u : e->mimeData()->urls())
      if (u.isLocalFile()) paths << u.toLocalFile();
    if (paths.isEmpty()) return QWidget::eventFilter(watched, event);
    e->acceptProposedAction();
    // Nothing open: the dropped dataset (a metadata.json or a folder) opens.
    if (page_->model()->path().isEmpty()) {
      QString error;
      if (!page_->openDataset(paths.front(), &error) && !error.isEmpty()) progress_->setText(error);
      return true;
    }
    // Into an open dataset: files as they are, folders by the media files inside them.
    QStringList files;
    for (const QString& p : paths) {
      if (!QFileInfo(p).isDir()) {
        files << p;
        continue;
      }
      QDirIterator it(p, QDir::Files | QDir::NoDotAndDotDot, QDirIterator::Subdirectories);
      while (it.hasNext()) {
        const QString f = it.next();
        const std::string name = f.toStdString();
        if (!it.fileName().startsWith(QLatin1Char('.')) &&
            (dataset::is_video_name(name) || dataset::is_picture_name(name)))
          files << f;
      }
    }
    files.sort();
    addFiles(files);
    return true;
  }
  return QWidget::eventFilter(watched, event);
}

}  // namespace ws
