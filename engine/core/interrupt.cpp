// SPDX-License-Identifier: Apache-2.0
#include "core/interrupt.h"

#include <atomic>

namespace ws {
namespace {
std::atomic<bool (*)()> g_check{nullptr};
}  // namespace

void set_interrupt_check(bool (*check)()) { g_check.store(check, std::memory_order_release); }

void interruption_point() {
  bool (*check)() = g_check.load(std::memory_order_acquire);
  if (check && check()) throw Interrupted();
}

}  // namespace ws
