// SPDX-License-Identifier: Apache-2.0
// Under the dataset page's caption editor: the selected row's suggested caption (`text_suggested`,
// from `wanstudio-engine caption`), read-only, with Accept (it becomes the caption), Edit (accept,
// then type in the caption editor) and Reject (the suggestion is dropped, the caption stays).
// Hidden when the row has none. Accept and Reject are edits like any other: Save writes them.
#pragma once

#include <QWidget>

class QLabel;
class QPlainTextEdit;
class QPushButton;

namespace ws {

class DatasetPage;

class SuggestionBox : public QWidget {
  Q_OBJECT
 public:
  explicit SuggestionBox(DatasetPage* page);

  QPlainTextEdit* text() const { return text_; }
  QPushButton* acceptButton() const { return accept_; }
  QPushButton* editButton() const { return edit_; }
  QPushButton* rejectButton() const { return reject_; }

 public Q_SLOTS:
  // On the page's current row; false when it has no suggestion.
  bool accept();
  bool acceptAndEdit();
  bool reject();
  // Shows the current row's suggestion, or hides the box.
  void refresh();

 private:
  DatasetPage* page_;
  QLabel* title_;
  QPlainTextEdit* text_;
  QPushButton *accept_, *edit_, *reject_;
};

}  // namespace ws
