// SPDX-License-Identifier: Apache-2.0
#include "pages/extraction_picker.h"

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QHBoxLayout>
#include <QLabel>

namespace ws {

ExtractionPicker::ExtractionPicker(QWidget* parent) : QWidget(parent) {
  mode_ = new QComboBox(this);
  mode_->setAccessibleName(tr("Frame extraction"));
  mode_->setToolTip(QStringLiteral("frame_extraction"));
  for (const auto& name : dataset::extraction_names()) mode_->addItem(QString::fromStdString(name));
  label_ = new QLabel(this);
  parameter_ = new QDoubleSpinBox(this);
  parameter_->setAccessibleName(tr("Frame extraction parameter"));
  auto* row = new QHBoxLayout(this);
  row->setContentsMargins(0, 0, 0, 0);
  row->addWidget(new QLabel(tr("samples"), this));
  row->addWidget(mode_);
  row->addWidget(label_);
  row->addWidget(parameter_);
  connect(mode_, qOverload<int>(&QComboBox::currentIndexChanged), this, [this] {
    retarget();
    Q_EMIT changed();
  });
  connect(parameter_, qOverload<double>(&QDoubleSpinBox::valueChanged), this, &ExtractionPicker::changed);
  retarget();
}

void ExtractionPicker::retarget() {
  const auto mode = dataset::parse_extraction(mode_->currentText().toStdString());
  const dataset::ExtractionRule defaults;
  const QSignalBlocker b(parameter_);
  const bool step = mode == dataset::Extraction::Slide, windows = mode == dataset::Extraction::Uniform,
             fps = mode == dataset::Extraction::Full;
  parameter_->setVisible(step || windows || fps);
  label_->setVisible(step || windows || fps);
  parameter_->setDecimals(fps ? 2 : 0);
  parameter_->setRange(fps ? 0.1 : 1, fps ? 1000 : windows ? 1000 : 100000);
  parameter_->setValue(step ? double(defaults.step) : windows ? double(defaults.windows) : defaults.fps);
  label_->setText(step ? tr("every") : windows ? tr("windows") : tr("fps"));
  parameter_->setToolTip(step      ? QStringLiteral("frame_extraction_step")
                         : windows ? QStringLiteral("frame_extraction_windows")
                                   : QStringLiteral("frame_extraction_fps"));
}

dataset::ExtractionRule ExtractionPicker::rule() const {
  dataset::ExtractionRule r;
  r.mode = dataset::parse_extraction(mode_->currentText().toStdString());
  if (r.mode == dataset::Extraction::Slide) r.step = qint64(parameter_->value());
  if (r.mode == dataset::Extraction::Uniform) r.windows = qint64(parameter_->value());
  if (r.mode == dataset::Extraction::Full) r.fps = parameter_->value();
  return r;
}

}  // namespace ws
