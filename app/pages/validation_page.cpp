// SPDX-License-Identifier: Apache-2.0
#include "pages/validation_page.h"

#include <QFileDialog>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QSplitter>
#include <QVBoxLayout>

#include "pages/start_image_strip.h"
#include "runfolder/run_events.h"
#include "theme.h"
#include "video_compare_view.h"
#include "video_export.h"

namespace ws {

ValidationPage::ValidationPage(RunEvents* events, QWidget* parent) : QWidget(parent), events_(events) {}

ValidationPage::~ValidationPage() {
  if (exportAbort_) *exportAbort_ = true;
  exportWatcher_.waitForFinished();  // the encoder reads the files; the page outlives it
}

void ValidationPage::setUp(QWidget* list, const QString& hint) {
  hint_ = new QLabel(hint, this);
  hint_->setObjectName(QStringLiteral("hint"));
  hint_->setWordWrap(true);
  auto* left = new QWidget(this);
  auto* leftLayout = new QVBoxLayout(left);
  leftLayout->setContentsMargins(0, 0, 0, 0);
  leftLayout->addWidget(list, 1);
  leftLayout->addWidget(hint_);
  player_ = new VideoCompareView(this);
  // Export what the player shows, as Compare does: the frame on screen, or the videos side by side.
  exportFrame_ = new QPushButton(tr("Export Frame…"), this);
  exportFrame_->setToolTip(tr("Save the frame on screen, every pane as shown, as a PNG"));
  exportVideo_ = new QPushButton(tr("Export Video…"), this);
  exportVideo_->setToolTip(tr("Write the videos on the player side by side as one MP4"));
  exportStatus_ = new QLabel(this);
  exportStatus_->setObjectName(QStringLiteral("hint"));
  connect(exportFrame_, &QPushButton::clicked, this, [this] {
    const QString f =
        QFileDialog::getSaveFileName(this, tr("Export Frame"), QStringLiteral("frame.png"), tr("PNG image (*.png)"));
    QString error;
    if (!f.isEmpty() && !exportFrame(f, &error)) exportStatus_->setText(error);
  });
  connect(exportVideo_, &QPushButton::clicked, this, [this] {
    const QString f = QFileDialog::getSaveFileName(this, tr("Export Video"), QStringLiteral("validation.mp4"),
                                                   tr("MP4 video (*.mp4)"));
    if (!f.isEmpty()) exportVideo(f);
  });
  connect(&exportWatcher_, &QFutureWatcher<QString>::finished, this, [this] {
    const QString error = exportWatcher_.result(), path = exportWatcher_.property("path").toString();
    exportStatus_->setText(error.isEmpty() ? tr("Exported %1").arg(path) : tr("Export failed: %1").arg(error));
    setTone(exportStatus_, error.isEmpty() ? Tone::None : Tone::Error);
    exportVideo_->setEnabled(true);
    Q_EMIT exportFinished(error.isEmpty(), error.isEmpty() ? path : error);
  });
  auto* exportRow = new QHBoxLayout;
  exportRow->addWidget(exportStatus_, 1);
  exportRow->addWidget(exportFrame_);
  exportRow->addWidget(exportVideo_);
  auto* right = new QWidget(this);
  auto* rightLayout = new QVBoxLayout(right);
  rightLayout->setContentsMargins(0, 0, 0, 0);
  startImages_ = new StartImageStrip(this);
  auto* playerRow = new QHBoxLayout;
  playerRow->addWidget(startImages_);
  playerRow->addWidget(player_, 1);
  rightLayout->addLayout(playerRow, 1);
  rightLayout->addLayout(exportRow);
  auto* split = new QSplitter(Qt::Horizontal, this);
  split->addWidget(left);
  split->addWidget(right);
  split->setStretchFactor(0, 1);
  split->setStretchFactor(1, 4);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(split);
  connect(events_, &RunEvents::rowsAppended, this, &ValidationPage::refresh);
  connect(events_, &RunEvents::cleared, this, &ValidationPage::refresh);
  connect(events_, &RunEvents::pointsReset, this, &ValidationPage::refresh);
}

void ValidationPage::setRunDir(const QString& runDir) {
  if (runDir == runDir_) return;
  runDir_ = runDir;
  shown_.clear();
  player_->clear();
  player_->setInfo({});
  startImages_->setImages({});
  refresh();
}

bool ValidationPage::exportFrame(const QString& path, QString* error) {
  if (player_->videos().isEmpty()) {
    if (error) *error = tr("Nothing on the player to export");
    return false;
  }
  if (!player_->frameImage().save(path, "PNG")) {
    if (error) *error = tr("Cannot write %1").arg(path);
    return false;
  }
  exportStatus_->setText(tr("Exported %1").arg(path));
  setTone(exportStatus_, Tone::None);
  return true;
}

bool ValidationPage::exportVideo(const QString& path) {
  if (player_->videos().isEmpty() || exportWatcher_.isRunning()) return false;
  exportAbort_ = std::make_shared<std::atomic_bool>(false);
  exportVideo_->setEnabled(false);
  exportStatus_->setText(tr("Exporting %1…").arg(path));
  exportWatcher_.setProperty("path", path);
  exportWatcher_.setFuture(exportSideBySideInBackground(player_->exportList(), path, exportAbort_));
  return true;
}

}  // namespace ws
