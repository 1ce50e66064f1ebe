// SPDX-License-Identifier: Apache-2.0
// Which of the engine's hand-written vector kernels this CPU runs (models/cpu_rows.h,
// train/adamw_kernel.h). The build targets the baseline x86-64, where LibTorch's vector headers
// fall back to scalar code; these kernels are compiled for AVX-512 and AVX2 as well, function by
// function, and one set is picked at run time from what the CPU reports.
#pragma once

namespace ws::models {

enum class CpuIsa { Scalar, Avx2, Avx512 };

// The kernels in use: the CPU's widest unless a test chose others.
CpuIsa cpu_isa();
// "scalar", "avx2" or "avx512".
const char* cpu_isa_name(CpuIsa isa);
// For tests: use the named kernels from now on ("" for the CPU's widest again). False, and no
// change, when this CPU cannot run them.
bool use_cpu_isa(const char* name);

}  // namespace ws::models

// Marks a function compiled for one instruction set (GCC and Clang on x86-64 only).
#if defined(__x86_64__) && defined(__GNUC__)
#define WS_CPU_X86 1
#define WS_TARGET_AVX512 __attribute__((target("avx512f,fma")))
#define WS_TARGET_AVX2 __attribute__((target("avx2,fma")))
#else
#define WS_CPU_X86 0
#endif
