// The run page's Validation tab: every `validation` event of the run (step, index, PSNR,
// low-res PSNR, latent MSE); one selected row plays its low-res, upsampled and high-res
// videos side by side; two selected rows compare their upsampled videos.
#pragma once

#include <QVector>
#include <QWidget>

#include "runfolder/validation_sample.h"

class QLabel;
class QTreeWidget;

namespace ws {

class RunEvents;
class VideoCompareView;

class ValidationView : public QWidget {
  Q_OBJECT
 public:
  ValidationView(RunEvents* events, QWidget* parent = nullptr);

  void setRunDir(const QString& runDir);
  const QVector<ValidationSample>& samples() const { return samples_; }
  QTreeWidget* list() const { return list_; }
  VideoCompareView* player() const { return player_; }
  void selectSamples(const QList<int>& rows);  // indices into samples()

 protected:
  void showEvent(QShowEvent* event) override;

 private:
  void refresh();
  void onSelection();

  RunEvents* events_;
  QString runDir_;
  QVector<ValidationSample> samples_;
  QTreeWidget* list_;
  QLabel* hint_;
  VideoCompareView* player_;
  QList<int> shown_;
};

}  // namespace ws
