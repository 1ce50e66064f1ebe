// SPDX-License-Identifier: Apache-2.0
// What a supervisor appends to a run's events.jsonl when its worker ended without `finished`
// (killed, crashed, hung): an `error` with the reason and `finished`, both marked
// `"supervisor": true`, so every reader of the folder (another studio, a script) knows at once
// that the run is over instead of waiting for its heartbeat to go stale.
#pragma once

#include <QString>

#include "jobs/job_result.h"

namespace ws {

// Appends the record to <runDir>/events.jsonl when that file exists (a worker that never
// opened it leaves nothing to correct). A torn last line is closed first so the record parses.
// Returns false when nothing was written.
bool appendSupervisorRecord(const QString& runDir, const JobResult& result);

}  // namespace ws
