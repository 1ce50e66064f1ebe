// SPDX-License-Identifier: Apache-2.0
#include "cli/build_info.h"

#include <torch/version.h>

#include "models/cpu_attention.h"
#include "models/cpu_gemm.h"
#include "models/cpu_isa.h"
#include "models/wan_dit_ops.h"

#ifndef WANSTUDIO_CUDA_VERSION
#define WANSTUDIO_CUDA_VERSION "no"
#endif

namespace ws::cli {
namespace {
const char* yes_no(bool v) { return v ? "yes" : "no"; }
}  // namespace

std::string build_info() {
  std::string s = "wanstudio-engine " WANSTUDIO_VERSION_STRING "\n";
  s += "libtorch " + std::to_string(TORCH_VERSION_MAJOR) + "." + std::to_string(TORCH_VERSION_MINOR) + "." +
       std::to_string(TORCH_VERSION_PATCH) + "\n";
  s += std::string("cuda ") + WANSTUDIO_CUDA_VERSION + "\n";
  s += std::string("nccl ") + yes_no(WANSTUDIO_BUILT_NCCL) + "\n";
  s += std::string("sdpa ") + yes_no(WANSTUDIO_HAVE_SDPA) + "\n";
  s += std::string("gloo ") + yes_no(WANSTUDIO_BUILT_GLOO) + "\n";
#ifdef WANSTUDIO_HAVE_VIDEO
  s += "video yes\n";
#else
  s += "video no\n";
#endif
  // Which GEMM runs fp32 products on the CPU here, and why: `onednn (…)` or `libtorch (…)`.
  s += "cpu_gemm " + models::cpu_gemm_description() + "\n";
  // fp32 attention on the CPU: `tiled (rows avx512)` or `composed`.
  const std::string attention = models::cpu_attention_choice();
  s += "cpu_attention " + attention +
       (attention == "tiled" ? std::string(" (rows ") + models::cpu_isa_name(models::cpu_isa()) + ")" : "") + "\n";
  return s;
}

}  // namespace ws::cli
