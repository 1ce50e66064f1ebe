// SPDX-License-Identifier: Apache-2.0
// The run page's Validation tab: every `validation` event of the run (step, index, PSNR,
// low-res PSNR, latent MSE); one selected row plays its low-res, upsampled and high-res
// videos side by side; two selected rows compare their upsampled videos.
#pragma once

#include <QVector>

#include "pages/validation_page.h"
#include "runfolder/validation_sample.h"

class QTreeWidget;

namespace ws {

class RunEvents;
class VideoCompareView;

class ValidationView : public ValidationPage {
  Q_OBJECT
 public:
  ValidationView(RunEvents* events, QWidget* parent = nullptr);

  const QVector<ValidationSample>& samples() const { return samples_; }
  QTreeWidget* list() const { return list_; }
  void selectSamples(const QList<int>& rows);  // indices into samples()

 protected:
  void showEvent(QShowEvent* event) override;

 private:
  void refresh() override;
  void onSelection();
  void playNewestIfIdle();

  QVector<ValidationSample> samples_;
  QTreeWidget* list_;
};

}  // namespace ws
