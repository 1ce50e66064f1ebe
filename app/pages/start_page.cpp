// SPDX-License-Identifier: Apache-2.0
#include "pages/start_page.h"

#include <QFileInfo>
#include <QGridLayout>
#include <QLabel>
#include <QListWidget>
#include <QPushButton>
#include <QSettings>
#include <QVBoxLayout>

namespace ws {

namespace {

enum Role { KindRole = Qt::UserRole + 1, PathRole };

QPushButton* bigButton(const QString& text, const QString& tip, QWidget* parent) {
  auto* b = new QPushButton(text, parent);
  b->setToolTip(tip);
  b->setAccessibleName(text.endsWith(QStringLiteral("…")) ? text.chopped(1) : text);
  b->setAccessibleDescription(tip);
  b->setMinimumHeight(36);
  return b;
}

}  // namespace

StartPage::StartPage(QWidget* parent) : QWidget(parent) {
  auto* title = new QLabel(tr("<h2>Wan Studio</h2>"), this);
  auto* about = new QLabel(
      tr("Trains Wan 2.2 video models on your own clips: the latent upsampler against the Wan2.2 VAE, and "
         "the high-noise and low-noise experts in one run.<br>Curate a dataset (clips with .txt captions, scenes, "
         "duplicates, scores), start and watch runs, compare checkpoints side by side.<br>Runs train in a worker "
         "of their own: they go on if the studio closes, and the studio finds them again."),
      this);
  about->setWordWrap(true);
  demo_ = bigButton(tr("Try the Demo…"),
                    tr("Choose a folder: the demo data is written there and the demo upsampler run trains in it "
                       "(minutes on a CPU)"),
                    this);
  auto* newRun = bigButton(tr("New Run…"), tr("A run from a preset, on the dataset you have open"), this);
  auto* openMeta = bigButton(tr("Open Dataset…"), tr("A metadata.json"), this);
  auto* openFolder = bigButton(tr("Open Dataset Folder…"),
                               tr("A folder of clips with .txt captions (or holding a metadata.json)"), this);
  auto* workspace = bigButton(tr("Choose Workspace…"), tr("The folder your runs live in, one folder each"), this);
  recent_ = new QListWidget(this);
  recent_->setAccessibleName(tr("Recent workspaces, datasets and runs"));
  auto* grid = new QGridLayout;
  grid->addWidget(demo_, 0, 0);
  grid->addWidget(newRun, 0, 1);
  grid->addWidget(openMeta, 1, 0);
  grid->addWidget(openFolder, 1, 1);
  grid->addWidget(workspace, 2, 0);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(title);
  layout->addWidget(about);
  layout->addLayout(grid);
  layout->addWidget(new QLabel(tr("Recent (double-click to open)"), this));
  layout->addWidget(recent_, 1);

  connect(demo_, &QPushButton::clicked, this, &StartPage::tryDemoRequested);
  connect(newRun, &QPushButton::clicked, this, &StartPage::newRunRequested);
  connect(openMeta, &QPushButton::clicked, this, &StartPage::openDatasetRequested);
  connect(openFolder, &QPushButton::clicked, this, &StartPage::openDatasetFolderRequested);
  connect(workspace, &QPushButton::clicked, this, &StartPage::chooseWorkspaceRequested);
  connect(recent_, &QListWidget::itemActivated, this, [this](QListWidgetItem* item) {
    const QString kind = item->data(KindRole).toString(), path = item->data(PathRole).toString();
    if (kind == QLatin1String("workspaces")) Q_EMIT openWorkspace(path);
    else if (kind == QLatin1String("datasets")) Q_EMIT openDataset(path);
    else Q_EMIT openRun(path);
  });
  refresh({});
}

QStringList StartPage::recent(const QString& kind) {
  return QSettings().value(QStringLiteral("recent/") + kind).toStringList();
}

void StartPage::remember(const QString& kind, const QString& path) {
  if (path.isEmpty()) return;
  QStringList list = recent(kind);
  list.removeAll(path);
  list.prepend(path);
  QSettings().setValue(QStringLiteral("recent/") + kind, list.mid(0, kRecentMax));
}

void StartPage::refresh(const QStringList& runs) {
  recent_->clear();
  const auto add = [this](const QString& kind, const QString& label, const QString& path) {
    if (!QFileInfo::exists(path)) return;  // moved or deleted since
    auto* item = new QListWidgetItem(QStringLiteral("%1: %2").arg(label, path), recent_);
    item->setData(KindRole, kind);
    item->setData(PathRole, path);
  };
  for (const QString& r : runs) add(QStringLiteral("runs"), tr("run"), r);
  for (const QString& d : recent(QStringLiteral("datasets"))) add(QStringLiteral("datasets"), tr("dataset"), d);
  for (const QString& w : recent(QStringLiteral("workspaces"))) add(QStringLiteral("workspaces"), tr("workspace"), w);
}

}  // namespace ws
