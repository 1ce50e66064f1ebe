// SPDX-License-Identifier: Apache-2.0
// The C allocator's behaviour: two policies, for one-shot inference and for training.
//
// One-shot inference verbs (`vae encode|decode` and their benches): glibc keeps freed blocks below its mmap threshold
// in the heap for reuse, and raises that threshold (up to 32 MB) whenever a mapped block is freed, so the peak resident
// memory of a single VAE call holds transients it never reuses. Fixing the threshold maps every block of `bytes` or
// more on its own and unmaps it when freed: a lower peak for page faults on each new block (the
// released Wan2.2 decode at 17x128x128, with the trim between chunks: 2877 -> about 2780 MB, 17 ->
// 25 s).
//
// Training repeats the same sizes every step, so the opposite pays: glibc's dynamic threshold stops
// at 32 MB, and every larger block (a 512-wide 3-D conv's weight-sized copies in backward, 28 MB
// each) was mapped, faulted in page by page, zeroed by the kernel and unmapped again, every step.
// Keeping blocks up to 256 MB in the heap, and the heap's top up to 1 GB, reuses them instead
// (oneDNN's 28 MB weight reorders among them): the released-width upsampler step at 5x16x16 took
// 5.0-5.4 s instead of 6.4-7.9 s, for 97 MB (3 %) more peak. A 64 MB threshold gave 5.7 s and no
// extra peak: oneDNN's backward scratchpads lie between the two.
#pragma once
#include <cstddef>

namespace ws::runtime {

void return_large_blocks_to_system(std::size_t bytes = std::size_t{8} << 20);
void keep_large_blocks_for_reuse(std::size_t bytes = std::size_t{256} << 20, std::size_t top = std::size_t{1} << 30);
// Gives the heap's free pages back to the system, holes included (malloc_trim): once, between a
// training run's loading (models, packed VAE kernels) and its first step.
void release_free_heap();

}  // namespace ws::runtime
