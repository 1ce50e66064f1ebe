// SPDX-License-Identifier: Apache-2.0
#include "pages/suggestion_box.h"

#include <QHBoxLayout>
#include <QItemSelectionModel>
#include <QLabel>
#include <QListView>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QVBoxLayout>

#include "item_models/dataset_model.h"
#include "pages/dataset_page.h"

namespace ws {

namespace {

QPushButton* reviewButton(const QString& text, const QKeySequence& key, const QString& tip, QWidget* parent) {
  auto* b = new QPushButton(text, parent);
  b->setAccessibleName(QString(text).remove(QLatin1Char('&')));
  // A button's shortcut acts only while the box is on screen: never for a row without a suggestion.
  if (!key.isEmpty()) b->setShortcut(key);
  const QString full = key.isEmpty() ? tip : tip + QStringLiteral(" (%1)").arg(key.toString(QKeySequence::NativeText));
  b->setToolTip(full);
  b->setAccessibleDescription(full);
  return b;
}

}  // namespace

SuggestionBox::SuggestionBox(DatasetPage* page) : QWidget(page), page_(page) {
  title_ = new QLabel(tr("Suggested caption"), this);
  text_ = new QPlainTextEdit(this);
  text_->setReadOnly(true);  // still focusable and selectable, so a screen reader can read it
  text_->setAccessibleName(tr("Suggested caption"));
  text_->setAccessibleDescription(tr("A model's caption for this row (wanstudio-engine caption), to accept or reject"));
  text_->setMaximumHeight(90);
  title_->setBuddy(text_);
  accept_ = reviewButton(tr("Accept"), QKeySequence(Qt::CTRL | Qt::Key_Return),
                         tr("The suggestion becomes the caption"), this);
  edit_ = reviewButton(tr("Edit"), {}, tr("Accept, then edit the caption"), this);
  reject_ = reviewButton(tr("Reject"), QKeySequence(Qt::CTRL | Qt::Key_Backspace),
                         tr("Drop the suggestion; the caption stays as it is"), this);
  auto* buttons = new QHBoxLayout;
  buttons->addWidget(accept_);
  buttons->addWidget(edit_);
  buttons->addWidget(reject_);
  buttons->addStretch(1);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(title_);
  layout->addWidget(text_);
  layout->addLayout(buttons);

  connect(accept_, &QPushButton::clicked, this, &SuggestionBox::accept);
  connect(edit_, &QPushButton::clicked, this, &SuggestionBox::acceptAndEdit);
  connect(reject_, &QPushButton::clicked, this, &SuggestionBox::reject);
  DatasetModel* m = page_->model();
  connect(m, &QAbstractItemModel::modelReset, this, &SuggestionBox::refresh);
  connect(m, &QAbstractItemModel::rowsRemoved, this, &SuggestionBox::refresh);
  connect(m, &QAbstractItemModel::dataChanged, this, [this](const QModelIndex& from, const QModelIndex& to) {
    const int row = page_->currentRow();
    if (row >= from.row() && row <= to.row()) refresh();
  });
  connect(page_->grid()->selectionModel(), &QItemSelectionModel::currentChanged, this, &SuggestionBox::refresh);
  refresh();
}

void SuggestionBox::refresh() {
  const QString s = page_->model()->suggestion(page_->currentRow());
  if (text_->toPlainText() != s) text_->setPlainText(s);
  setVisible(!s.isEmpty());
}

bool SuggestionBox::accept() {
  const bool done = page_->model()->acceptSuggestion(page_->currentRow());
  if (done) page_->refreshCurrent();  // the caption editor shows the new caption
  return done;
}

bool SuggestionBox::acceptAndEdit() {
  if (!accept()) return false;
  QPlainTextEdit* editor = page_->captionEditor();
  editor->setFocus(Qt::ShortcutFocusReason);
  editor->moveCursor(QTextCursor::End);
  return true;
}

bool SuggestionBox::reject() { return page_->model()->rejectSuggestion(page_->currentRow()); }

}  // namespace ws
