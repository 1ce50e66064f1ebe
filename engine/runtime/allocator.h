// The C allocator's behaviour for one-shot inference verbs (`vae encode|decode` and their benches).
// glibc keeps freed blocks below its mmap threshold in the heap for reuse, and raises that
// threshold (up to 32 MB) whenever a mapped block is freed, so the peak resident memory of a single
// VAE call holds transients it never reuses. Fixing the threshold maps every block of `bytes` or
// more on its own and unmaps it when freed: a lower peak for page faults on each new block (the
// released Wan2.2 decode at 17x128x128, with the trim between chunks: 2877 -> about 2780 MB, 17 ->
// 25 s). Training keeps the default: its steps reuse the same sizes, where the heap is much faster
// (an upsampler step took 3x as long with it).
#pragma once
#include <cstddef>

namespace ws::runtime {

void return_large_blocks_to_system(std::size_t bytes = std::size_t{8} << 20);

}  // namespace ws::runtime
