// SPDX-License-Identifier: Apache-2.0
// Captions at scale, under the dataset page's caption editor: find and replace, and a trigger word
// added to or removed from the front of every caption — on the selected rows when several are
// selected, else on all. Revert undoes them until saved.
#pragma once

#include <QWidget>

class QCheckBox;
class QLabel;
class QLineEdit;
class QPushButton;

namespace ws {

class DatasetPage;

class CaptionToolsBar : public QWidget {
  Q_OBJECT
 public:
  explicit CaptionToolsBar(DatasetPage* page);

  QLineEdit* findText() const { return find_; }
  QLineEdit* replaceText() const { return replace_; }
  QCheckBox* matchCase() const { return case_; }
  QLineEdit* triggerWord() const { return trigger_; }
  QLabel* result() const { return result_; }

 public Q_SLOTS:
  int replaceAll();
  int addTrigger();
  int removeTrigger();

 private:
  // The selected rows when more than one is selected, else none (meaning all).
  QVector<int> scope() const;
  int report(int changed);

  DatasetPage* page_;
  QLineEdit *find_, *replace_, *trigger_;
  QCheckBox* case_;
  QPushButton *replaceAll_, *addTrigger_, *removeTrigger_;
  QLabel* result_;
};

}  // namespace ws
