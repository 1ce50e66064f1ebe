// SPDX-License-Identifier: Apache-2.0
// Split a long recording into scenes from the studio: the engine's scan (`dataset split`'s
// content rule) runs on a worker thread, the cuts appear on a SceneTimeline where a person moves,
// adds or drops them (threshold and minimum scene length re-derive them from the scan's scores at
// once), and "Write clips" writes one clip per scene with the edited cuts (`--cuts`), then the
// clips' metadata.json opens on the dataset page.
#pragma once

#include <QDialog>
#include <QFutureWatcher>

#include <atomic>
#include <memory>

#include "dataset/scene_split.h"

class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QSpinBox;

namespace ws {

class FrameSource;
class SceneTimeline;

class SceneSplitDialog : public QDialog {
  Q_OBJECT
 public:
  explicit SceneSplitDialog(const QString& video, QWidget* parent = nullptr);
  ~SceneSplitDialog() override;

  void startScan();
  bool scanning() const { return scan_.isRunning(); }
  // Writes the clips with the timeline's cuts; false when a scan or a write is running or the folder is empty.
  bool writeClips();
  bool writing() const { return write_.isRunning(); }
  void cancel();

  SceneTimeline* timeline() const { return timeline_; }
  QDoubleSpinBox* threshold() const { return threshold_; }
  QSpinBox* minSceneFrames() const { return minFrames_; }
  QDoubleSpinBox* minSeconds() const { return minSeconds_; }
  QDoubleSpinBox* maxSeconds() const { return maxSeconds_; }
  QLineEdit* outputDir() const { return output_; }
  QPushButton* writeButton() const { return writeButton_; }
  QLabel* status() const { return status_; }
  QLabel* preview() const { return preview_; }

 Q_SIGNALS:
  void scanFinished(const QString& error);
  // The clips and their metadata.json were written (error empty), or why not.
  void clipsWritten(const QString& metadataPath, const QString& error);

 private:
  struct Outcome {
    dataset::SplitResult result;
    QString error;
  };
  void launch(QFutureWatcher<Outcome>& watcher, const dataset::SplitOptions& options, bool dryRun);
  void scanDone();
  void writeDone();
  void redetect();
  void describeScenes();
  void requestNextThumbnail();

  QString video_;
  SceneTimeline* timeline_;
  QDoubleSpinBox *threshold_, *minSeconds_, *maxSeconds_;
  QSpinBox* minFrames_;
  QLineEdit* output_;
  QPushButton *writeButton_, *addCut_, *removeCut_, *cancel_;
  QLabel *status_, *preview_;
  FrameSource *thumbs_, *frames_;
  QVector<qint64> thumbQueue_;
  dataset::SceneScan scanned_;
  QFutureWatcher<Outcome> scan_, write_;
  std::shared_ptr<std::atomic<bool>> cancelFlag_;
  std::shared_ptr<std::atomic<qint64>> done_;
};

}  // namespace ws
