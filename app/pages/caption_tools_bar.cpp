// SPDX-License-Identifier: Apache-2.0
#include "pages/caption_tools_bar.h"

#include <QCheckBox>
#include <QGridLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>

#include "item_models/dataset_model.h"
#include "pages/dataset_page.h"

namespace ws {

namespace {

QLineEdit* field(const QString& name, const QString& placeholder, QWidget* parent) {
  auto* e = new QLineEdit(parent);
  e->setPlaceholderText(placeholder);
  e->setAccessibleName(name);
  e->setClearButtonEnabled(true);
  return e;
}

QPushButton* action(const QString& text, const QString& tip, QWidget* parent) {
  auto* b = new QPushButton(text, parent);
  b->setToolTip(tip);
  b->setAccessibleName(text);
  b->setAccessibleDescription(tip);
  return b;
}

}  // namespace

CaptionToolsBar::CaptionToolsBar(DatasetPage* page) : QWidget(page), page_(page) {
  find_ = field(tr("Find in captions"), tr("Find in captions"), this);
  replace_ = field(tr("Replace with"), tr("Replace with"), this);
  case_ = new QCheckBox(tr("Match case"), this);
  case_->setChecked(true);
  case_->setAccessibleName(tr("Match case"));
  replaceAll_ = action(tr("Replace all"), tr("In the selected captions (several selected) or in all"), this);
  trigger_ = field(tr("Trigger word"), tr("Trigger word"), this);
  addTrigger_ = action(tr("Add to front"), tr("\"word, caption\" on every caption without it"), this);
  removeTrigger_ = action(tr("Remove from front"), tr("Take the word off the front of every caption"), this);
  result_ = new QLabel(this);
  result_->setAccessibleName(tr("Caption edit result"));

  auto* g = new QGridLayout(this);
  g->setContentsMargins(0, 0, 0, 0);
  g->addWidget(find_, 0, 0);
  g->addWidget(replace_, 0, 1);
  g->addWidget(case_, 0, 2);
  g->addWidget(replaceAll_, 0, 3);
  g->addWidget(trigger_, 1, 0, 1, 2);
  g->addWidget(addTrigger_, 1, 2);
  g->addWidget(removeTrigger_, 1, 3);
  g->addWidget(result_, 2, 0, 1, 4);

  connect(replaceAll_, &QPushButton::clicked, this, &CaptionToolsBar::replaceAll);
  connect(addTrigger_, &QPushButton::clicked, this, &CaptionToolsBar::addTrigger);
  connect(removeTrigger_, &QPushButton::clicked, this, &CaptionToolsBar::removeTrigger);
  auto enable = [this] {
    const bool open = !page_->model()->path().isEmpty();
    replaceAll_->setEnabled(open && !find_->text().isEmpty());
    addTrigger_->setEnabled(open && !trigger_->text().trimmed().isEmpty());
    removeTrigger_->setEnabled(addTrigger_->isEnabled());
  };
  connect(find_, &QLineEdit::textChanged, this, enable);
  connect(trigger_, &QLineEdit::textChanged, this, enable);
  connect(page_->model(), &DatasetModel::modelReset, this, enable);
  enable();
}

QVector<int> CaptionToolsBar::scope() const {
  const QVector<int> rows = page_->selectedRows();
  return rows.size() > 1 ? rows : QVector<int>{};
}

int CaptionToolsBar::report(int changed) {
  const int n = scope().isEmpty() ? page_->model()->rowCount() : int(scope().size());
  result_->setText(tr("changed %1 of %n caption(s) (unsaved; Revert undoes)", nullptr, n).arg(changed));
  page_->refreshCurrent();
  return changed;
}

int CaptionToolsBar::replaceAll() {
  return report(page_->model()->replaceInCaptions(find_->text(), replace_->text(), scope(),
                                                  case_->isChecked() ? Qt::CaseSensitive : Qt::CaseInsensitive));
}

int CaptionToolsBar::addTrigger() { return report(page_->model()->addTriggerWord(trigger_->text(), scope())); }

int CaptionToolsBar::removeTrigger() { return report(page_->model()->removeTriggerWord(trigger_->text(), scope())); }

}  // namespace ws
