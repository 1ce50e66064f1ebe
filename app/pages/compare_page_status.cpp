// SPDX-License-Identifier: Apache-2.0
// Compare's status line: what the last render, failure or export found, kept only while the
// choice it was made on is still the one above; once the runs, checkpoints or input change, it
// says the videos below belong to the previous choice.
#include <QCheckBox>
#include <QComboBox>
#include <QLabel>
#include <QLineEdit>
#include <QSpinBox>
#include <QStackedWidget>

#include "pages/compare_page.h"
#include "theme.h"

namespace ws {

void ComparePage::updateInputs() {
  const bool upsampler = job() == QLatin1String("upsampler");
  inputs_->setCurrentIndex(upsampler ? 1 : 0);
  for (QWidget* w : std::initializer_list<QWidget*>{width_, widthLabel_, steps_, stepsLabel_, seed_, seedLabel_})
    w->setVisible(!upsampler);
  const QString other = sides_[1].run->currentData(Qt::UserRole + 1).toString();
  if (!job().isEmpty() && !other.isEmpty() && other != job())
    setStatus(tr("A is an %1 run and B an %2 run: compare checkpoints of the same kind of run.").arg(job(), other),
              true, false);
  else if (sides_[0].run->count() == 0)
    setStatus(tr("No expert or upsampler runs in the workspace yet."), false, false);
  else choiceChanged();
}

QString ComparePage::choiceKey() const {
  QStringList parts;
  for (const Side& s : sides_)
    parts << s.run->currentData().toString() << s.checkpoint->currentData().toString()
          << s.checkpoint->currentData(Qt::UserRole + 1).toString();
  parts << prompt_->text() << video_->text() << QString::number(ema_->isChecked());
  for (const QSpinBox* b : {width_, height_, frames_, steps_, seed_}) parts << QString::number(b->value());
  return parts.join(QChar(0x1f));
}

void ComparePage::watchChoice() {
  for (const Side& s : sides_)
    connect(s.checkpoint, &QComboBox::currentIndexChanged, this, &ComparePage::choiceChanged);
  connect(prompt_, &QLineEdit::textChanged, this, &ComparePage::choiceChanged);
  connect(video_, &QLineEdit::textChanged, this, &ComparePage::choiceChanged);
  connect(ema_, &QCheckBox::toggled, this, &ComparePage::choiceChanged);
  for (QSpinBox* b : {width_, height_, frames_, steps_, seed_})
    connect(b, &QSpinBox::valueChanged, this, &ComparePage::choiceChanged);
}

void ComparePage::choiceChanged() {
  if (isRendering()) return;  // "Rendering…" stays until the render ends
  if (choiceKey() == statusFor_.key) setStatus(statusFor_.text, statusFor_.error, false);
  else if (!shown_.isEmpty())
    setStatus(tr("Shown below: %1. The choice above changed since: press Render to compare it.").arg(shown_), false,
              false);
  else setStatus({}, false, false);
}

void ComparePage::setStatus(const QString& text, bool error, bool remember) {
  if (remember) statusFor_ = {choiceKey(), text, error};
  status_->setText(text);
  setTone(status_, error ? Tone::Error : Tone::None);
}

}  // namespace ws
