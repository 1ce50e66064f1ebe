// SPDX-License-Identifier: Apache-2.0
// Compare ▸ Loss curves: the loss of several runs on one chart (one line per run, or per run and
// expert for the dual-expert runs), against the run's step or each expert's own step. The runs'
// events are read on a background thread; only the newest read is drawn (a newer one supersedes
// it), and a checked run that grew is read again when the tab is on screen.
#pragma once

#include <QFutureWatcher>
#include <QHash>
#include <QVector>
#include <QWidget>

class QComboBox;
class QLabel;
class QListWidget;

namespace ws {

class LossChart;
class RunsModel;

class LossOverlay : public QWidget {
  Q_OBJECT
 public:
  struct Curve {
    QString name;  // "run" or "run · high"
    QVector<double> x, y;
  };
  explicit LossOverlay(RunsModel* runs, QWidget* parent = nullptr);
  ~LossOverlay() override;

  // Checks or unchecks a run (by folder); false when the run is not listed.
  bool setRunChecked(const QString& runDir, bool on);
  QStringList checkedRuns() const;
  void setExpertSteps(bool on);  // the x axis: each expert's own step instead of the run's

  QListWidget* runList() const { return list_; }
  QComboBox* axisChoice() const { return axis_; }
  LossChart* chart() const { return chart_; }
  const QList<Curve>& curves() const { return curves_; }

  // Reads the checked runs again (in the background); curvesLoaded follows.
  void reload();

 Q_SIGNALS:
  void curvesLoaded();

 protected:
  void showEvent(QShowEvent* event) override;

 private:
  void fillRuns();
  void reloadIfGrown();
  void draw();

  RunsModel* runs_;
  QListWidget* list_;
  QComboBox* axis_;
  QLabel* note_;
  LossChart* chart_;
  QList<Curve> curves_;
  QHash<QString, qint64> loadedSizes_;  // events.jsonl sizes of the last read
  QFutureWatcher<QList<Curve>> watcher_;
  quint64 generation_ = 0;
};

}  // namespace ws
