// SPDX-License-Identifier: Apache-2.0
#include "runtime/allocator.h"

#ifdef __GLIBC__
#include <malloc.h>
#endif

namespace ws::runtime {

void return_large_blocks_to_system(std::size_t bytes) {
#ifdef __GLIBC__
  mallopt(M_MMAP_THRESHOLD, static_cast<int>(bytes));  // also stops the dynamic raise
  mallopt(M_TRIM_THRESHOLD, static_cast<int>(bytes));
#else
  (void)bytes;
#endif
}

void keep_large_blocks_for_reuse(std::size_t bytes, std::size_t top) {
#ifdef __GLIBC__
  mallopt(M_MMAP_THRESHOLD, static_cast<int>(bytes));
  mallopt(M_TRIM_THRESHOLD, static_cast<int>(top));
#else
  (void)bytes;
  (void)top;
#endif
}

void release_free_heap() {
#ifdef __GLIBC__
  malloc_trim(0);
#endif
}

}  // namespace ws::runtime
