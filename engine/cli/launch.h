// SPDX-License-Identifier: Apache-2.0
// `wanstudio-engine launch --nproc N VERB ARGS...`: data parallel on one machine without
// torchrun. Starts N copies of this worker running VERB with torchrun's variables (RANK,
// WORLD_SIZE, LOCAL_RANK, MASTER_ADDR=127.0.0.1, a free MASTER_PORT), passes rank 0's stdout
// through (the only rank that emits events) and every rank's stderr, forwards SIGINT/SIGTERM to
// all ranks, and ends as rank 0 ended: its exit code, or the same signal. A rank that fails
// takes the others down after a grace period, so no rank is left waiting in a collective.
#pragma once
#include <string>
#include <vector>

namespace ws::cli {

int run_launch(const std::vector<std::string>& args);

}  // namespace ws::cli
