// SPDX-License-Identifier: Apache-2.0
#include "models/cpu_parallel.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <atomic>
#include <exception>

#ifdef _OPENMP
#include <omp.h>
#endif

namespace ws::models {

void cpu_parallel_for(int64_t items, const std::function<void(int64_t, int64_t)>& f) {
  if (items <= 0) return;
  const int threads = static_cast<int>(std::min<int64_t>(std::max(1, at::get_num_threads()), items));
#ifdef _OPENMP
  if (threads > 1) {
    std::exception_ptr error;
    std::atomic_flag failed = ATOMIC_FLAG_INIT;
#pragma omp parallel num_threads(threads)
    {
      const int64_t nt = omp_get_num_threads(), chunk = (items + nt - 1) / nt;
      const int64_t lo = omp_get_thread_num() * chunk, hi = std::min(items, lo + chunk);
      try {
        if (lo < hi) f(lo, hi);
      } catch (...) {
        if (!failed.test_and_set()) error = std::current_exception();
      }
    }
    if (error) std::rethrow_exception(error);
    return;
  }
#endif
  f(0, items);
}

}  // namespace ws::models
