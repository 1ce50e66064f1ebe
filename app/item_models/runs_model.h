// SPDX-License-Identifier: Apache-2.0
// The runs of a workspace: every folder holding events.jsonl or run.yaml (the workspace
// itself, or up to three levels below it), with the state derived from its events and from
// whether a worker of ours owns it. Re-reads only what grew since the last refresh.
#pragma once

#include <QAbstractTableModel>
#include <QDateTime>
#include <QTimer>
#include <QVector>

#include <memory>

#include "runfolder/run_events.h"
#include "runfolder/run_status.h"

namespace ws {

class JobManager;

class RunsModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column { NameColumn, StateColumn, StepColumn, LossColumn, JobColumn, UpdatedColumn, ColumnCount };
  enum Role { RunDirRole = Qt::UserRole + 1, StateRole, SortRole };

  explicit RunsModel(JobManager* jobs, QObject* parent = nullptr);
  ~RunsModel() override;

  void setWorkspace(const QString& dir);
  QString workspace() const { return workspace_; }
  void setRefreshInterval(int ms);  // 0: only on refresh()
  void refresh();
  // Lists a run folder that lies outside the workspace too (one opened with --open or
  // File ▸ Open Run Folder), until the workspace changes.
  void addRun(const QString& dir);

  int rowForRunDir(const QString& dir) const;
  QString runDir(int row) const;
  RunStatus status(int row) const;
  const RunSummary& summary(int row) const;

  static bool isRunDir(const QString& dir);
  static QStringList findRunDirs(const QString& workspace, int maxDepth = 3);

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation o, int role) const override;

 private:
  struct Entry {
    QString dir;                        // normalized
    QString name;                       // relative to the workspace
    std::unique_ptr<RunEvents> events;  // summary only
    qint64 offset = 0;
    RunStatus status;
  };
  void readNew(Entry& e);
  void scanStates();

  JobManager* jobs_;
  QString workspace_;
  QStringList opened_;  // normalized run folders added with addRun
  std::vector<Entry> entries_;
  QTimer timer_;
};

}  // namespace ws
