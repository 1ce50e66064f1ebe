// SPDX-License-Identifier: Apache-2.0
#include "pages/trim_bar.h"

#include <QGridLayout>
#include <QLabel>
#include <QPushButton>
#include <QSlider>
#include <QSpinBox>

#include <algorithm>
#include <cmath>

#include "frame_source.h"
#include "item_models/dataset_model.h"

namespace ws {

TrimBar::TrimBar(DatasetModel* model, QWidget* parent)
    : QWidget(parent), model_(model), source_(new FrameSource(this)) {
  slider_ = new QSlider(Qt::Horizontal, this);
  slider_->setAccessibleName(tr("Scrub the clip"));
  position_ = new QLabel(this);
  in_ = new QSpinBox(this);
  in_->setAccessibleName(tr("In point (first frame)"));
  out_ = new QSpinBox(this);
  out_->setAccessibleName(tr("Out point (frame after the last)"));
  setIn_ = new QPushButton(tr("Set in"), this);
  setIn_->setAccessibleName(tr("Set the in point here"));
  setOut_ = new QPushButton(tr("Set out"), this);
  setOut_->setAccessibleName(tr("Set the out point here"));
  apply_ = new QPushButton(tr("Trim"), this);
  apply_->setAccessibleName(tr("Trim the row to in and out"));
  apply_->setToolTip(tr("Training takes frames [in, out) of this clip (the row's trim; the file is not cut)"));
  clear_ = new QPushButton(tr("Clear trim"), this);
  clear_->setAccessibleName(tr("Clear the trim"));
  status_ = new QLabel(this);
  status_->setWordWrap(true);

  auto* g = new QGridLayout(this);
  g->setContentsMargins(0, 0, 0, 0);
  g->addWidget(slider_, 0, 0, 1, 5);
  g->addWidget(position_, 0, 5);
  g->addWidget(new QLabel(tr("in"), this), 1, 0);
  g->addWidget(in_, 1, 1);
  g->addWidget(setIn_, 1, 2);
  g->addWidget(new QLabel(tr("out"), this), 1, 3);
  g->addWidget(out_, 1, 4);
  g->addWidget(setOut_, 1, 5);
  g->addWidget(apply_, 2, 4);
  g->addWidget(clear_, 2, 5);
  g->addWidget(status_, 2, 0, 1, 4);

  connect(slider_, &QSlider::valueChanged, this, [this](int v) {
    position_->setText(tr("frame %1").arg(v));
    source_->request(v);
  });
  connect(source_, &FrameSource::frameReady, this, [this](int index, const QImage& image, quint64) {
    if (index == slider_->value()) Q_EMIT frameShown(index, image);
  });
  connect(source_, &FrameSource::opened, this, [this](int frames, QSize, double) {
    // The decoder's count wins over the row's when they differ (a file re-encoded since the import).
    if (frames > 0 && frames != slider_->maximum() + 1) {
      setFrameCount(frames);
      showTrim();  // an untrimmed row's out point is the file's end, now known
    }
  });
  connect(source_, &FrameSource::failed, this, [this](const QString& m) { status_->setText(m); });
  connect(setIn_, &QPushButton::clicked, this, [this] { in_->setValue(slider_->value()); });
  connect(setOut_, &QPushButton::clicked, this, [this] { out_->setValue(slider_->value() + 1); });
  connect(apply_, &QPushButton::clicked, this, &TrimBar::apply);
  connect(clear_, &QPushButton::clicked, this, &TrimBar::clearTrim);
  setRow(-1);
}

void TrimBar::setFrameCount(int frames) {
  const QSignalBlocker b(slider_);
  slider_->setRange(0, std::max(0, frames - 1));
  in_->setRange(0, std::max(0, frames - 1));
  out_->setRange(1, std::max(1, frames));
}

void TrimBar::setRow(int row) {
  const bool changed = row != row_;
  row_ = row;
  const bool video = row >= 0 && model_->data(model_->index(row), DatasetModel::TypeRole).toString() != "image";
  const int frames = video ? int(model_->fileFrames(row)) : 0;
  for (QWidget* w : {static_cast<QWidget*>(slider_), static_cast<QWidget*>(in_), static_cast<QWidget*>(out_),
                     static_cast<QWidget*>(setIn_), static_cast<QWidget*>(setOut_), static_cast<QWidget*>(apply_),
                     static_cast<QWidget*>(clear_)})
    w->setEnabled(video);
  if (!video) {
    status_->setText(row >= 0 ? tr("a picture: nothing to trim") : QString());
    return;
  }
  if (changed) {
    setFrameCount(std::max(frames, 1));
    {
      const QSignalBlocker b(slider_);
      slider_->setValue(0);
    }
    position_->setText(tr("frame 0"));
    source_->open(model_->data(model_->index(row), DatasetModel::PathRole).toString());
    showTrim();  // only on a new row: a refresh of the same row keeps the in and out being chosen
  }
}

void TrimBar::showTrim() {
  const double in = model_->number(row_, QStringLiteral("trim_in")),
               out = model_->number(row_, QStringLiteral("trim_out"));
  const bool trimmed = !std::isnan(in) && !std::isnan(out);
  in_->setValue(trimmed ? int(in) : 0);
  out_->setValue(trimmed ? int(out) : out_->maximum());
  clear_->setEnabled(trimmed);
  status_->setText(trimmed ? tr("trimmed to frames %1–%2 (%3 frames)").arg(int(in)).arg(int(out)).arg(int(out - in))
                           : tr("not trimmed"));
}

bool TrimBar::apply() {
  QString error;
  if (!model_->setTrim(row_, in_->value(), out_->value(), &error)) {
    status_->setText(error);
    return false;
  }
  showTrim();
  Q_EMIT trimChanged(row_);
  return true;
}

void TrimBar::clearTrim() {
  model_->setTrim(row_, -1, -1);
  showTrim();
  Q_EMIT trimChanged(row_);
}

}  // namespace ws
