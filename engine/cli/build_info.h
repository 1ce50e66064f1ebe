// SPDX-License-Identifier: Apache-2.0
// What this worker was built with, for `wanstudio-engine --version` and bug reports.
#pragma once
#include <string>

namespace ws::cli {

// "wanstudio-engine X.Y.Z" then one item a line: libtorch, cuda, nccl, sdpa, gloo, video.
std::string build_info();

}  // namespace ws::cli
