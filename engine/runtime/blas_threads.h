// SPDX-License-Identifier: Apache-2.0
// The BLAS's threads and LibTorch's: keep them from competing for the same cores.
#pragma once

namespace ws::runtime {

// OpenBLAS's pthreads build (Debian's LibTorch multiplies through it) keeps its worker threads
// spinning on sched_yield for 2^28 cycles after every matrix product, while LibTorch's OpenMP
// threads run the elementwise work on the same cores. When the process runs on such an OpenBLAS and
// the user has not set OPENBLAS_THREAD_TIMEOUT, this sets a short one and restarts OpenBLAS's
// threads with it. Returns whether it did. Call it first in main(), before any work.
bool shorten_blas_spin();

}  // namespace ws::runtime
