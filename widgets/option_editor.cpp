// SPDX-License-Identifier: Apache-2.0
#include "option_editor.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QSpinBox>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>
#include <climits>

#include "float_spin_box.h"
#include "option_label.h"
#include "option_schema.h"
#include "theme.h"

namespace ws {
namespace {

QString tooltipFor(const OptionSpec& s) {
  QStringList lines;
  lines << QStringLiteral("<b>%1</b> (%2%3)")
               .arg(s.name.toHtmlEscaped(), s.list ? QStringLiteral("list of ") : QString(), s.type);
  if (!s.help.isEmpty()) lines << s.help.toHtmlEscaped();
  const QString def = OptionSchema::toText(s, s.defaultValue);
  lines << QStringLiteral("Default: %1")
               .arg(s.defaultValue.isNull() ? QStringLiteral("not set")
                    : def.isEmpty()         ? QStringLiteral("[]")
                                            : def.toHtmlEscaped());
  if (s.min) lines << QStringLiteral("Minimum: %1").arg(*s.min);
  if (s.max) lines << QStringLiteral("Maximum: %1").arg(*s.max);
  if (!s.choices.isEmpty()) lines << QStringLiteral("One of: %1").arg(s.choices.join(QStringLiteral(", ")));
  if (s.required) lines << QStringLiteral("Required");
  return lines.join(QStringLiteral("<br>"));
}

// Folders by naming convention; the schema only says "path".
bool wantsFolder(const OptionSpec& s) {
  return s.name.contains(QLatin1String("dir")) || s.name == QLatin1String("pretrained_model_name_or_path");
}

}  // namespace

OptionEditor::OptionEditor(const OptionSpec& spec, QWidget* parent) : QWidget(parent), spec_(spec) {
  setObjectName(spec.name);
  auto* row = new QHBoxLayout;
  row->setContentsMargins(0, 0, 0, 0);
  const QString notSet = tr("not set");
  if (spec.list) {
    line_ = new QLineEdit(this);
    line_->setPlaceholderText(tr("comma-separated %1 values").arg(spec.type));
    connect(line_, &QLineEdit::textChanged, this, &OptionEditor::edited);
    input_ = line_;
  } else if (spec.type == QLatin1String("bool")) {
    check_ = new QCheckBox(this);
    connect(check_, &QCheckBox::toggled, this, [this] { Q_EMIT edited(); });
    input_ = check_;
  } else if (spec.type == QLatin1String("int")) {
    intBox_ = new QSpinBox(this);
    // Wide range: out-of-range values stay visible and get a validation message instead
    // of being clamped silently. The lowest value stands for "not set".
    intBox_->setRange(nullable() ? INT_MIN : INT_MIN + 1, INT_MAX);
    if (nullable()) intBox_->setSpecialValueText(notSet);
    connect(intBox_, &QSpinBox::valueChanged, this, [this] { Q_EMIT edited(); });
    input_ = intBox_;
  } else if (spec.type == QLatin1String("float")) {
    floatBox_ = new FloatSpinBox(this);
    if (nullable()) floatBox_->setSpecialValueText(notSet);
    connect(floatBox_, &QDoubleSpinBox::valueChanged, this, [this] { Q_EMIT edited(); });
    input_ = floatBox_;
  } else if (spec.type == QLatin1String("enum")) {
    combo_ = new QComboBox(this);
    if (nullable()) combo_->addItem(notSet, QVariant());
    for (const QString& c : spec.choices) combo_->addItem(c, c);
    connect(combo_, &QComboBox::currentIndexChanged, this, [this] { Q_EMIT edited(); });
    input_ = combo_;
  } else {
    line_ = new QLineEdit(this);
    if (nullable()) line_->setPlaceholderText(notSet);
    connect(line_, &QLineEdit::textChanged, this, &OptionEditor::edited);
    input_ = line_;
  }
  input_->setToolTip(tooltipFor(spec));
  // What a screen reader speaks: the form's visible label, and the help with the config key.
  input_->setAccessibleName(plainLabel(spec.name));
  input_->setAccessibleDescription(spec.help.isEmpty() ? spec.name
                                                       : QStringLiteral("%1 (%2)").arg(spec.help, spec.name));
  row->addWidget(input_, 1);
  if (spec.type == QLatin1String("path")) {
    auto* button = new QToolButton(this);
    button->setText(QStringLiteral("…"));
    button->setToolTip(wantsFolder(spec) ? tr("Choose a folder") : tr("Choose a file"));
    button->setAccessibleName(button->toolTip() + QStringLiteral(": ") + plainLabel(spec.name));
    connect(button, &QToolButton::clicked, this, &OptionEditor::browse);
    row->addWidget(button);
    browse_ = button;
  }
  errorLabel_ = new QLabel(this);
  errorLabel_->setObjectName(QStringLiteral("fieldError"));
  setTone(errorLabel_, Tone::Error);
  // No word wrap: a height-for-width row makes Qt 6.4's QFormLayout write past its arrays once
  // the filter hides rows (seen under valgrind). The whole message is also the tooltip.
  errorLabel_->setWordWrap(false);
  errorLabel_->hide();
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(1);
  layout->addLayout(row);
  layout->addWidget(errorLabel_);
  setValue(spec.defaultValue);
}

bool OptionEditor::nullable() const { return spec_.defaultValue.isNull() && !spec_.list; }

std::optional<QVariant> OptionEditor::parsedValue(QString* error) const {
  if (check_) return QVariant(check_->isChecked());
  if (intBox_) {
    if (nullable() && intBox_->value() == intBox_->minimum()) return QVariant();
    return QVariant(qlonglong(intBox_->value()));
  }
  if (floatBox_) {
    if (nullable() && floatBox_->value() == floatBox_->minimum()) return QVariant();
    return QVariant(floatBox_->value());
  }
  if (combo_) return combo_->currentData();
  const QString text = line_->text();
  if (spec_.list) {
    OptionSpec one = spec_;
    one.list = false;
    QVariantList items;
    for (const QString& part : text.split(QLatin1Char(','), Qt::SkipEmptyParts)) {
      if (part.trimmed().isEmpty()) continue;
      const auto item = OptionSchema::scalarFromText(one, part.trimmed());
      if (!item) {
        if (error) *error = tr("\"%1\" is not a %2").arg(part.trimmed(), spec_.type);
        return std::nullopt;
      }
      items << *item;
    }
    return QVariant(items);
  }
  // An empty line is the default (shown as placeholder when there is none).
  if (text.isEmpty()) return spec_.defaultValue;
  return QVariant(text);
}

QVariant OptionEditor::value() const {
  const auto v = parsedValue();
  return v ? *v : spec_.defaultValue;
}

void OptionEditor::setValue(const QVariant& raw) {
  const QVariant v = raw.isNull() ? spec_.defaultValue : raw;
  const QSignalBlocker block(input_);
  if (check_) {
    check_->setChecked(v.toBool());
  } else if (intBox_) {
    intBox_->setValue(v.isNull() ? intBox_->minimum()
                                 : int(std::clamp<qlonglong>(v.toLongLong(), INT_MIN + 1, INT_MAX)));
  } else if (floatBox_) {
    floatBox_->setValue(v.isNull() ? floatBox_->minimum() : v.toDouble());
  } else if (combo_) {
    int i = combo_->findData(v);
    if (i < 0) {
      // A value the schema does not allow (from YAML): shown so the error next to it makes sense.
      combo_->addItem(v.toString(), v);
      i = combo_->count() - 1;
    }
    combo_->setCurrentIndex(i);
  } else {
    line_->setText(OptionSchema::toText(spec_, v));
  }
}

bool OptionEditor::isDefault() const { return OptionSchema::sameValue(spec_, value(), spec_.defaultValue); }

void OptionEditor::setError(const QString& message) {
  if (message == error_) return;
  error_ = message;
  errorLabel_->setText(message);
  errorLabel_->setToolTip(message);
  errorLabel_->setVisible(!message.isEmpty());
}

void OptionEditor::setLocked(bool locked, const QString& why) {
  input_->setEnabled(!locked);
  if (browse_) browse_->setEnabled(!locked);
  input_->setToolTip(why.isEmpty() ? tooltipFor(spec_) : why);
}

void OptionEditor::browse() {
  const QString current = line_->text().section(QLatin1Char(','), -1).trimmed();
  QStringList picked;
  if (wantsFolder(spec_)) {
    const QString dir = QFileDialog::getExistingDirectory(this, spec_.name, current);
    if (!dir.isEmpty()) picked << dir;
  } else if (spec_.list) {
    picked = QFileDialog::getOpenFileNames(this, spec_.name, current);
  } else {
    const QString file = QFileDialog::getOpenFileName(this, spec_.name, current);
    if (!file.isEmpty()) picked << file;
  }
  if (picked.isEmpty()) return;
  if (spec_.list && !line_->text().trimmed().isEmpty())
    line_->setText(line_->text() + QStringLiteral(", ") + picked.join(QStringLiteral(", ")));
  else line_->setText(picked.join(QStringLiteral(", ")));  // textChanged says edited
}

}  // namespace ws
