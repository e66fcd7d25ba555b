// exdgemm_testing.cpp - the modular engine's test hooks (core/exdgemm.h,
// xn::testing::set_modular_slots; core/exdgemm_batched.h,
// xn::testing::set_batched_digits).
#include <atomic>

#include "core/exdgemm.h"

namespace xn::testing {

namespace {
std::atomic<int> g_modular_slots{0};
std::atomic<int> g_batched_digits{0};
}  // namespace

void set_modular_slots(int slots) { g_modular_slots.store(slots); }
int modular_slots_override() { return g_modular_slots.load(std::memory_order_relaxed); }
void set_batched_digits(int use) { g_batched_digits.store(use); }
int batched_digits_override() { return g_batched_digits.load(std::memory_order_relaxed); }

}  // namespace xn::testing
