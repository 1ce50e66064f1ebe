// SPDX-License-Identifier: Apache-2.0
#include "parallel/dist_env.h"

#include <cstdlib>

#include "core/error.h"

namespace ws::parallel {
namespace {

const char* env(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? v : nullptr;
}

int env_int(const char* name, int fallback) {
  const char* v = env(name);
  if (!v) return fallback;
  char* end = nullptr;
  const long x = std::strtol(v, &end, 10);
  if (*end) throw Error(std::string(name) + "='" + v + "' is not an integer");
  return static_cast<int>(x);
}

}  // namespace

std::string first_slurm_host(const std::string& nodelist) {
  // The first entry ends at the first comma outside brackets.
  size_t end = 0;
  int depth = 0;
  for (; end < nodelist.size(); ++end) {
    const char c = nodelist[end];
    if (c == '[') ++depth;
    if (c == ']') --depth;
    if (c == ',' && depth == 0) break;
    if (depth < 0 || depth > 1) break;
  }
  const std::string first = nodelist.substr(0, end);
  const auto bad = [&] { return Error("SLURM_JOB_NODELIST='" + nodelist + "' is not a Slurm node list"); };
  if (first.empty() || depth != 0) throw bad();
  // Each bracket group's first number, with its zero padding: "n[07-09,12]" -> "n07"; several
  // groups ("r[1-2]-n[3-4]") combine, and their first host takes the first of each.
  std::string host;
  size_t pos = 0;
  while (pos < first.size()) {
    const size_t open = first.find('[', pos);
    if (open == std::string::npos) {
      host += first.substr(pos);
      break;
    }
    const size_t close = first.find(']', open);
    if (close == std::string::npos) throw bad();
    const std::string inner = first.substr(open + 1, close - open - 1);
    const std::string start = inner.substr(0, inner.find_first_of("-,"));
    if (start.empty() || start.find_first_not_of("0123456789") != std::string::npos) throw bad();
    host += first.substr(pos, open - pos) + start;
    pos = close + 1;
  }
  return host;
}

DistEnv DistEnv::from_environment() {
  DistEnv e;
  if (env("WORLD_SIZE") || !env("SLURM_NTASKS")) {
    e.world = env_int("WORLD_SIZE", 1);
    e.rank = env_int("RANK", 0);
    e.local_rank = env_int("LOCAL_RANK", e.rank);
    if (env("WORLD_SIZE")) e.launcher = "torchrun";
  } else {
    // srun starts one task per rank; the master is the first node of the job, where task 0 runs.
    e.world = env_int("SLURM_NTASKS", 1);
    e.rank = env_int("SLURM_PROCID", 0);
    e.local_rank = env_int("SLURM_LOCALID", 0);
    const char* nodes = env("SLURM_JOB_NODELIST") ? env("SLURM_JOB_NODELIST") : env("SLURM_NODELIST");
    if (e.world > 1) {
      if (!nodes) throw Error("SLURM_NTASKS is " + std::to_string(e.world) + " but SLURM_JOB_NODELIST is not set");
      e.master_addr = first_slurm_host(nodes);
    }
    e.launcher = "slurm";
  }
  if (const char* a = env("MASTER_ADDR")) e.master_addr = a;
  e.master_port = env_int("MASTER_PORT", 29500);
  if (e.world < 1) throw Error("WORLD_SIZE must be at least 1, got " + std::to_string(e.world));
  if (e.rank < 0 || e.rank >= e.world)
    throw Error("RANK " + std::to_string(e.rank) + " is outside 0.." + std::to_string(e.world - 1) + " (WORLD_SIZE " +
                std::to_string(e.world) + ")");
  if (e.local_rank < 0) throw Error("LOCAL_RANK must not be negative, got " + std::to_string(e.local_rank));
  if (e.master_port <= 0 || e.master_port > 65535) throw Error("MASTER_PORT must be 1..65535");
  return e;
}

}  // namespace ws::parallel
