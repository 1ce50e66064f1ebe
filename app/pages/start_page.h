// SPDX-License-Identifier: Apache-2.0
// The page a new user meets: what Wan Studio does in three lines, Try the demo (a folder of your
// choosing, then the demo run trains there), New Run, Open Dataset (a metadata.json or a folder
// of clips), Choose Workspace, and the recent workspaces, datasets and runs. The main window
// carries the actions out; this page only offers them.
#pragma once

#include <QStringList>
#include <QWidget>

class QListWidget;
class QPushButton;

namespace ws {

class StartPage : public QWidget {
  Q_OBJECT
 public:
  explicit StartPage(QWidget* parent = nullptr);

  // The recent items, newest first (QSettings "recent/<kind>"): kind "workspaces" or "datasets".
  static QStringList recent(const QString& kind);
  static void remember(const QString& kind, const QString& path);
  static constexpr int kRecentMax = 8;
  // Shows the recent lists again and the workspace's newest runs.
  void refresh(const QStringList& runs);

  QPushButton* demoButton() const { return demo_; }
  QListWidget* recentList() const { return recent_; }

 Q_SIGNALS:
  void tryDemoRequested();
  void newRunRequested();
  void openDatasetRequested();
  void openDatasetFolderRequested();
  void chooseWorkspaceRequested();
  void openWorkspace(const QString& dir);
  void openDataset(const QString& path);
  void openRun(const QString& runDir);

 private:
  QPushButton* demo_;
  QListWidget* recent_;
};

}  // namespace ws
