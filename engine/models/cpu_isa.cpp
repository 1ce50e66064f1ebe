// SPDX-License-Identifier: Apache-2.0
#include "models/cpu_isa.h"

#include <atomic>
#include <string>
#include <vector>

namespace ws::models {
namespace {

// What this CPU runs, widest first (CPUID and the OS's saved vector state, as GCC's checks read them).
const std::vector<CpuIsa>& runnable_isas() {
  static const std::vector<CpuIsa> all = [] {
    std::vector<CpuIsa> v;
#if WS_CPU_X86
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f")) v.push_back(CpuIsa::Avx512);
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) v.push_back(CpuIsa::Avx2);
#endif
    v.push_back(CpuIsa::Scalar);
    return v;
  }();
  return all;
}

// −1: the widest; otherwise a test's choice.
std::atomic<int> g_chosen_isa{-1};

}  // namespace

CpuIsa cpu_isa() {
  const int c = g_chosen_isa.load(std::memory_order_relaxed);
  return c < 0 ? runnable_isas().front() : static_cast<CpuIsa>(c);
}

const char* cpu_isa_name(CpuIsa isa) {
  switch (isa) {
    case CpuIsa::Avx512: return "avx512";
    case CpuIsa::Avx2: return "avx2";
    case CpuIsa::Scalar: break;
  }
  return "scalar";
}

bool use_cpu_isa(const char* name) {
  if (!name || !*name) {
    g_chosen_isa.store(-1);
    return true;
  }
  for (CpuIsa isa : runnable_isas())
    if (std::string(cpu_isa_name(isa)) == name) {
      g_chosen_isa.store(static_cast<int>(isa));
      return true;
    }
  return false;
}

}  // namespace ws::models
