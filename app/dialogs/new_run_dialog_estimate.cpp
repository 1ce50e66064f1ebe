// SPDX-License-Identifier: Apache-2.0
// New Run's memory estimate: `wanstudio-engine estimate` on the run as it stands, against this
// machine or a GPU of a chosen size; for a GPU the run does not fit, the worker's way to make it
// fit (block swap, fp8, fewer frames, a smaller size) in words, and Apply to take it.
#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QSpinBox>
#include <QTimer>

#include "config_form.h"
#include "dialogs/new_run_dialog.h"
#include "jobs/estimate_job.h"
#include "theme.h"

namespace ws {

QLayout* NewRunDialog::setUpEstimate() {
  // What the run will need before it is started, on request: the worker reads the model configs
  // and maps the VAE, which takes a moment.
  estimate_ = new EstimateJob(this);
  estimateButton_ = new QPushButton(tr("Estimate &Memory"), this);
  estimateButton_->setToolTip(
      tr("Weights, gradients, optimizer state and activations of this run, by formula, "
         "against this machine's memory or the GPU chosen beside it (wanstudio-engine estimate)"));
  // The sizes of the usual cards; a GPU estimate needs no GPU here, it is a formula.
  gpu_ = new QComboBox(this);
  gpu_->setObjectName(QStringLiteral("estimateGpu"));
  gpu_->setAccessibleName(tr("GPU"));
  gpu_->setToolTip(
      tr("Where the run is to train: this machine's memory, or a GPU of this size (then the estimate also "
         "says what waits in host memory and, when the run does not fit, what would make it fit)"));
  gpu_->addItem(tr("This machine (CPU)"), QString());
  gpu_->addItem(tr("24 GB GPU"), QStringLiteral("24GiB"));
  gpu_->addItem(tr("48 GB GPU"), QStringLiteral("48GiB"));
  gpu_->addItem(tr("80 GB GPU"), QStringLiteral("80GiB"));
  estimateLabel_ = new QLabel(this);
  estimateLabel_->setObjectName(QStringLiteral("estimate"));
  estimateLabel_->setWordWrap(true);
  estimateLabel_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  applyFit_ = new QPushButton(tr("&Apply"), this);
  applyFit_->setObjectName(QStringLiteral("applyFit"));
  applyFit_->setToolTip(tr("Set the suggested options in this run's config, then estimate again"));
  applyFit_->hide();
  connect(estimateButton_, &QPushButton::clicked, this, &NewRunDialog::estimateMemory);
  connect(estimate_, &EstimateJob::finished, this, &NewRunDialog::showEstimate);
  connect(applyFit_, &QPushButton::clicked, this, &NewRunDialog::applyFit);
  // A suggestion is for the GPU and job it was made for.
  for (QComboBox* c : {gpu_, jobCombo_})
    connect(c, &QComboBox::currentIndexChanged, this, [this] {
      fit_.clear();
      applyFit_->hide();
    });
  auto* row = new QHBoxLayout;
  row->addWidget(estimateButton_, 0, Qt::AlignTop);
  row->addWidget(gpu_, 0, Qt::AlignTop);
  row->addWidget(estimateLabel_, 1);
  row->addWidget(applyFit_, 0, Qt::AlignTop);
  return row;
}

void NewRunDialog::estimateMemory() {
  if (yamlTimer_.isActive()) syncFormFromYaml();
  setTone(estimateLabel_, Tone::None);
  estimateLabel_->setText(tr("Estimating…"));
  fit_.clear();
  applyFit_->hide();
  estimatedFor_ = gpu_->currentData().toString().isEmpty() ? QString() : gpu_->currentText();
  estimate_->start(yamlText(), processes_->value(), gpu_->currentData().toString());
}

void NewRunDialog::showEstimate(const MemoryEstimateResult& r) {
  if (!r.ok) {
    setTone(estimateLabel_, Tone::Warning);
    estimateLabel_->setText(tr("No estimate: %1").arg(r.error));
    return;
  }
  const QString parts = r.parts.mid(0, 4).join(QStringLiteral(", "));
  const auto bytes = &EstimateJob::formatBytes;
  if (!r.gpu) {
    setTone(estimateLabel_, r.fits ? Tone::None : Tone::Error);
    estimateLabel_->setText(
        r.fits ? tr("Needs about %1 of this machine's %2 (%3)").arg(bytes(r.totalBytes), bytes(r.machineBytes), parts)
               : tr("Warning: needs about %1, more than this machine's %2 (%3). Try gradient checkpointing, "
                    "a smaller sample size, LoRA or more processes with zero_stage 2.")
                     .arg(bytes(r.totalBytes), bytes(r.machineBytes), parts));
    return;
  }
  const QString host =
      r.hostBytes > 0
          ? tr("; %1 in host memory (%2)").arg(bytes(r.hostBytes), r.hostParts.mid(0, 3).join(QStringLiteral(", ")))
          : QString();
  QString text = r.fits ? tr("Fits a %1: about %2 of its %3 on the GPU (%4)%5.")
                        : tr("Does not fit a %1: needs about %2 of its %3 on the GPU (%4)%5.");
  text = text.arg(estimatedFor_, bytes(r.totalBytes), bytes(r.machineBytes), parts, host);
  if (!r.fits && !r.toFit.isEmpty()) {
    // The last way the worker tried is its best: the first that fits, or the most it can do.
    const FitSuggestion& best = r.toFit.last();
    const QString how = tr("%1 on the GPU, %2 in host memory").arg(bytes(best.deviceBytes), bytes(best.hostBytes));
    text +=
        QLatin1Char('\n') +
        (best.fits ? tr("Fits with %1: %2.").arg(best.words(), how)
                   : tr("Even with %1 it needs %2: still too much for a %3.").arg(best.words(), how, estimatedFor_));
    fit_ = best.changes;
    applyFit_->setToolTip(tr("Set %1 in this run's config, then estimate again").arg(best.words()));
    applyFit_->show();
  }
  setTone(estimateLabel_, r.fits ? Tone::None : Tone::Error);
  estimateLabel_->setText(text);
}

void NewRunDialog::applyFit() {
  if (fit_.isEmpty() || job_.isEmpty()) return;
  for (auto it = fit_.cbegin(); it != fit_.cend(); ++it)
    if (form_->editor(it.key())) form_->setValue(it.key(), *it);
  fit_.clear();
  applyFit_->hide();
  onFormEdited();    // the YAML follows and the checks run again
  estimateMemory();  // and the estimate says whether it fits now
}

}  // namespace ws
