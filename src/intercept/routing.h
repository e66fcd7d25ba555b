// routing.h - what the interposer decides for every intercepted call, written
// once for all routine families (docs/design.md, "Interposer"): the
// environment, the modes' routines, the per-symbol counts and log, and the
// route of a call (rerouted to libxngemm, or passed through, and why).
#pragma once

#include <atomic>
#include <cstdint>
#include <type_traits>

#include "intercept/next_definition.h"
#include "intercept/symbols.h"
#include "numerics/elementwise.h"

namespace xn::intercept {

// Why a call went where it went: one counter each per symbol.
enum Outcome {
  kRerouted,
  kOff,           // XN_INTERCEPT off
  kSmall,         // below XN_INTERCEPT_MIN_FLOPS (GEMM) / _MIN_VECTOR_FLOPS (GEMV, DOT)
  kNegative,      // ngemm: an operand has a negative entry
  kNonFinite,     // a recursive mode: NaN or Inf would spread further than in BLAS
  kNoRoutine,     // the mode has no routine for the family or precision
  kBadArguments,  // left to the BLAS to report
  kReentrant,     // the library's own BLAS call during a rerouted one
  kQuickReturn,   // nothing the routine would read (alpha = 0, empty output)
  kNoLibrary,     // libxngemm could not be loaded
  kCannotRun,     // the library could not run the call and left its output
                  // untouched (no memory, ...)
  kDeviceError,   // cuBLAS: the library's routine failed after it may have
                  // written its output: its status is returned, cuBLAS not called
  kTooLarge,      // a 64-bit integer argument beyond the library's 32-bit ones
  kOtherTypes,    // cublasGemm*Ex: operands or compute type other than FP64
  kOutcomes
};

// What a mode requires of op(A) and op(B) before it takes a call.
enum class Scan {
  None,    // exdgemm: every input, non-finite ones as BLAS
  Finite,  // Strassen, Winograd: NaN and Inf would reach more entries than
           // in the classical product (pre-additions, Inf - Inf)
  NonNeg,  // ngemm: its contract (Badin et al., ICS'13), and finite
};

// A mode: XN_INTERCEPT's value, its scan, and the library's routine for
// each form and precision (double, single; nullptr: none, the call passes
// through).
struct Mode {
  const char *name;
  Scan scan;
  const char *routine[int(Form::kForms)][2];
};

struct Config {
  const Mode *mode = nullptr;  // nullptr: off
  const char *mode_name = "off";
  double min_flops = 0;         // GEMM: 2 m n k (XN_INTERCEPT_MIN_FLOPS)
  double min_vector_flops = 0;  // GEMV: 2 m n, DOT: 2 n (XN_INTERCEPT_MIN_VECTOR_FLOPS)
  bool log = false;
};

// The environment, read and validated once.
const Config &config();

// An intercepted symbol: its form, where its passed-through calls go, and
// its counts.
struct Symbol {
  constexpr Symbol(const char *name, Form f, bool blas) : form(f), next(name, blas) {}
  Form form;
  NextDefinition next;
  std::atomic<std::uint64_t> count[kOutcomes] = {};
};
Symbol &symbol(SymbolId id);

void count(SymbolId id, Outcome o);

// The definition a call that is not rerouted goes to (`caller`: the
// intercepted call's return address).
template <class F>
F next_for(SymbolId id, Outcome o, const void *caller) {
  NextDefinition &next = symbol(id).next;
  return o == kReentrant ? next.for_library<F>() : next.for_program<F>(caller);
}

// Whether the calling thread is inside one of xNGEMM's entry points.
bool inside_library();

// The library's routine `name` (loading the library), or nullptr.
void *library_routine(const char *name);
template <class F>
F routine(const char *name) {
  return reinterpret_cast<F>(library_routine(name));
}

// The mode's routine for a form and precision (0 double, 1 single), or
// nullptr.
const char *mode_routine(Form form, int precision);
// Its address in the library (loading the library), or nullptr; resolved
// once.
void *mode_routine_address(Form form, int precision);

template <class T>
constexpr int precision_index() {
  return sizeof(T) == sizeof(double) ? 0 : 1;
}

// The threshold of a form's family: XN_INTERCEPT_MIN_FLOPS for the GEMMs,
// XN_INTERCEPT_MIN_VECTOR_FLOPS for GEMV and DOT.
double min_flops(Form form);

// Where a valid call goes; kRerouted when to the library. `flops`: the
// call's size for its family's threshold; `quick`: BLAS's quick return
// (nothing read, nothing to reroute); `flags_of(&flags)` classifies op(A)
// and op(B) for the scanning modes (kRerouted, or why it could not).
template <class FlagsOf>
Outcome route(Form form, int precision, double flops, bool quick, FlagsOf &&flags_of) {
  const Config &c = config();
  if (inside_library()) return kReentrant;
  if (quick) return kQuickReturn;
  if (!c.mode) return kOff;
  if (!mode_routine(form, precision)) return kNoRoutine;
  if (flops < min_flops(form)) return kSmall;
  if (c.mode->scan == Scan::None) return kRerouted;
  int flags = 0;
  const Outcome scanned = flags_of(&flags);
  if (scanned != kRerouted) return scanned;
  if (flags & kEntryNonFinite) return kNonFinite;
  if (c.mode->scan == Scan::NonNeg && (flags & kEntryNegative)) return kNegative;
  return kRerouted;
}

// Before a rerouted host call: ngemm mode turns on the host routines'
// non-negative check (once). After it: whether the library could not run it
// and left the output untouched (its per-thread flag).
void prepare_host_call();
bool host_call_failed();

// On kRerouted runs `call` (the library's host routine), then passes the
// call through if the library could not run it (a BLAS routine has no
// status to say so; the library's flag does); otherwise passes it through:
// `pass(next)` with the definition the outcome calls for. Counts what
// happened; returns what `call` or `pass` returned.
template <class F, class Call, class Pass>
auto dispatch_host(SymbolId id, Outcome o, const void *caller, Call &&call, Pass &&pass) {
  using Result = decltype(call());
  if (o == kRerouted) {
    prepare_host_call();
    if constexpr (std::is_void_v<Result>) {
      call();
      if (!host_call_failed()) return count(id, kRerouted);
    } else {
      const Result r = call();
      if (!host_call_failed()) {
        count(id, kRerouted);
        return r;
      }
    }
    o = kCannotRun;
  }
  count(id, o);
  return pass(next_for<F>(id, o, caller));
}

// True if every value fits a 32-bit int (the library's integer arguments).
template <class... Int>
bool fits_int(Int... v) {
  return ((v >= INT32_MIN && v <= INT32_MAX) && ...);
}

}  // namespace xn::intercept

