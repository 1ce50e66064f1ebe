// SPDX-License-Identifier: Apache-2.0
// A spin box for floats of any magnitude (1e-10 to 1e4): shows the shortest text that
// reads back to the same double ("2e-05", not "0.00"), and steps by the value's own decade.
#pragma once

#include <QDoubleSpinBox>

namespace ws {

class FloatSpinBox : public QDoubleSpinBox {
  Q_OBJECT
 public:
  explicit FloatSpinBox(QWidget* parent = nullptr);

  QString textFromValue(double value) const override;
  double valueFromText(const QString& text) const override;
  QValidator::State validate(QString& text, int& pos) const override;
  void stepBy(int steps) override;
};

}  // namespace ws
