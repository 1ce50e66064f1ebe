// SPDX-License-Identifier: Apache-2.0
#include "docks/runs_dock.h"

#include <QAction>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QVBoxLayout>

#include "item_models/runs_model.h"

namespace ws {

RunsDock::RunsDock(RunsModel* model, QWidget* parent) : QDockWidget(tr("Runs"), parent), model_(model) {
  setObjectName(QStringLiteral("runsDock"));  // saveState() needs a name
  proxy_ = new QSortFilterProxyModel(this);
  proxy_->setSourceModel(model_);
  proxy_->setSortRole(RunsModel::SortRole);
  proxy_->setSortCaseSensitivity(Qt::CaseInsensitive);

  auto* body = new QWidget(this);
  workspace_ = new QLabel(body);
  workspace_->setObjectName(QStringLiteral("hint"));
  workspace_->setWordWrap(true);
  auto* choose = new QPushButton(tr("Workspace…"), body);
  connect(choose, &QPushButton::clicked, this, &RunsDock::chooseWorkspaceRequested);
  auto* refresh = new QPushButton(tr("Refresh"), body);
  connect(refresh, &QPushButton::clicked, model_, &RunsModel::refresh);

  view_ = new QTableView(body);
  view_->setAccessibleName(tr("Runs"));
  view_->setModel(proxy_);
  view_->setSelectionBehavior(QAbstractItemView::SelectRows);
  view_->setSelectionMode(QAbstractItemView::SingleSelection);
  view_->setSortingEnabled(true);
  view_->sortByColumn(RunsModel::NameColumn, Qt::AscendingOrder);
  view_->verticalHeader()->hide();
  view_->setWordWrap(false);
  view_->setShowGrid(false);
  // The state (with its reason) gets the room; job and time are one right-click away.
  QHeaderView* header = view_->horizontalHeader();
  header->setSectionResizeMode(QHeaderView::ResizeToContents);
  header->setSectionResizeMode(RunsModel::NameColumn, QHeaderView::Interactive);
  header->setSectionResizeMode(RunsModel::StateColumn, QHeaderView::Stretch);
  view_->setColumnWidth(RunsModel::NameColumn, 140);
  header->setContextMenuPolicy(Qt::ActionsContextMenu);
  for (int c = RunsModel::StepColumn; c < RunsModel::ColumnCount; ++c) {
    auto* toggle = new QAction(model_->headerData(c, Qt::Horizontal, Qt::DisplayRole).toString(), header);
    toggle->setCheckable(true);
    toggle->setChecked(c == RunsModel::StepColumn || c == RunsModel::LossColumn);
    view_->setColumnHidden(c, !toggle->isChecked());
    connect(toggle, &QAction::toggled, this, [this, c](bool on) { view_->setColumnHidden(c, !on); });
    header->addAction(toggle);
  }
  connect(view_->selectionModel(), &QItemSelectionModel::currentRowChanged, this, [this](const QModelIndex& current) {
    if (current.isValid()) Q_EMIT runSelected(current.data(RunsModel::RunDirRole).toString());
  });
  connect(model_, &QAbstractItemModel::modelReset, this, &RunsDock::updateWorkspaceLabel);

  auto* buttons = new QHBoxLayout;
  buttons->addWidget(workspace_, 1);
  buttons->addWidget(choose);
  buttons->addWidget(refresh);
  auto* layout = new QVBoxLayout(body);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->addLayout(buttons);
  layout->addWidget(view_, 1);
  setWidget(body);
  updateWorkspaceLabel();
}

void RunsDock::updateWorkspaceLabel() {
  const QString ws = model_->workspace();
  workspace_->setText(ws.isEmpty() ? tr("No workspace chosen") : ws);
  workspace_->setToolTip(ws);
}

void RunsDock::selectRun(const QString& runDir) {
  const int row = model_->rowForRunDir(runDir);
  if (row < 0) {
    view_->clearSelection();
    return;
  }
  const QModelIndex idx = proxy_->mapFromSource(model_->index(row, 0));
  view_->setCurrentIndex(idx);
  view_->scrollTo(idx);
}

QString RunsDock::currentRun() const {
  const QModelIndex idx = view_->currentIndex();
  return idx.isValid() ? idx.data(RunsModel::RunDirRole).toString() : QString();
}

}  // namespace ws
