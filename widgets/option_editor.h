// SPDX-License-Identifier: Apache-2.0
// The editor of one schema option, chosen by its type: a check box (bool), spin boxes (int,
// float), a combo box (enum), a line edit (string), a line edit with a browse button (path),
// a comma-separated line edit (lists). Shows the default, the help as tooltip, and a
// validation message under the field.
#pragma once

#include <QWidget>

#include <optional>

#include "option_spec.h"

class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QSpinBox;

namespace ws {

class FloatSpinBox;

class OptionEditor : public QWidget {
  Q_OBJECT
 public:
  explicit OptionEditor(const OptionSpec& spec, QWidget* parent = nullptr);

  const OptionSpec& spec() const { return spec_; }
  // The edited value (null = not set). Text that does not parse gives nullopt and *error.
  std::optional<QVariant> parsedValue(QString* error = nullptr) const;
  QVariant value() const;                // parsedValue(), or the default when the text does not parse
  void setValue(const QVariant& value);  // null = the default; emits nothing
  bool isDefault() const;

  void setError(const QString& message);  // "" hides it
  QString error() const { return error_; }
  void setLocked(bool locked, const QString& why = {});
  QWidget* input() const { return input_; }  // the actual editor, for tests and focus

 Q_SIGNALS:
  void edited();  // by the user or through the accessibility interface (never by setValue)

 private:
  void browse();
  bool nullable() const;

  OptionSpec spec_;
  QWidget* input_ = nullptr;
  QCheckBox* check_ = nullptr;
  QSpinBox* intBox_ = nullptr;
  FloatSpinBox* floatBox_ = nullptr;
  QComboBox* combo_ = nullptr;
  QLineEdit* line_ = nullptr;
  QWidget* browse_ = nullptr;
  QLabel* errorLabel_;
  QString error_;
};

}  // namespace ws
