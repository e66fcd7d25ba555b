// exdgemm_testing.cpp - the modular engine's test hook (core/exdgemm.h,
// xn::testing::set_modular_slots).
#include <atomic>

#include "core/exdgemm.h"

namespace xn::testing {

namespace {
std::atomic<int> g_modular_slots{0};
}  // namespace

void set_modular_slots(int slots) { g_modular_slots.store(slots); }
int modular_slots_override() { return g_modular_slots.load(std::memory_order_relaxed); }

}  // namespace xn::testing
