// SPDX-License-Identifier: Apache-2.0
#include "pages/duplicates_dialog.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QTableWidget>
#include <QTimer>
#include <QVBoxLayout>
#include <QtConcurrent>

#include "dataset/near_duplicates.h"
#include "item_models/dataset_model.h"

namespace ws {

DuplicatesDialog::DuplicatesDialog(DatasetModel* model, QWidget* parent) : QDialog(parent), model_(model) {
  setWindowTitle(tr("Duplicates"));
  table_ = new QTableWidget(0, 3, this);
  table_->setHorizontalHeaderLabels({tr("Similarity"), tr("First"), tr("Second")});
  table_->setAccessibleName(tr("Pairs of clips judged copies"));
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setSelectionMode(QAbstractItemView::SingleSelection);
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table_->setIconSize(QSize(128, 72));
  table_->horizontalHeader()->setStretchLastSection(true);
  table_->verticalHeader()->setDefaultSectionSize(80);
  status_ = new QLabel(this);
  status_->setAccessibleName(tr("Duplicate search status"));
  removeFirst_ = new QPushButton(tr("Remove first"), this);
  removeSecond_ = new QPushButton(tr("Remove second"), this);
  auto* close = new QPushButton(tr("Close"), this);
  for (QPushButton* b : {removeFirst_, removeSecond_, close}) b->setAccessibleName(b->text());
  auto* buttons = new QHBoxLayout;
  buttons->addWidget(status_, 1);
  buttons->addWidget(removeFirst_);
  buttons->addWidget(removeSecond_);
  buttons->addWidget(close);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(table_, 1);
  layout->addLayout(buttons);
  resize(720, 480);

  auto selected = [this] { return table_->currentRow(); };
  connect(removeFirst_, &QPushButton::clicked, this, [this, selected] { removeSide(selected(), 0); });
  connect(removeSecond_, &QPushButton::clicked, this, [this, selected] { removeSide(selected(), 1); });
  connect(close, &QPushButton::clicked, this, &QDialog::accept);
  connect(&watcher_, &QFutureWatcher<Outcome>::finished, this, [this] {
    const Outcome o = watcher_.result();
    pairs_ = o.pairs;
    showPairs();
    if (o.unreadable > 0)
      status_->setText(status_->text() + tr(" (%n file(s) could not be read)", nullptr, o.unreadable));
    Q_EMIT searchFinished(int(pairs_.size()));
  });
  auto* tick = new QTimer(this);
  tick->setInterval(200);
  connect(tick, &QTimer::timeout, this, [this] {
    if (running() && done_) status_->setText(tr("hashing %1 of %2 clips…").arg(done_->load()).arg(model_->rowCount()));
  });
  tick->start();
  removeFirst_->setEnabled(false);
  removeSecond_->setEnabled(false);
}

DuplicatesDialog::~DuplicatesDialog() {
  if (cancel_) cancel_->store(true);
  watcher_.waitForFinished();
}

void DuplicatesDialog::start(double threshold) {
  if (running()) return;
  QStringList paths, files;
  for (int r = 0; r < model_->rowCount(); ++r) {
    paths << model_->index(r).data(DatasetModel::PathRole).toString();
    files << model_->index(r).data(DatasetModel::FileRole).toString();
  }
  cancel_ = std::make_shared<std::atomic<bool>>(false);
  done_ = std::make_shared<std::atomic<int>>(0);
  auto cancel = cancel_;
  auto done = done_;
  status_->setText(tr("hashing…"));
  watcher_.setFuture(QtConcurrent::run([paths, files, threshold, cancel, done] {
    Outcome o;
    std::vector<dataset::ClipHashes> hashes;
    std::vector<int> rowOf;
    for (int i = 0; i < paths.size() && !cancel->load(); ++i) {
      try {
        hashes.push_back(dataset::hash_clip(paths[i].toStdString()));
        rowOf.push_back(i);
      } catch (const std::exception&) {
        ++o.unreadable;
      }
      done->store(i + 1);
    }
    if (cancel->load()) return o;
    for (const auto& p : dataset::find_duplicates(hashes, threshold))
      o.pairs.push_back({files[rowOf[p.a]], files[rowOf[p.b]], p.similarity});
    return o;
  }));
}

int DuplicatesDialog::rowOf(const QString& filePath) const {
  for (int r = 0; r < model_->rowCount(); ++r)
    if (model_->index(r).data(DatasetModel::FileRole).toString() == filePath) return r;
  return -1;
}

void DuplicatesDialog::showPairs() {
  table_->setRowCount(int(pairs_.size()));
  for (int i = 0; i < int(pairs_.size()); ++i) {
    const Pair& p = pairs_[size_t(i)];
    table_->setItem(i, 0, new QTableWidgetItem(QString::number(p.similarity, 'f', 3)));
    int side = 1;
    for (const QString& f : {p.a, p.b}) {
      auto* item = new QTableWidgetItem(f);
      const int r = rowOf(f);
      if (r < 0) item->setText(tr("%1 (removed)").arg(f));
      else if (const QImage t = model_->thumbnail(r); !t.isNull()) item->setIcon(QIcon(QPixmap::fromImage(t)));
      table_->setItem(i, side++, item);
    }
  }
  status_->setText(tr("%n pair(s) judged copies", nullptr, int(pairs_.size())));
  const bool any = !pairs_.empty();
  removeFirst_->setEnabled(any);
  removeSecond_->setEnabled(any);
  if (any && table_->currentRow() < 0) table_->selectRow(0);
}

bool DuplicatesDialog::removeSide(int pair, int side) {
  if (pair < 0 || pair >= int(pairs_.size())) return false;
  const QString file = side == 0 ? pairs_[size_t(pair)].a : pairs_[size_t(pair)].b;
  const int r = rowOf(file);
  if (r < 0 || model_->removeDatasetRows({r}) != 1) return false;
  showPairs();  // the removed side is marked in every pair that named it
  return true;
}

}  // namespace ws
