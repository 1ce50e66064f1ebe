// SPDX-License-Identifier: Apache-2.0
// In and out points for the dataset page's current row: a slider scrubs the clip (frames decoded
// on FrameSource's thread, the newest request wins) into the page's preview, "Set in" / "Set
// out" take the frame under the slider, and the row's `trim: [in, out)` is written through the
// model (undone by Revert until saved), which the loader honours without cutting the file.
#pragma once

#include <QWidget>

class QLabel;
class QPushButton;
class QSlider;
class QSpinBox;

namespace ws {

class DatasetModel;
class FrameSource;

class TrimBar : public QWidget {
  Q_OBJECT
 public:
  explicit TrimBar(DatasetModel* model, QWidget* parent = nullptr);

  // Follows the page's current row (-1: none); a picture or an unreadable file disables the bar.
  void setRow(int row);
  int row() const { return row_; }

  QSlider* slider() const { return slider_; }
  QSpinBox* inPoint() const { return in_; }
  QSpinBox* outPoint() const { return out_; }
  QPushButton* setInButton() const { return setIn_; }
  QPushButton* setOutButton() const { return setOut_; }
  QPushButton* applyButton() const { return apply_; }
  QPushButton* clearButton() const { return clear_; }
  QLabel* status() const { return status_; }
  FrameSource* source() const { return source_; }

 public Q_SLOTS:
  // Writes [in, out) into the row; false (and the reason in status()) when the range is bad.
  bool apply();
  void clearTrim();

 Q_SIGNALS:
  // A decoded frame under the slider, for the page's preview.
  void frameShown(int index, const QImage& image);
  // The row's trim was written or cleared.
  void trimChanged(int row);

 private:
  void setFrameCount(int frames);
  void showTrim();

  DatasetModel* model_;
  FrameSource* source_;
  int row_ = -1;
  QSlider* slider_;
  QSpinBox *in_, *out_;
  QPushButton *setIn_, *setOut_, *apply_, *clear_;
  QLabel *position_, *status_;
};

}  // namespace ws
