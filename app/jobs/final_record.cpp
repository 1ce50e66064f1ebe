// SPDX-License-Identifier: Apache-2.0
#include "jobs/final_record.h"

#include <QDateTime>
#include <QDir>
#include <QFile>

#include <algorithm>

#include "contract/events.h"
#include "runfolder/run_paths.h"
#include "runfolder/regular_file.h"

namespace ws {

bool appendSupervisorRecord(const QString& runDir, const JobResult& result) {
  if (runDir.isEmpty() || result.sawFinished) return false;
  QFile f(runFile(runDir, contract::kEventsFile));
  if (!f.exists() || !openRegularFile(f, QIODevice::ReadWrite)) return false;
  QByteArray out;
  // A worker killed mid-write leaves a torn line: end it so our lines start clean.
  if (f.size() > 0 && f.seek(f.size() - 1) && f.read(1) != "\n") out += '\n';
  const double now = QDateTime::currentMSecsSinceEpoch() / 1000.0;
  const char* status = result.state == RunState::Cancelled ? "cancelled" : "failed";
  // The contract's writer: the same line format as the worker's own events.
  if (result.state != RunState::Completed && !result.reason.isEmpty())
    out += QByteArray::fromStdString(
        contract::format_event(contract::ErrorEvent{result.reason.toStdString(), {}, true}, now));
  out += QByteArray::fromStdString(
      contract::format_event(contract::FinishedEvent{status, std::max<int64_t>(0, result.step), true}, now));
  if (!f.seek(f.size())) return false;
  const bool ok = f.write(out) == out.size() && f.flush();
  f.close();
  return ok;
}

}  // namespace ws
