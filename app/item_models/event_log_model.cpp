// SPDX-License-Identifier: Apache-2.0
#include "item_models/event_log_model.h"

#include <QGuiApplication>
#include <QColor>
#include <QDateTime>

#include "runfolder/event_format.h"
#include "runfolder/run_events.h"
#include "theme.h"

namespace ws {
namespace {

QString clock(double t) {
  return t > 0 ? QDateTime::fromMSecsSinceEpoch(qint64(t * 1000)).toString(QStringLiteral("HH:mm:ss"))
               : QStringLiteral("--:--:--");
}

}  // namespace

EventLogModel::EventLogModel(RunEvents* events, QObject* parent)
    : QAbstractListModel(parent), events_(events), rows_(events->logRowCount()) {
  connect(events_, &RunEvents::rowsAppended, this, [this](int first, int last) {
    if (last < rows_) return;
    beginInsertRows({}, rows_, last);
    rows_ = last + 1;
    endInsertRows();
    (void)first;
  });
  connect(events_, &RunEvents::cleared, this, [this] {
    beginResetModel();
    rows_ = 0;
    endResetModel();
  });
  // A resume marks earlier points as discarded: their rows change colour.
  connect(events_, &RunEvents::pointsReset, this, [this] {
    if (rows_ > 0) Q_EMIT dataChanged(index(0), index(rows_ - 1));
  });
}

int EventLogModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : rows_; }

QVariant EventLogModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rows_) return {};
  const RunEvents::LogRow row = events_->logRow(index.row());
  const qint64 maxSteps = events_->summary().maxTrainSteps;
  if (row.isStep) {
    const RunEvents::StepPoint& p = events_->steps().at(row.index);
    switch (role) {
      case Qt::DisplayRole: return clock(p.time) + QStringLiteral("  ") + formatStep(p, maxSteps);
      case LevelRole: return int(LogLevel::Step);
      case TypeRole: return QStringLiteral("step");
      case Qt::ForegroundRole: return p.dropped ? QColor(Qt::gray) : QVariant();
      default: return {};
    }
  }
  const RunEvent& ev = events_->events().at(row.index);
  switch (role) {
    case Qt::DisplayRole: {
      QString text = clock(ev.time) + QStringLiteral("  ") + formatEvent(ev, maxSteps);
      if (ev.dropped) text += QStringLiteral("  (discarded by a resume)");
      return text;
    }
    case LevelRole: return int(eventLevel(ev));
    case TypeRole: return ev.type;
    case Qt::ForegroundRole: {
      if (ev.dropped) return QColor(Qt::gray);
      const LogLevel level = eventLevel(ev);
      const QPalette pal = QGuiApplication::palette();
      if (level == LogLevel::Error) return toneColor(Tone::Error, pal);
      if (level == LogLevel::Warning) return toneColor(Tone::Warning, pal);
      if (ev.type == QLatin1String("started") || ev.type == QLatin1String("finished"))
        return toneColor(Tone::Running, pal);
      return {};
    }
    default: return {};
  }
}

}  // namespace ws
