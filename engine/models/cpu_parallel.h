// SPDX-License-Identifier: Apache-2.0
// Work shared among LibTorch's threads by an OpenMP region of the engine's own. at::parallel_for is
// a header template: its OpenMP region exists only in a file compiled with -fopenmp, which the
// engine's files are not, so there it runs serially. This one file is (engine/CMakeLists.txt), in
// the OpenMP runtime oneDNN uses; inside, oneDNN's products and LibTorch's ops see a parallel
// region and run on the calling thread.
#pragma once
#include <cstdint>
#include <functional>

namespace ws::models {

// f(begin, end) on each thread's even share of [0, items), at::get_num_threads() threads at once.
// The first exception thrown by a share is rethrown here once all have finished.
void cpu_parallel_for(int64_t items, const std::function<void(int64_t, int64_t)>& f);

}  // namespace ws::models
