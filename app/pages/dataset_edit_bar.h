// SPDX-License-Identifier: Apache-2.0
// The dataset page's row above the grid for making and curating: a new dataset from a folder of
// clips with sidecar captions (the engine's `dataset import`, on a worker thread, cancellable),
// files added (also by dropping them on the grid), rows removed and put back, captions exported
// as .txt files beside the clips.
#pragma once

#include <QFutureWatcher>
#include <QPointer>
#include <QStringList>
#include <QWidget>

#include <atomic>
#include <memory>

#include "dataset/import_folder.h"

class QAbstractItemView;
class QLabel;
class QPushButton;

namespace ws {

class DatasetPage;
class DuplicatesDialog;
class SceneSplitDialog;

class DatasetEditBar : public QWidget {
  Q_OBJECT
 public:
  explicit DatasetEditBar(DatasetPage* page);
  ~DatasetEditBar() override;

  // Imports `dir` into a new dataset written at `metadataPath`, then opens it. False when the page's
  // unsaved edits were kept or an import is running.
  bool importFolder(const QString& dir, const QString& metadataPath);
  bool importing() const { return watcher_.isRunning(); }
  void cancelImport();
  // Files the last import or add left out or found a problem with ("name: why").
  QStringList lastProblems() const { return problems_; }

  QPushButton* newButton() const { return new_; }
  QPushButton* addButton() const { return add_; }
  QPushButton* removeButton() const { return remove_; }
  QPushButton* undoButton() const { return undo_; }
  QPushButton* exportButton() const { return export_; }
  QPushButton* duplicatesButton() const { return dupes_; }
  QPushButton* splitButton() const { return split_; }
  QPushButton* cancelButton() const { return cancel_; }

 public Q_SLOTS:
  void chooseFolder();
  void chooseFiles();
  int addFiles(const QStringList& files);
  int removeSelected();
  void undoRemove();
  int exportCaptions();
  // Opens the duplicates dialog and starts its search (returned for tests; owned by the bar).
  DuplicatesDialog* findDuplicates();
  // Opens the scene splitter on `video` and starts its scan; the clips it writes open on the page.
  SceneSplitDialog* splitScenes(const QString& video);
  void chooseVideoToSplit();

 Q_SIGNALS:
  void importFinished(int rows, const QString& error);

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override;

 private:
  void updateButtons();
  void importDone();

  DatasetPage* page_;
  QPointer<QAbstractItemView> grid_;  // the page's grid and its viewport, watched for keys and drops
  QPointer<QWidget> viewport_;
  QPushButton *new_, *add_, *remove_, *undo_, *export_, *dupes_, *split_, *cancel_;
  QLabel* progress_;
  QString importPath_;
  QStringList problems_;
  std::shared_ptr<std::atomic<bool>> cancel_flag_;
  std::shared_ptr<std::atomic<int>> done_, total_;
  struct ImportOutcome {
    dataset::ImportResult result;
    QString error;  // the worker's ws::Error ("cancelled" too)
  };
  QFutureWatcher<ImportOutcome> watcher_;
};

}  // namespace ws
