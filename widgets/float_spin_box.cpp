// SPDX-License-Identifier: Apache-2.0
#include "float_spin_box.h"

#include <QLocale>

#include <cmath>

namespace ws {

FloatSpinBox::FloatSpinBox(QWidget* parent) : QDoubleSpinBox(parent) {
  // Qt rounds values to `decimals`; the maximum keeps every double as it is.
  setDecimals(323);
  setRange(-1e300, 1e300);
}

QString FloatSpinBox::textFromValue(double value) const {
  return QString::number(value, 'g', QLocale::FloatingPointShortest);
}

double FloatSpinBox::valueFromText(const QString& text) const {
  if (!specialValueText().isEmpty() && text == specialValueText()) return minimum();
  return text.trimmed().toDouble();
}

QValidator::State FloatSpinBox::validate(QString& text, int& pos) const {
  Q_UNUSED(pos);
  if (!specialValueText().isEmpty() && text == specialValueText()) return QValidator::Acceptable;
  const QString t = text.trimmed();
  bool ok = false;
  t.toDouble(&ok);
  if (ok) return QValidator::Acceptable;
  // Half-typed numbers: "", "-", "1e", "1e-", "."
  static const QRegularExpression partial(QStringLiteral("^[+-]?(\\d*\\.?\\d*)([eE][+-]?)?$"));
  return partial.match(t).hasMatch() ? QValidator::Intermediate : QValidator::Invalid;
}

void FloatSpinBox::stepBy(int steps) {
  const double v = value();
  const double decade = v == 0 ? 0.1 : std::pow(10.0, std::floor(std::log10(std::abs(v))));
  setValue(v + steps * decade);
}

}  // namespace ws
