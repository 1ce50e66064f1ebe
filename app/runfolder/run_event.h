// SPDX-License-Identifier: Apache-2.0
// One line of the worker's event stream (docs/design/architecture.md §3), parsed by the
// contract's reader (contract/events.h) and held as Qt JSON for the views.
#pragma once

#include <QJsonObject>
#include <QMetaType>
#include <QString>

#include <optional>

#include "contract/events.h"

namespace ws {

struct RunEvent {
  QString type;
  double time = 0;  // unix seconds
  // The whole object as Qt JSON; unknown fields are kept but never required. Empty for `step` events,
  // the bulk of a run (100k+ lines), which are read through `raw`: the accessors below,
  // contract::StepEvent::from_json or RunEvents::StepPoint.
  QJsonObject fields;
  contract::json raw;  // the object as the contract read it, for every type (typed access: contract::*Event::from_json)
  // Reader bookkeeping (RunEvents): which `started` segment it belongs to, and whether a
  // later resume discarded it (a point with step > resume_step of an earlier segment).
  int segment = 0;
  bool dropped = false;

  bool isValid() const { return !type.isEmpty(); }
  // Fields of `raw`, any type of event.
  qint64 step(qint64 fallback = -1) const;
  double number(QLatin1StringView key, double fallback) const;
  QString string(QLatin1StringView key) const;
};

// Parses one line. Blank lines, torn lines, non-objects and objects without a string
// "type" give nullopt: a reader skips them, it never fails on them.
std::optional<RunEvent> parseEventLine(QByteArrayView line);

}  // namespace ws

Q_DECLARE_METATYPE(ws::RunEvent)
