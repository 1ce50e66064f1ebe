// SPDX-License-Identifier: Apache-2.0
// The dataset page's "samples" choice: frame_extraction and its one parameter (slide's step,
// uniform's windows or full's fps), one spin box retargeted to the mode's option at its default.
#pragma once

#include <QWidget>

#include "dataset/frame_sampling.h"

class QComboBox;
class QDoubleSpinBox;
class QLabel;

namespace ws {

class ExtractionPicker : public QWidget {
  Q_OBJECT
 public:
  explicit ExtractionPicker(QWidget* parent = nullptr);
  dataset::ExtractionRule rule() const;
  QComboBox* mode() const { return mode_; }
  QDoubleSpinBox* parameter() const { return parameter_; }

 Q_SIGNALS:
  void changed();

 private:
  void retarget();
  QComboBox* mode_;
  QDoubleSpinBox* parameter_;
  QLabel* label_;
};

}  // namespace ws
