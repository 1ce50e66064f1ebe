// SPDX-License-Identifier: Apache-2.0
// Where this process sits in a data-parallel run, read from its launcher's environment: torchrun's
// variables (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT) or, where those are absent,
// Slurm's (SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID, the first host of SLURM_JOB_NODELIST), so
// `srun wanstudio-engine train-experts ...` needs no wrapper script.
#pragma once
#include <string>

namespace ws::parallel {

struct DistEnv {
  int rank = 0, world = 1, local_rank = 0;
  std::string master_addr = "127.0.0.1";
  int master_port = 29500;
  std::string launcher = "none";  // "torchrun" (or any launcher setting WORLD_SIZE), "slurm", "none"
  // From the environment; ws::Error for values that do not fit together.
  static DistEnv from_environment();
};

// The first host of a Slurm node list: "gpu[07-09,12],cpu1" -> "gpu07", "a,b" -> "a". ws::Error
// for an empty or malformed list.
std::string first_slurm_host(const std::string& nodelist);

}  // namespace ws::parallel
