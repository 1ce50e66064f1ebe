// SPDX-License-Identifier: Apache-2.0
#include "pages/scene_split_dialog.h"

#include <QDialogButtonBox>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QTimer>
#include <QVBoxLayout>
#include <QtConcurrent>

#include "frame_source.h"
#include "pages/scene_timeline.h"

namespace ws {

SceneSplitDialog::SceneSplitDialog(const QString& video, QWidget* parent)
    : QDialog(parent), video_(video), thumbs_(new FrameSource(this)), frames_(new FrameSource(this)) {
  setWindowTitle(tr("Split into scenes — %1").arg(QFileInfo(video).fileName()));
  const dataset::SceneOptions defaults;
  threshold_ = new QDoubleSpinBox(this);
  threshold_->setAccessibleName(tr("Cut threshold"));
  threshold_->setRange(1, 255);
  threshold_->setValue(defaults.threshold);
  threshold_->setToolTip(
      tr("A cut where the frame's change in hue, saturation and brightness reaches this (PySceneDetect's 27)"));
  minFrames_ = new QSpinBox(this);
  minFrames_->setAccessibleName(tr("Shortest scene in frames"));
  minFrames_->setRange(1, 100000);
  minFrames_->setValue(int(defaults.min_scene_frames));
  minSeconds_ = new QDoubleSpinBox(this);
  minSeconds_->setAccessibleName(tr("Drop scenes shorter than seconds"));
  minSeconds_->setRange(0, 3600);
  minSeconds_->setSpecialValueText(tr("keep all"));
  maxSeconds_ = new QDoubleSpinBox(this);
  maxSeconds_->setAccessibleName(tr("Cut scenes longer than seconds"));
  maxSeconds_->setRange(0, 3600);
  maxSeconds_->setSpecialValueText(tr("no maximum"));
  output_ = new QLineEdit(QFileInfo(video).absolutePath() + QLatin1Char('/') + QFileInfo(video).completeBaseName() +
                              QStringLiteral("-scenes"),
                          this);
  output_->setAccessibleName(tr("Folder for the clips"));
  auto* browse = new QPushButton(tr("Browse…"), this);
  browse->setAccessibleName(tr("Choose the folder for the clips"));
  timeline_ = new SceneTimeline(this);
  preview_ = new QLabel(this);
  preview_->setMinimumSize(320, 180);
  preview_->setAlignment(Qt::AlignCenter);
  addCut_ = new QPushButton(tr("Add cut at cursor"), this);
  addCut_->setAccessibleName(tr("Add a cut at the cursor"));
  removeCut_ = new QPushButton(tr("Remove cut"), this);
  removeCut_->setAccessibleName(tr("Remove the selected cut"));
  writeButton_ = new QPushButton(tr("Write clips"), this);
  writeButton_->setAccessibleName(tr("Write one clip per scene"));
  cancel_ = new QPushButton(tr("Cancel"), this);
  cancel_->setAccessibleName(tr("Cancel the scanned_ or the write"));
  status_ = new QLabel(this);
  status_->setWordWrap(true);

  auto* form = new QFormLayout;
  form->addRow(tr("Threshold"), threshold_);
  form->addRow(tr("Shortest scene (frames)"), minFrames_);
  form->addRow(tr("Drop shorter than (s)"), minSeconds_);
  form->addRow(tr("Cut longer than (s)"), maxSeconds_);
  auto* out = new QHBoxLayout;
  out->addWidget(output_, 1);
  out->addWidget(browse);
  form->addRow(tr("Clips folder"), out);
  auto* top = new QHBoxLayout;
  top->addLayout(form, 1);
  top->addWidget(preview_);
  auto* edits = new QHBoxLayout;
  edits->addWidget(addCut_);
  edits->addWidget(removeCut_);
  edits->addWidget(new QLabel(tr("drag a cut to move it, double-click to add one, Delete drops the selected"), this),
                   1);
  auto* buttons = new QHBoxLayout;
  buttons->addWidget(status_, 1);
  buttons->addWidget(cancel_);
  buttons->addWidget(writeButton_);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(top);
  layout->addWidget(timeline_, 1);
  layout->addLayout(edits);
  layout->addLayout(buttons);
  resize(960, 560);

  connect(threshold_, qOverload<double>(&QDoubleSpinBox::valueChanged), this, &SceneSplitDialog::redetect);
  connect(minFrames_, qOverload<int>(&QSpinBox::valueChanged), this, &SceneSplitDialog::redetect);
  for (QDoubleSpinBox* s : {minSeconds_, maxSeconds_})
    connect(s, qOverload<double>(&QDoubleSpinBox::valueChanged), this, &SceneSplitDialog::describeScenes);
  connect(browse, &QPushButton::clicked, this, [this] {
    const QString d = QFileDialog::getExistingDirectory(this, tr("Folder for the clips"), output_->text());
    if (!d.isEmpty()) output_->setText(d);
  });
  connect(addCut_, &QPushButton::clicked, this, [this] { timeline_->addCut(timeline_->cursor()); });
  connect(removeCut_, &QPushButton::clicked, this, [this] { timeline_->removeCut(timeline_->selectedCut()); });
  connect(writeButton_, &QPushButton::clicked, this, &SceneSplitDialog::writeClips);
  connect(cancel_, &QPushButton::clicked, this, &SceneSplitDialog::cancel);
  connect(timeline_, &SceneTimeline::cutsChanged, this, [this] {
    describeScenes();
    // The scenes' first frames moved: thumbnails again.
    thumbQueue_ = QVector<qint64>{0} + timeline_->cuts();
    requestNextThumbnail();
  });
  connect(timeline_, &SceneTimeline::cutSelected, this, [this](int, qint64 frame) { frames_->request(int(frame)); });
  connect(timeline_, &SceneTimeline::cursorMoved, this, [this](qint64 frame) { frames_->request(int(frame)); });
  connect(frames_, &FrameSource::frameReady, this, [this](int, const QImage& image, quint64) {
    preview_->setPixmap(QPixmap::fromImage(image.scaled(320, 180, Qt::KeepAspectRatio, Qt::SmoothTransformation)));
  });
  connect(thumbs_, &FrameSource::frameReady, this, [this](int index, const QImage& image, quint64) {
    timeline_->setThumbnail(index, image);
    if (!thumbQueue_.isEmpty() && thumbQueue_.front() == index) thumbQueue_.pop_front();
    requestNextThumbnail();
  });
  connect(&scan_, &QFutureWatcher<Outcome>::finished, this, &SceneSplitDialog::scanDone);
  connect(&write_, &QFutureWatcher<Outcome>::finished, this, &SceneSplitDialog::writeDone);
  auto* tick = new QTimer(this);
  tick->setInterval(250);
  connect(tick, &QTimer::timeout, this, [this] {
    if ((scanning() || writing()) && done_)
      status_->setText((scanning() ? tr("scanning… frame %1") : tr("writing… frame %1")).arg(done_->load()));
  });
  tick->start();
  thumbs_->open(video_);
  frames_->open(video_);
  writeButton_->setEnabled(false);
}

SceneSplitDialog::~SceneSplitDialog() {
  cancel();
  scan_.waitForFinished();
  write_.waitForFinished();
}

void SceneSplitDialog::cancel() {
  if (cancelFlag_) cancelFlag_->store(true);
}

void SceneSplitDialog::startScan() {
  if (scanning() || writing()) return;
  dataset::SplitOptions o;
  o.scene.threshold = threshold_->value();
  o.scene.min_scene_frames = minFrames_->value();
  launch(scan_, o, /*dryRun=*/true);
  status_->setText(tr("scanning…"));
}

// split_video on a worker thread with progress and cancel: the scan (dry run) or the write.
void SceneSplitDialog::launch(QFutureWatcher<Outcome>& watcher, const dataset::SplitOptions& o, bool dryRun) {
  cancelFlag_ = std::make_shared<std::atomic<bool>>(false);
  done_ = std::make_shared<std::atomic<qint64>>(0);
  const std::string path = video_.toStdString();
  auto cancelFlag = cancelFlag_;
  auto done = done_;
  watcher.setFuture(QtConcurrent::run([path, o, dryRun, cancelFlag, done] {
    Outcome out;
    try {
      out.result = dataset::split_video(path, o, dryRun, [&](int64_t n) {
        done->store(n);
        return !cancelFlag->load();
      });
    } catch (const std::exception& e) {
      out.error = QString::fromUtf8(e.what());
    }
    return out;
  }));
  writeButton_->setEnabled(false);
}

void SceneSplitDialog::scanDone() {
  Outcome o = scan_.result();
  if (!o.error.isEmpty()) {
    status_->setText(o.error);
    Q_EMIT scanFinished(o.error);
    return;
  }
  scanned_ = std::move(o.result.scan);
  timeline_->setScores(QVector<double>(scanned_.scores.begin(), scanned_.scores.end()));
  timeline_->setThreshold(threshold_->value());
  timeline_->setCuts(QVector<qint64>(scanned_.cuts.begin(), scanned_.cuts.end()));
  writeButton_->setEnabled(true);
  Q_EMIT scanFinished(QString());
}

// The cuts again from the scan's scores: no second decode.
void SceneSplitDialog::redetect() {
  if (scanned_.scores.empty()) return;
  dataset::SceneOptions o;
  o.threshold = threshold_->value();
  o.min_scene_frames = minFrames_->value();
  const auto cuts = dataset::cuts_from_scores(scanned_.scores, o);
  timeline_->setThreshold(o.threshold);
  timeline_->setCuts(QVector<qint64>(cuts.begin(), cuts.end()));
}

void SceneSplitDialog::describeScenes() {
  if (scanned_.scores.empty()) return;
  const std::vector<int64_t> cuts(timeline_->cuts().begin(), timeline_->cuts().end());
  QString text;
  try {
    const auto ranges = dataset::scene_ranges(cuts, int64_t(scanned_.scores.size()), scanned_.fps, minSeconds_->value(),
                                              maxSeconds_->value());
    QStringList lengths;
    for (const auto& [a, b] : ranges) lengths << QString::number(b - a);
    text = tr("%n clip(s) of %1 frames", nullptr, int(ranges.size())).arg(lengths.join(QStringLiteral(", ")));
  } catch (const std::exception& e) {
    text = QString::fromUtf8(e.what());
  }
  status_->setText(tr("%n cut(s); ", nullptr, int(cuts.size())) + text);
}

void SceneSplitDialog::requestNextThumbnail() {
  while (!thumbQueue_.isEmpty() && thumbQueue_.front() >= timeline_->frames()) thumbQueue_.pop_front();
  if (!thumbQueue_.isEmpty()) thumbs_->request(int(thumbQueue_.front()));
}

bool SceneSplitDialog::writeClips() {
  if (scanning() || writing() || scanned_.scores.empty() || output_->text().trimmed().isEmpty()) return false;
  dataset::SplitOptions o;
  o.output_dir = output_->text().trimmed().toStdString();
  o.min_seconds = minSeconds_->value();
  o.max_seconds = maxSeconds_->value();
  o.use_cuts = true;
  o.cuts.assign(timeline_->cuts().begin(), timeline_->cuts().end());
  launch(write_, o, /*dryRun=*/false);
  status_->setText(tr("writing…"));
  return true;
}

void SceneSplitDialog::writeDone() {
  Outcome o = write_.result();
  writeButton_->setEnabled(true);
  const QString meta = QString::fromStdString(o.result.metadata_path);
  status_->setText(o.error.isEmpty() ? tr("wrote %n clip(s) and %1", nullptr, int(o.result.rows.size())).arg(meta)
                                     : o.error);
  Q_EMIT clipsWritten(meta, o.error);
}

}  // namespace ws
