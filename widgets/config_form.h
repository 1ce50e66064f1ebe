// SPDX-License-Identifier: Apache-2.0
// A form generated from a training verb's option schema: one editor per option, grouped as
// the schema groups them, defaults shown, help as tooltips, changed options in bold and
// validation messages under their field. values() holds only what differs from the default,
// which is all a run YAML needs to say.
#pragma once

#include <QMap>
#include <QVariantMap>
#include <QWidget>

#include "option_schema.h"

class QFormLayout;
class QGroupBox;
class QLabel;
class QLineEdit;
class QScrollArea;

namespace ws {

class OptionEditor;

class ConfigForm : public QWidget {
  Q_OBJECT
 public:
  explicit ConfigForm(QWidget* parent = nullptr);

  void setSchema(const OptionSchema& schema);
  const OptionSchema& schema() const { return schema_; }
  bool hasSchema() const { return !schema_.options().isEmpty(); }

  QVariantMap values() const;                 // non-default options only
  QVariant value(const QString& name) const;  // the default for untouched options
  // Every option from `values`, the rest back to its default. Emits nothing.
  void setValues(const QVariantMap& values);
  void setValue(const QString& name, const QVariant& value);  // emits nothing
  // Text the editors cannot parse (a word in a list of ints), by option.
  QMap<QString, QString> inputErrors() const;

  void setErrors(const QMap<QString, QString>& errors);  // by option; others are cleared
  QString error(const QString& name) const;
  void setLocked(const QString& name, bool locked, const QString& why = {});
  // A line of prose at the top of a section (empty hides it): what its options do together.
  void setGroupNote(const QString& group, const QString& text);
  QString groupNote(const QString& group) const;
  OptionEditor* editor(const QString& name) const { return editors_.value(name); }
  void setFilter(const QString& text);  // shows only options whose name or help contains it

 Q_SIGNALS:
  void valuesChanged();  // the user edited an option

 private:
  void markChanged(OptionEditor* editor);

  OptionSchema schema_;
  QScrollArea* scroll_;
  QLineEdit* filter_;
  QMap<QString, OptionEditor*> editors_;
  QMap<QString, QLabel*> labels_;
  QMap<QString, QGroupBox*> groups_;
  QMap<QString, QLabel*> notes_;
  QMap<QString, QFormLayout*> forms_;
};

}  // namespace ws
