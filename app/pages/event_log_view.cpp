// SPDX-License-Identifier: Apache-2.0
#include "pages/event_log_view.h"

#include <QComboBox>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QListView>
#include <QScrollBar>
#include <QVBoxLayout>

#include "item_models/event_level_filter.h"
#include "item_models/event_log_model.h"

namespace ws {

EventLogView::EventLogView(RunEvents* events, QWidget* parent) : QWidget(parent) {
  model_ = new EventLogModel(events, this);
  filter_ = new EventLevelFilter(this);
  filter_->setSourceModel(model_);

  level_ = new QComboBox(this);
  level_->setAccessibleName(tr("Lowest level shown"));
  level_->addItem(tr("Errors"), int(LogLevel::Error));
  level_->addItem(tr("Warnings and errors"), int(LogLevel::Warning));
  level_->addItem(tr("Info"), int(LogLevel::Info));
  level_->addItem(tr("Debug"), int(LogLevel::Debug));
  level_->addItem(tr("Everything (every step)"), int(LogLevel::Step));
  level_->setCurrentIndex(2);
  connect(level_, &QComboBox::currentIndexChanged, this,
          [this] { filter_->setMinimumLevel(LogLevel(level_->currentData().toInt())); });

  search_ = new QLineEdit(this);
  search_->setAccessibleName(tr("Search events"));
  search_->setPlaceholderText(tr("Search events"));
  search_->setClearButtonEnabled(true);
  connect(search_, &QLineEdit::textChanged, filter_, &QSortFilterProxyModel::setFilterFixedString);

  view_ = new QListView(this);
  view_->setAccessibleName(tr("Events"));
  view_->setModel(filter_);
  view_->setUniformItemSizes(true);  // 100k rows stay fast
  view_->setSelectionMode(QAbstractItemView::ExtendedSelection);
  view_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  // Follow the tail only when the user is already at the bottom.
  auto* bar = view_->verticalScrollBar();
  connect(filter_, &QAbstractItemModel::rowsAboutToBeInserted, this,
          [this, bar] { view_->setProperty("follow", bar->value() >= bar->maximum() - 2); });
  connect(filter_, &QAbstractItemModel::rowsInserted, this, [this] {
    if (view_->property("follow").toBool()) view_->scrollToBottom();
  });
  connect(filter_, &QAbstractItemModel::modelReset, view_, &QListView::scrollToBottom);

  auto* bar2 = new QHBoxLayout;
  bar2->addWidget(new QLabel(tr("Show"), this));
  bar2->addWidget(level_);
  bar2->addWidget(search_, 1);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->addLayout(bar2);
  layout->addWidget(view_, 1);
}

}  // namespace ws
