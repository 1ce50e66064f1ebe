// SPDX-License-Identifier: Apache-2.0
#include "docks/queue_dock.h"

#include <QDialog>
#include <QDialogButtonBox>
#include <QFile>
#include <QFontDatabase>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QTableView>
#include <QVBoxLayout>

#include "item_models/run_queue_model.h"
#include "jobs/run_queue.h"

namespace ws {

QueueDock::QueueDock(RunQueueModel* model, QWidget* parent) : QDockWidget(tr("Queue"), parent), model_(model) {
  setObjectName(QStringLiteral("queueDock"));
  auto* body = new QWidget(this);
  view_ = new QTableView(body);
  view_->setAccessibleName(tr("Queue"));
  view_->setModel(model_);
  view_->setSelectionBehavior(QAbstractItemView::SelectRows);
  view_->setSelectionMode(QAbstractItemView::SingleSelection);
  view_->verticalHeader()->hide();
  view_->setWordWrap(false);
  view_->setShowGrid(false);
  QHeaderView* header = view_->horizontalHeader();
  header->setSectionResizeMode(QHeaderView::ResizeToContents);
  header->setSectionResizeMode(RunQueueModel::StateColumn, QHeaderView::Stretch);

  up_ = new QPushButton(tr("Up"), body);
  down_ = new QPushButton(tr("Down"), body);
  edit_ = new QPushButton(tr("Edit…"), body);
  edit_->setToolTip(tr("Edit the run's run.yaml before it starts"));
  retry_ = new QPushButton(tr("Retry"), body);
  retry_->setToolTip(tr("Queue a failed run again"));
  remove_ = new QPushButton(tr("Remove"), body);
  pause_ = new QPushButton(body);
  pause_->setCheckable(true);
  connect(up_, &QPushButton::clicked, this, &QueueDock::moveUp);
  connect(down_, &QPushButton::clicked, this, &QueueDock::moveDown);
  connect(edit_, &QPushButton::clicked, this, &QueueDock::editCurrent);
  connect(retry_, &QPushButton::clicked, this, &QueueDock::retryCurrent);
  connect(remove_, &QPushButton::clicked, this, &QueueDock::removeCurrent);
  connect(pause_, &QPushButton::toggled, this, [this](bool on) { model_->queue()->setPaused(on); });

  // A reset (any queue change) loses the selection: keep it on the same entry.
  connect(model_, &QAbstractItemModel::modelAboutToBeReset, this, [this] { setProperty("keepId", currentId()); });
  connect(model_, &QAbstractItemModel::modelReset, this, [this] {
    selectId(property("keepId").toString());
    refreshButtons();
  });
  connect(view_->selectionModel(), &QItemSelectionModel::currentRowChanged, this, &QueueDock::refreshButtons);

  // Two rows, so the dock stays narrow enough for a 1280 px screen beside a page.
  auto* buttons = new QGridLayout;
  int column = 0;
  for (QPushButton* b : {up_, down_, edit_}) buttons->addWidget(b, 0, column++);
  buttons->addWidget(retry_, 1, 0);
  buttons->addWidget(remove_, 1, 1);
  buttons->addWidget(pause_, 1, 2);
  auto* layout = new QVBoxLayout(body);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->addWidget(view_, 1);
  layout->addLayout(buttons);
  setWidget(body);
  refreshButtons();
}

QString QueueDock::currentId() const { return model_->idAt(view_->currentIndex().row()); }

void QueueDock::selectId(const QString& id) {
  const int row = id.isEmpty() ? -1 : model_->queue()->indexOf(id);
  if (row >= 0) view_->setCurrentIndex(model_->index(row, RunQueueModel::RunColumn));
}

void QueueDock::refreshButtons() {
  RunQueue* q = model_->queue();
  const int row = q->indexOf(currentId());
  const bool editable = row >= 0 && q->entries().at(row).state != QueueEntry::State::Starting;
  up_->setEnabled(editable && row > 0);
  down_->setEnabled(editable && row + 1 < q->entries().size());
  edit_->setEnabled(editable);
  remove_->setEnabled(editable);
  retry_->setEnabled(row >= 0 && q->entries().at(row).state == QueueEntry::State::Failed);
  pause_->blockSignals(true);
  pause_->setChecked(q->paused());
  pause_->blockSignals(false);
  pause_->setText(q->paused() ? tr("Resume Queue") : tr("Pause Queue"));
  pause_->setToolTip(q->paused() ? tr("Start queued runs again")
                                 : tr("Start no further run; the one training goes on"));
  setWindowTitle(q->entries().isEmpty() ? tr("Queue") : tr("Queue (%1)").arg(q->entries().size()));
}

void QueueDock::moveUp() {
  const QString id = currentId();
  model_->queue()->move(id, -1);
  selectId(id);
}

void QueueDock::moveDown() {
  const QString id = currentId();
  model_->queue()->move(id, +1);
  selectId(id);
}

void QueueDock::removeCurrent() { model_->queue()->remove(currentId()); }
void QueueDock::retryCurrent() { model_->queue()->retry(currentId()); }

void QueueDock::editCurrent() {
  RunQueue* q = model_->queue();
  const QString id = currentId();
  const int row = q->indexOf(id);
  if (row < 0) return;
  const QString path = q->entries().at(row).runYaml;
  QFile in(path);
  if (!in.open(QIODevice::ReadOnly)) {
    QMessageBox::warning(this, tr("Edit Queued Run"), tr("Cannot read %1").arg(path));
    return;
  }
  QDialog dialog(this);
  dialog.setWindowTitle(tr("Edit %1").arg(path));
  auto* text = new QPlainTextEdit(QString::fromUtf8(in.readAll()), &dialog);
  text->setObjectName(QStringLiteral("queueYamlEdit"));
  text->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  auto* box = new QDialogButtonBox(QDialogButtonBox::Save | QDialogButtonBox::Cancel, &dialog);
  connect(box, &QDialogButtonBox::accepted, &dialog, &QDialog::accept);
  connect(box, &QDialogButtonBox::rejected, &dialog, &QDialog::reject);
  auto* layout = new QVBoxLayout(&dialog);
  layout->addWidget(text, 1);
  layout->addWidget(box);
  dialog.resize(640, 520);
  while (dialog.exec() == QDialog::Accepted) {
    QString error;
    if (q->editRunYaml(id, text->toPlainText(), &error)) return;
    QMessageBox::warning(this, tr("Edit Queued Run"), error);  // the file is untouched; edit again
  }
}

}  // namespace ws
