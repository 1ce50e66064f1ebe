// SPDX-License-Identifier: Apache-2.0
#include "config_form.h"

#include <QFormLayout>
#include <QGroupBox>
#include <QLabel>
#include <QLineEdit>
#include <QScrollArea>
#include <QSet>
#include <QShortcut>
#include <QToolButton>
#include <QVBoxLayout>

#include "option_editor.h"
#include "option_label.h"

namespace ws {

ConfigForm::ConfigForm(QWidget* parent) : QWidget(parent) {
  filter_ = new QLineEdit(this);
  filter_->setAccessibleName(tr("Filter options"));
  filter_->setPlaceholderText(tr("Filter options…"));
  filter_->setClearButtonEnabled(true);
  connect(filter_, &QLineEdit::textChanged, this, &ConfigForm::setFilter);
  // Ctrl+F: to any option from the keyboard (type its name or words, then Tab to its field).
  auto* find = new QShortcut(QKeySequence::Find, this, nullptr, nullptr, Qt::WindowShortcut);
  connect(find, &QShortcut::activated, this, [this] {
    filter_->setFocus(Qt::ShortcutFocusReason);
    filter_->selectAll();
  });
  filter_->setToolTip(tr("Show only the options whose key, label or help holds these words (Ctrl+F)"));
  scroll_ = new QScrollArea(this);
  scroll_->setWidgetResizable(true);
  scroll_->setFrameShape(QFrame::NoFrame);
  scroll_->setFocusPolicy(Qt::NoFocus);  // Tab from the filter goes to the first field shown
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(filter_);
  layout->addWidget(scroll_, 1);
}

void ConfigForm::setSchema(const OptionSchema& schema) {
  schema_ = schema;
  editors_.clear();
  labels_.clear();
  groups_.clear();
  notes_.clear();
  forms_.clear();
  auto* content = new QWidget;
  auto* column = new QVBoxLayout(content);
  for (const QString& group : schema.groups()) {
    auto* box = new QGroupBox(group, content);
    groups_.insert(group, box);
    // The section's note (setGroupNote) above its rows, outside the form layout: QFormLayout
    // writes past its row arrays when a spanning row is inserted while other rows are hidden.
    auto* note = new QLabel(box);
    note->setObjectName(QStringLiteral("hint"));
    note->setWordWrap(true);
    note->hide();
    notes_.insert(group, note);
    auto* boxLayout = new QVBoxLayout(box);
    boxLayout->addWidget(note);
    auto* form = new QFormLayout;
    boxLayout->addLayout(form);
    forms_.insert(group, form);
    form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    for (const OptionSpec& spec : schema.options()) {
      if (spec.group != group) continue;
      auto* editor = new OptionEditor(spec, box);
      // Plain words first, the config key under them (what run files and the docs use).
      auto* label = new QLabel(
          QStringLiteral("%1%2<br><small>%3</small>")
              .arg(plainLabel(spec.name).toHtmlEscaped(), spec.required ? QStringLiteral(" *") : QString(), spec.name),
          box);
      label->setTextFormat(Qt::RichText);
      label->setToolTip(editor->input()->toolTip());
      label->setBuddy(editor->input());
      form->addRow(label, editor);
      editors_.insert(spec.name, editor);
      labels_.insert(spec.name, label);
      connect(editor, &OptionEditor::edited, this, [this, editor] {
        markChanged(editor);
        Q_EMIT valuesChanged();
      });
    }
    column->addWidget(box);
  }
  column->addStretch(1);
  scroll_->setWidget(content);  // deletes the previous form
  // Tab goes from the filter through the fields in the form's order (they are made after the
  // widgets around the form, which the focus chain would otherwise visit first).
  QWidget* previous = filter_;
  for (const OptionSpec& spec : schema.options())
    if (OptionEditor* e = editors_.value(spec.name))
      for (QWidget* w : {e->input(), static_cast<QWidget*>(e->findChild<QToolButton*>())})
        if (w) {
          QWidget::setTabOrder(previous, w);
          previous = w;
        }
  setFilter(filter_->text());
}

QVariantMap ConfigForm::values() const {
  QVariantMap out;
  for (const OptionSpec& spec : schema_.options()) {
    const OptionEditor* e = editors_.value(spec.name);
    if (e && !e->isDefault()) out.insert(spec.name, e->value());
  }
  return out;
}

QVariant ConfigForm::value(const QString& name) const {
  const OptionEditor* e = editors_.value(name);
  return e ? e->value() : QVariant();
}

void ConfigForm::setValues(const QVariantMap& values) {
  for (OptionEditor* e : std::as_const(editors_)) {
    e->setValue(values.value(e->spec().name));
    markChanged(e);
  }
}

void ConfigForm::setValue(const QString& name, const QVariant& value) {
  if (OptionEditor* e = editors_.value(name)) {
    e->setValue(value);
    markChanged(e);
  }
}

QMap<QString, QString> ConfigForm::inputErrors() const {
  QMap<QString, QString> out;
  for (const OptionEditor* e : editors_) {
    QString why;
    if (!e->parsedValue(&why)) out.insert(e->spec().name, why);
  }
  return out;
}

void ConfigForm::setErrors(const QMap<QString, QString>& errors) {
  for (OptionEditor* e : std::as_const(editors_)) e->setError(errors.value(e->spec().name));
}

QString ConfigForm::error(const QString& name) const {
  const OptionEditor* e = editors_.value(name);
  return e ? e->error() : QString();
}

void ConfigForm::setLocked(const QString& name, bool locked, const QString& why) {
  if (OptionEditor* e = editors_.value(name)) e->setLocked(locked, why);
}

void ConfigForm::setGroupNote(const QString& group, const QString& text) {
  QLabel* note = notes_.value(group);
  if (!note) return;
  note->setText(text);
  note->setVisible(!text.isEmpty());
}

QString ConfigForm::groupNote(const QString& group) const {
  const QLabel* note = notes_.value(group);
  return note ? note->text() : QString();
}

void ConfigForm::setFilter(const QString& text) {
  if (filter_->text() != text) filter_->setText(text);
  QSet<QString> shownGroups;
  for (OptionEditor* e : std::as_const(editors_)) {
    const OptionSpec& s = e->spec();
    const bool show = text.isEmpty() || s.name.contains(text, Qt::CaseInsensitive) ||
                      s.help.contains(text, Qt::CaseInsensitive) ||
                      plainLabel(s.name).contains(text, Qt::CaseInsensitive);
    // The row as a whole: QFormLayout (Qt 6.4) overruns its arrays when a row's widgets are
    // hidden one by one and the layout is then recomputed.
    if (QFormLayout* form = forms_.value(s.group)) form->setRowVisible(e, show);
    if (show) shownGroups.insert(s.group);
  }
  for (auto it = groups_.cbegin(); it != groups_.cend(); ++it) it.value()->setVisible(shownGroups.contains(it.key()));
}

void ConfigForm::markChanged(OptionEditor* editor) {
  // Bold labels show at a glance what this run changes.
  QLabel* label = labels_.value(editor->spec().name);
  QFont f = label->font();
  f.setBold(!editor->isDefault());
  label->setFont(f);
}

}  // namespace ws
