// intercept.cpp - libxngemm_intercept.so: the GEMMs of an unchanged program,
// rerouted to xNGEMM by environment, loaded with LD_PRELOAD. The host BLAS
// ones (dgemm_, sgemm_, cblas_dgemm, cblas_sgemm) go to the host entry
// points; cuBLAS's (cublasDgemm_v2, cublasSgemm_v2: cuBLAS 13 has no separate
// un-suffixed symbols) go to the device routines on the caller's handle,
// stream and pointer mode.
//
//   XN_INTERCEPT           off (default) | exdgemm | ngemm | strassen | winograd
//   XN_INTERCEPT_MIN_FLOPS calls with 2 m n k below this pass through (default 0)
//   XN_INTERCEPT_LOG       1: at exit, a summary on stderr: per routine, how
//                          many calls were rerouted and passed through, why
//                          and to which library
// (rows of kEnvironmentTable, src/core/environment.cpp, compiled in: read
// and validated once, when the interposer is loaded).
//
// A call that is not rerouted goes to the definition its caller reaches
// without the interposer (NextDefinition: the global scope, then the calling
// object's own scope), with its arguments untouched: the
// result is the one the program gets without the interposer, bad arguments
// included (they are never rerouted, so the BLAS reports them as it always
// does). libxngemm is loaded only at the first rerouted call, privately
// (RTLD_LOCAL): a process that reroutes nothing loads neither it nor CUDA,
// and the library's own BLAS never becomes the program's. The library's BLAS
// calls (its CPU leaves) come back here while a host entry point runs; the
// library's per-thread count of them (core/call_depth.h) sends them straight
// through, also when the program calls xNGEMM directly. A call the library
// cannot run (C left untouched: a cuBLAS status says so, for a BLAS call the
// library's per-thread flag) goes to the real routine; cublasDestroy_v2
// first frees the library's state of the handle.
// docs/design.md, "Interposer".
#include <cublas_v2.h>
#include <dlfcn.h>
#include <link.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "api/interposer_support.h"
#include "core/environment.h"
#include "numerics/elementwise.h"
#include "xngemm.h"

#ifndef XN_LIBRARY_SONAME
#define XN_LIBRARY_SONAME "libxngemm.so.0"
#endif

// The interposer is built with hidden visibility: only what it intercepts is
// exported (exports.map).
#define XN_INTERCEPTED extern "C" __attribute__((visibility("default")))

namespace {

// Why a call went where it went: one counter each per routine.
enum Outcome {
  kRerouted,
  kOff,           // XN_INTERCEPT off
  kSmall,         // 2 m n k below XN_INTERCEPT_MIN_FLOPS
  kNegative,      // ngemm: an operand has a negative entry
  kNonFinite,     // a recursive mode: NaN or Inf would spread further than in BLAS
  kNoRoutine,     // the mode has no routine for the precision (single, exdgemm)
  kBadArguments,  // left to the BLAS to report
  kReentrant,     // the library's own BLAS call during a rerouted one
  kQuickReturn,   // alpha = 0, k = 0 or an empty C: A and B are not read
  kNoLibrary,     // libxngemm could not be loaded
  kCannotRun,     // the library's scan or routine could not run the call and
                  // left C untouched (no memory, ...)
  kDeviceError,   // cuBLAS: the library's routine failed after it may have
                  // written C: its status is returned, cuBLAS not called
  kOutcomes
};
// As the exit summary says them (no comma, no parenthesis: its separators).
constexpr const char *kOutcomeNames[kOutcomes] = {
    "rerouted",
    "XN_INTERCEPT=off",
    "below XN_INTERCEPT_MIN_FLOPS",
    "negative entries",
    "NaN or Inf entries",
    "no routine for this precision",
    "bad arguments",
    "the library's own calls",
    "quick return",
    "libxngemm not loadable",
    "xNGEMM could not run them",
    "rerouted and failed"};

// The routines counted, one summary line each.
enum Routine {
  kDgemm,
  kSgemm,
  kCblasDgemm,
  kCblasSgemm,
  kCublasDgemm,
  kCublasSgemm,
  kRoutines
};

// ---------------------------------------------------------------- the next definition

// An object in the process (its load bias: dl_iterate_phdr's dlpi_addr, the
// link map's l_addr) and its path.
struct LoadedObject {
  ElfW(Addr) base;
  std::string path;
};

// Every loaded object, in load order (the main program first, then the
// preloaded libraries, then the rest).
std::vector<LoadedObject> loaded_objects() {
  std::vector<LoadedObject> objects;
  dl_iterate_phdr(
      [](dl_phdr_info *info, std::size_t, void *out) {
        static_cast<std::vector<LoadedObject> *>(out)->push_back(
            {info->dlpi_addr, info->dlpi_name ? info->dlpi_name : ""});
        return 0;
      },
      &objects);
  return objects;
}

// The object that holds address `p` (its load bias and path); false if none.
bool object_of(const void *p, ElfW(Addr) *base, const char **path = nullptr) {
  Dl_info info;
  link_map *map = nullptr;
  if (!p || !dladdr1(p, &info, reinterpret_cast<void **>(&map), RTLD_DL_LINKMAP) || !map)
    return false;
  *base = map->l_addr;
  if (path) *path = map->l_name;
  return true;
}

// libxngemm, loaded at the first rerouted call, privately; nullptr (said
// once) when it cannot be. g_library: the handle once loaded, for the paths
// that must not load it. g_library_objects: the objects that load brought
// in (libxngemm, its OpenBLAS, CUDA, ...), never the program's BLAS.
std::atomic<void *> g_library{nullptr};
std::mutex g_objects_mutex;
std::vector<ElfW(Addr)> g_library_objects;  // under g_objects_mutex

void *library() {
  static void *const handle = [] {
    const std::vector<LoadedObject> before = loaded_objects();
    void *h = dlopen(XN_LIBRARY_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      std::fprintf(stderr,
                   "xngemm intercept: cannot load %s (%s): every call passes "
                   "through\n",
                   XN_LIBRARY_SONAME, dlerror());
      return h;
    }
    std::vector<ElfW(Addr)> brought;
    for (const LoadedObject &o : loaded_objects())
      if (std::none_of(before.begin(), before.end(),
                       [&](const LoadedObject &b) { return b.base == o.base; }))
        brought.push_back(o.base);
    {
      std::lock_guard<std::mutex> lock(g_objects_mutex);
      g_library_objects = brought;
    }
    g_library.store(h, std::memory_order_release);
    return h;
  }();
  return handle;
}

// The objects a passed-through call must never reach (their load biases):
// the interposer itself (first) and, for a BLAS symbol, what loading
// libxngemm brought in (its OpenBLAS is not the program's BLAS), else
// libxngemm alone (cuBLAS is one library that the program and libxngemm
// share). Empty if the interposer cannot find itself.
std::vector<ElfW(Addr)> excluded_objects(bool blas) {
  ElfW(Addr) own = 0;
  if (!object_of(reinterpret_cast<const void *>(&loaded_objects), &own)) return {};
  std::vector<ElfW(Addr)> excluded{own};
  std::lock_guard<std::mutex> lock(g_objects_mutex);
  if (blas) {
    excluded.insert(excluded.end(), g_library_objects.begin(), g_library_objects.end());
  } else if (void *lib = g_library.load(std::memory_order_acquire)) {
    ElfW(Addr) base = 0;
    if (object_of(dlsym(lib, "xn_internal_call_depth"), &base)) excluded.push_back(base);
  }
  return excluded;
}

// The first definition of `name` in an object loaded after the interposer,
// looked up in each object alone (dlopen with RTLD_NOLOAD: a handle to what
// is there, nothing loaded). The dynamic linker's RTLD_NEXT sees only the
// global scope; this reaches what extension modules and dlopen load with
// RTLD_LOCAL (HPCToolkit's libmonitor resolves its wrapped symbols so).
// Never an excluded object.
void *search_loaded_objects(const char *name, bool blas) {
  const std::vector<ElfW(Addr)> excluded = excluded_objects(blas);
  if (excluded.empty()) return nullptr;
  const ElfW(Addr) own = excluded.front();
  bool after_interposer = false;
  for (const LoadedObject &o : loaded_objects()) {
    if (!after_interposer) {
      after_interposer = o.base == own;
      continue;
    }
    if (o.path.empty() ||
        std::find(excluded.begin(), excluded.end(), o.base) != excluded.end())
      continue;
    void *h = dlopen(o.path.c_str(), RTLD_NOLOAD | RTLD_LAZY);
    if (!h) continue;
    // dlsym on a handle also searches the object's dependencies: only a
    // definition in the object itself counts here (its dependencies come
    // in their own turn).
    void *p = dlsym(h, name);
    ElfW(Addr) base = 0;
    const bool here = p && object_of(p, &base) && base == o.base;
    dlclose(h);
    if (here) return p;
  }
  return nullptr;
}

// The address range [lo, hi) an object's loadable segments span.
struct AddressRange {
  std::uintptr_t lo = 0, hi = 0;
};
AddressRange address_range(ElfW(Addr) base) {
  struct Query {
    ElfW(Addr) base;
    AddressRange range;
  } query{base, {}};
  dl_iterate_phdr(
      [](dl_phdr_info *info, std::size_t, void *data) {
        auto *q = static_cast<Query *>(data);
        if (info->dlpi_addr != q->base) return 0;
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          const ElfW(Phdr) &ph = info->dlpi_phdr[i];
          if (ph.p_type != PT_LOAD) continue;
          const std::uintptr_t lo = info->dlpi_addr + ph.p_vaddr, hi = lo + ph.p_memsz;
          if (!q->range.hi || lo < q->range.lo) q->range.lo = lo;
          if (hi > q->range.hi) q->range.hi = hi;
        }
        return 1;
      },
      &query);
  return query.range;
}

// The definition of `name` in the lookup scope of the object at `path`
// (dlsym on its handle: the object, then its dependencies, breadth first):
// what the dynamic linker binds for that object's references when the global
// scope has none, as for a module loaded with RTLD_LOCAL. Never an excluded
// object. nullptr if none.
void *search_caller_scope(const char *path, const char *name, bool blas) {
  if (!path || !*path) return nullptr;  // the program: its scope is the global one
  void *h = dlopen(path, RTLD_NOLOAD | RTLD_LAZY);
  if (!h) return nullptr;
  void *p = dlsym(h, name);
  dlclose(h);
  ElfW(Addr) base = 0;
  if (!p || !object_of(p, &base)) return nullptr;
  const std::vector<ElfW(Addr)> excluded = excluded_objects(blas);
  if (excluded.empty() || std::find(excluded.begin(), excluded.end(), base) != excluded.end())
    return nullptr;
  return p;
}

// Where a routine's calls go when they are not rerouted: the definition the
// caller reaches without the interposer. For the program's calls: the next
// definition in the global scope (RTLD_NEXT), which every caller reaches
// first; where there is none, the definition in the calling object's own
// scope (search_caller_scope: two modules loaded with RTLD_LOCAL, each with
// its own BLAS, each keep theirs), else the first in an object loaded after
// the interposer (search_loaded_objects). Resolved at a caller's first call
// (its BLAS is loaded by then) and kept per calling object. For the
// library's own calls (its leaves): what libxngemm, loaded privately, binds
// without the interposer: the global scope, then its own dependencies. None:
// a clear message and abort, never another BLAS in silence.
class NextDefinition {
 public:
  constexpr NextDefinition(const char *name, bool blas) : name_(name), blas_(blas) {}

  // `caller`: the return address of the intercepted call.
  template <class F>
  F for_program(const void *caller) {
    void *p = global_.load(std::memory_order_acquire);
    if (!p) p = per_caller(caller);
    return reinterpret_cast<F>(p);
  }
  template <class F>
  F for_library() {
    void *p = library_.load(std::memory_order_acquire);
    if (!p) {
      p = dlsym(RTLD_NEXT, name_);
      if (!p)
        if (void *lib = g_library.load(std::memory_order_acquire)) p = dlsym(lib, name_);
      if (!p) p = search_loaded_objects(name_, blas_);
      if (!p) abort_without_definition();
      library_.store(p, std::memory_order_release);  // a race stores the same
    }
    return reinterpret_cast<F>(p);
  }
  const char *name() const { return name_; }
  // The resolved definitions (nullptr: not needed so far): the program's
  // (the global one, else those of each calling object) and the library's.
  std::vector<void *> definitions() const {
    std::vector<void *> out;
    if (void *p = global_.load(std::memory_order_acquire)) out.push_back(p);
    const int n = callers_.load(std::memory_order_acquire);
    for (int i = 0; i < n; ++i) out.push_back(caller_slots_[i].definition);
    if (void *p = library_.load(std::memory_order_acquire)) out.push_back(p);
    return out;
  }

 private:
  // A calling object's address range and the definition its calls go to.
  struct CallerSlot {
    AddressRange range;
    void *definition = nullptr;
  };
  static constexpr int kCallerSlots = 32;

  void *per_caller(const void *caller) {
    const auto address = reinterpret_cast<std::uintptr_t>(caller);
    // Published slots are immutable: read without the lock.
    const int n = callers_.load(std::memory_order_acquire);
    for (int i = 0; i < n; ++i)
      if (address >= caller_slots_[i].range.lo && address < caller_slots_[i].range.hi)
        return caller_slots_[i].definition;
    std::lock_guard<std::mutex> lock(mutex_);
    if (void *p = dlsym(RTLD_NEXT, name_)) {  // a BLAS loaded globally since
      global_.store(p, std::memory_order_release);
      return p;
    }
    ElfW(Addr) base = 0;
    const char *path = nullptr;
    const bool known = object_of(caller, &base, &path);
    void *p = known ? search_caller_scope(path, name_, blas_) : nullptr;
    if (!p) p = search_loaded_objects(name_, blas_);
    if (!p) abort_without_definition();
    const int used = callers_.load(std::memory_order_relaxed);
    if (known && used < kCallerSlots) {
      caller_slots_[used] = {address_range(base), p};
      if (caller_slots_[used].range.hi) callers_.store(used + 1, std::memory_order_release);
    }
    return p;
  }

  [[noreturn]] void abort_without_definition() const {
    std::fprintf(stderr,
                 "xngemm intercept: no definition of %s to pass a call to (none "
                 "after the interposer, globally, in the caller's scope or in an "
                 "object loaded since; libxngemm's own BLAS is not the program's): "
                 "aborting\n",
                 name_);
    std::abort();
  }

  const char *name_;
  bool blas_;  // a host BLAS symbol (else cuBLAS)
  std::atomic<void *> global_{nullptr}, library_{nullptr};
  std::mutex mutex_;  // serialises the resolution of new callers
  CallerSlot caller_slots_[kCallerSlots];
  std::atomic<int> callers_{0};
};

NextDefinition g_next[kRoutines] = {
    {"dgemm_", true},         {"sgemm_", true},          {"cblas_dgemm", true},
    {"cblas_sgemm", true},    {"cublasDgemm_v2", false}, {"cublasSgemm_v2", false}};
NextDefinition g_next_get_pointer_mode{"cublasGetPointerMode_v2", false};
NextDefinition g_next_destroy{"cublasDestroy_v2", false};

// The definition a call that is not rerouted goes to (`caller`: the
// intercepted call's return address).
template <class F>
F next_for(NextDefinition &next, Outcome o, const void *caller) {
  return o == kReentrant ? next.for_library<F>() : next.for_program<F>(caller);
}

// ---------------------------------------------------------------- modes

// The library's routines of each mode by symbol name, Fortran and CBLAS
// forms (nullptr: none for that precision, the call passes through).
template <class T>
using FortranGemm = void (*)(const char *, const char *, const int *, const int *,
                             const int *, const T *, const T *, const int *, const T *,
                             const int *, const T *, T *, const int *);
template <class T>
using CblasGemm = void (*)(int, int, int, int, int, int, T, const T *, int, const T *,
                           int, T, T *, int);
template <class T>
using CublasGemm = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t,
                                      cublasOperation_t, int, int, int, const T *,
                                      const T *, int, const T *, int, const T *, T *,
                                      int);
// What a mode requires of op(A) and op(B) before it takes a call.
enum class Scan {
  None,    // exdgemm: every input, non-finite ones as BLAS
  Finite,  // Strassen, Winograd: NaN and Inf would reach more entries than
           // in the classical product (pre-additions, Inf - Inf)
  NonNeg,  // ngemm: its contract (Badin et al., ICS'13), and finite
};
struct Mode {
  const char *name;  // XN_INTERCEPT's value (a word of its kEnvironmentTable row)
  Scan scan;
  const char *fortran[2];  // double, single
  const char *cblas[2];
  const char *device[2];  // the cuBLAS-compatible routine
};
const Mode kModes[] = {
    {"exdgemm",
     Scan::None,
     {"exdgemm_", nullptr},
     {"cblas_exdgemm", nullptr},
     {"xnExdgemm", nullptr}},
    {"ngemm",
     Scan::NonNeg,
     {"dngemm_", "sngemm_"},
     {"cblas_dngemm", "cblas_sngemm"},
     {"xnDngemm", "xnSngemm"}},
    {"strassen",
     Scan::Finite,
     {"dstgemm_", "sstgemm_"},
     {"cblas_dstgemm", "cblas_sstgemm"},
     {"xnDgemmStrassen", "xnSgemmStrassen"}},
    {"winograd",
     Scan::Finite,
     {"dwigemm_", "swigemm_"},
     {"cblas_dwigemm", "cblas_swigemm"},
     {"xnDgemmWinograd", "xnSgemmWinograd"}},
};
template <class T>
constexpr int precision_index() {
  return sizeof(T) == sizeof(double) ? 0 : 1;
}

// ---------------------------------------------------------------- configuration, log

struct Config {
  const Mode *mode = nullptr;  // nullptr: off
  const char *mode_name = "off";
  double min_flops = 0;
  bool log = false;
};

std::atomic<std::uint64_t> g_count[kRoutines][kOutcomes];

void count(Routine r, Outcome o) {
  g_count[r][o].fetch_add(1, std::memory_order_relaxed);
}

const Config &config();

// Where a routine's passed-through calls went: the objects of its resolved
// definitions (the program's, per calling object where they differ, and the
// library's), each once.
std::string targets(const NextDefinition &next) {
  std::vector<std::string> seen;
  std::string out;
  for (void *p : next.definitions()) {
    ElfW(Addr) base = 0;
    const char *path = nullptr;
    if (!object_of(p, &base, &path) || !path) continue;
    const std::string where = *path ? path : "the program";
    if (std::find(seen.begin(), seen.end(), where) != seen.end()) continue;
    out += (out.empty() ? "" : " and ") + where;
    seen.push_back(where);
  }
  return out.empty() ? "?" : out;
}

// XN_INTERCEPT_LOG=1, at exit: the totals, then one line per routine that
// was called.
void print_log() {
  const Config &c = config();
  std::uint64_t total[2] = {0, 0};  // rerouted (including failed), passed through
  for (auto &row : g_count)
    for (int o = 0; o < kOutcomes; ++o)
      total[o == kRerouted || o == kDeviceError ? 0 : 1] += row[o].load();
  std::fprintf(stderr,
               "xngemm intercept: %llu rerouted, %llu passed through (XN_INTERCEPT=%s, "
               "XN_INTERCEPT_MIN_FLOPS=%g)\n",
               static_cast<unsigned long long>(total[0]),
               static_cast<unsigned long long>(total[1]), c.mode_name, c.min_flops);
  for (int r = 0; r < kRoutines; ++r) {
    std::uint64_t n[kOutcomes], passed = 0;
    for (int o = 0; o < kOutcomes; ++o) {
      n[o] = g_count[r][o].load();
      if (o != kRerouted && o != kDeviceError) passed += n[o];
    }
    if (n[kRerouted] + n[kDeviceError] + passed == 0) continue;
    std::string line = std::string(g_next[r].name()) + ": " +
                       std::to_string(n[kRerouted]) + " rerouted";
    if (n[kDeviceError])
      line += ", " + std::to_string(n[kDeviceError]) + " " + kOutcomeNames[kDeviceError];
    if (passed) {
      line += ", " + std::to_string(passed) + " passed through (";
      const char *sep = "";
      for (int o = 0; o < kOutcomes; ++o)
        if (o != kRerouted && o != kDeviceError && n[o]) {
          line += sep + std::to_string(n[o]) + " " + kOutcomeNames[o];
          sep = ", ";
        }
      line += ") to " + targets(g_next[r]);
    }
    std::fprintf(stderr, "xngemm intercept:   %s\n", line.c_str());
  }
}

// The environment, read and validated once (kEnvironmentTable's rows).
const Config &config() {
  static const Config c = [] {
    Config r;
    const xn::EnvSetting &s = xn::environment_setting(xn::EnvVar::Intercept);
    const std::string word = xn::env_choice_word(s.choices, xn::env_choice(s.id));
    for (const Mode &mode : kModes)
      if (word == mode.name) r.mode = &mode;
    if (r.mode) {
      r.mode_name = r.mode->name;
    } else if (word != "off") {  // kEnvironmentTable and kModes disagree
      std::fprintf(stderr, "xngemm intercept: no mode %s: every call passes through\n",
                   word.c_str());
    }
    r.min_flops = xn::env_number(xn::EnvVar::InterceptMinFlops);
    r.log = xn::env_choice(xn::EnvVar::InterceptLog) == 1;
    if (r.log) std::atexit(print_log);
    return r;
  }();
  return c;
}

// At load: a bad value is said once, whether or not a GEMM is ever called.
__attribute__((constructor)) void read_environment_at_load() { config(); }

std::atomic<int (*)()> g_loaded_depth{nullptr};  // set once the library is loaded

// Whether the calling thread is inside one of xNGEMM's entry points, host or
// device: of a libxngemm the program links itself, or of the one loaded here.
bool inside_library() {
  static int (*const linked)() =
      reinterpret_cast<int (*)()>(dlsym(RTLD_DEFAULT, "xn_internal_call_depth"));
  if (linked && linked() > 0) return true;
  int (*const loaded)() = g_loaded_depth.load(std::memory_order_acquire);
  return loaded && loaded() > 0;
}

// The library's routine `name`, or nullptr.
template <class F>
F routine(const char *name) {
  void *h = library();
  if (!h) return nullptr;
  if (!g_loaded_depth.load(std::memory_order_acquire))
    g_loaded_depth.store(reinterpret_cast<int (*)()>(dlsym(h, "xn_internal_call_depth")),
                         std::memory_order_release);
  return reinterpret_cast<F>(dlsym(h, name));
}

char upper(char c) { return c >= 'a' && c <= 'z' ? char(c - 'a' + 'A') : c; }
bool is_trans(char c) { return c == 'T' || c == 'C'; }

// BLAS's checks of ?GEMM (column-major, op(A) m x k, op(B) k x n): whether
// the reference BLAS would accept the call.
bool valid(char ta, char tb, long m, long n, long k, long lda, long ldb, long ldc) {
  auto op_ok = [](char t) { return t == 'N' || t == 'T' || t == 'C'; };
  const long rows_a = is_trans(ta) ? k : m, rows_b = is_trans(tb) ? n : k;
  auto at_least = [](long ld, long rows) { return ld >= (rows > 1 ? rows : 1); };
  return op_ok(ta) && op_ok(tb) && m >= 0 && n >= 0 && k >= 0 && at_least(lda, rows_a) &&
         at_least(ldb, rows_b) && at_least(ldc, m);
}

// The OR of the EntryFlags (numerics/elementwise.h, the classification the
// library's device scan applies) of a rows x cols operand in host memory
// (column-major, leading dimension ld); stops at the first NaN or Inf,
// which decides every scanning mode.
template <class T>
int host_operand_flags(const T *p, long rows, long cols, long ld) {
  int flags = 0;
  for (long j = 0; j < cols; ++j)
    for (long i = 0; i < rows; ++i) {
      flags |= xn::ew_entry_flags(p[i + j * ld]);
      if (flags & xn::kEntryNonFinite) return flags;
    }
  return flags;
}

// Where a valid column-major call goes; kRerouted when to the library.
// `alpha_zero()` says whether alpha is known to be 0; `flags_of(&flags)`
// classifies op(A) and op(B) (kRerouted, or why it could not).
template <class T, class AlphaZero, class FlagsOf>
Outcome route(long m, long n, long k, AlphaZero &&alpha_zero, FlagsOf &&flags_of) {
  const Config &c = config();
  if (inside_library()) return kReentrant;
  // BLAS's quick return reads neither A nor B (they may be invalid
  // pointers): the BLAS does it, nothing to scan or reroute.
  if (k == 0 || m == 0 || n == 0 || alpha_zero()) return kQuickReturn;
  if (!c.mode) return kOff;
  // (Every form of a mode has routines for the same precisions.)
  if (!c.mode->fortran[precision_index<T>()]) return kNoRoutine;
  if (2.0 * double(m) * double(n) * double(k) < c.min_flops) return kSmall;
  if (c.mode->scan == Scan::None) return kRerouted;
  int flags = 0;
  const Outcome scanned = flags_of(&flags);
  if (scanned != kRerouted) return scanned;
  if (flags & xn::kEntryNonFinite) return kNonFinite;
  if (c.mode->scan == Scan::NonNeg && (flags & xn::kEntryNegative)) return kNegative;
  return kRerouted;
}

// route() for a call with its operands in host memory.
template <class T>
Outcome route_host(char ta, char tb, long m, long n, long k, T alpha, const T *A,
                   long lda, const T *B, long ldb) {
  return route<T>(
      m, n, k, [&] { return alpha == T(0); },
      [&](int *flags) {
        *flags = host_operand_flags(A, is_trans(ta) ? k : m, is_trans(ta) ? m : k, lda);
        if (!(*flags & xn::kEntryNonFinite))
          *flags |=
              host_operand_flags(B, is_trans(tb) ? n : k, is_trans(tb) ? k : n, ldb);
        return kRerouted;
      });
}

// On kRerouted runs `library`, then passes the call through if the library
// could not run it (it left C unchanged: a BLAS routine has no status to say
// so, the library's per-thread flag does); otherwise passes it through:
// `pass(next)` with the definition the outcome calls for. Counts what
// happened.
template <class F, class Library, class Pass>
void dispatch(Routine r, Outcome o, const void *caller, Library &&library, Pass &&pass) {
  if (o == kRerouted) {
    // ngemm mode keeps the non-negative product's accuracy promise on badly
    // scaled data: the host routines scan their operands and limit the
    // depth by their block maxima (docs/design.md, "Non-negative check");
    // the cuBLAS path gets the depth from its own scan (cublas_entry).
    static const bool checked = [] {
      if (config().mode->scan == Scan::NonNeg)
        if (const auto set = routine<decltype(&xn_internal_host_check_nonneg)>(
                "xn_internal_host_check_nonneg"))
          set(1);
      return true;
    }();
    (void)checked;
    library();
    static const auto failed =
        routine<decltype(&xn_internal_host_call_failed)>("xn_internal_host_call_failed");
    if (!failed || !failed()) {
      count(r, kRerouted);
      return;
    }
    o = kCannotRun;
  }
  count(r, o);
  pass(next_for<F>(g_next[r], o, caller));
}

// CBLAS arguments as the column-major call they describe: RowMajor C = op(A)
// op(B) is column-major C^T = op(B)^T op(A)^T. False for arguments CBLAS
// rejects (left to the BLAS).
constexpr int kRowMajor = 101, kColMajor = 102, kNoTrans = 111, kTrans = 112,
              kConjTrans = 113;
bool cblas_as_column_major(int layout, int transa, int transb, int m, int n, int k,
                           int lda, int ldb, int ldc, char *ta, char *tb, long *cm,
                           long *cn, bool *swap) {
  auto op = [](int t) {
    return t == kNoTrans ? 'N' : t == kTrans ? 'T' : t == kConjTrans ? 'C' : '?';
  };
  if (layout != kRowMajor && layout != kColMajor) return false;
  *swap = layout == kRowMajor;
  *ta = op(*swap ? transb : transa);
  *tb = op(*swap ? transa : transb);
  *cm = *swap ? n : m;
  *cn = *swap ? m : n;
  return valid(*ta, *tb, *cm, *cn, k, *swap ? ldb : lda, *swap ? lda : ldb, ldc);
}

// The two entry forms, for either precision: route, then the library's
// routine or the next definition.
template <class T>
void fortran_entry(Routine r, const void *caller, const char *transa, const char *transb, const int *m,
                   const int *n, const int *k, const T *alpha, const T *A, const int *lda,
                   const T *B, const int *ldb, const T *beta, T *C, const int *ldc) {
  const char ta = upper(*transa), tb = upper(*transb);
  Outcome o = valid(ta, tb, *m, *n, *k, *lda, *ldb, *ldc)
                  ? route_host<T>(ta, tb, *m, *n, *k, *alpha, A, *lda, B, *ldb)
                  : kBadArguments;
  FortranGemm<T> fn = nullptr;
  if (o == kRerouted &&
      !(fn = routine<FortranGemm<T>>(config().mode->fortran[precision_index<T>()])))
    o = kNoLibrary;
  dispatch<FortranGemm<T>>(
      r, o, caller, [&] { fn(transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc); },
      [&](FortranGemm<T> next) {
        next(transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
      });
}

template <class T>
void cblas_entry(Routine r, const void *caller, int layout, int transa, int transb, int m, int n, int k,
                 T alpha, const T *A, int lda, const T *B, int ldb, T beta, T *C,
                 int ldc) {
  char ta, tb;
  long cm, cn;
  bool swap;
  Outcome o = cblas_as_column_major(layout, transa, transb, m, n, k, lda, ldb, ldc, &ta,
                                    &tb, &cm, &cn, &swap)
                  ? route_host<T>(ta, tb, cm, cn, k, alpha, swap ? B : A,
                                  swap ? ldb : lda, swap ? A : B, swap ? lda : ldb)
                  : kBadArguments;
  CblasGemm<T> fn = nullptr;
  if (o == kRerouted &&
      !(fn = routine<CblasGemm<T>>(config().mode->cblas[precision_index<T>()])))
    o = kNoLibrary;
  dispatch<CblasGemm<T>>(
      r, o, caller,
      [&] { fn(layout, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc); },
      [&](CblasGemm<T> next) {
        next(layout, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
      });
}

// ---------------------------------------------------------------- cuBLAS

char cublas_op(cublasOperation_t op) {
  return op == CUBLAS_OP_N   ? 'N'
         : op == CUBLAS_OP_T ? 'T'
         : op == CUBLAS_OP_C ? 'C'
                             : '?';
}

// The library's scan of device operands (api/interposer_support.h), on the
// call's handle: kRerouted with *flags set, or why it could not run. In
// ngemm mode the same read also gives the depth at which the product keeps
// its accuracy on these operands (*max_levels; else -1).
template <class T>
Outcome device_operand_flags(cublasHandle_t h, cublasOperation_t transa,
                             cublasOperation_t transb, int m, int n, int k, const T *A,
                             int lda, const T *B, int ldb, int *flags, int *max_levels) {
  const char precision = precision_index<T>() == 0 ? 'd' : 's';
  *max_levels = -1;
  cublasStatus_t s;
  if (config().mode->scan == Scan::NonNeg) {
    static const auto scan =
        routine<decltype(&xn_internal_operand_scan)>("xn_internal_operand_scan");
    if (!scan) return kNoLibrary;
    s = scan(h, precision, transa, transb, m, n, k, A, lda, B, ldb, flags, max_levels);
  } else {
    static const auto scan =
        routine<decltype(&xn_internal_operand_flags)>("xn_internal_operand_flags");
    if (!scan) return kNoLibrary;
    s = scan(h, precision, transa, transb, m, n, k, A, lda, B, ldb, flags);
  }
  return s == CUBLAS_STATUS_SUCCESS ? kRerouted : kCannotRun;
}

// Runs `call` with the handle's XN_OPT_MAX_LEVELS at most `levels` (>= 0;
// the option as it was afterwards): the depth ngemm mode's scan allows.
template <class Call>
cublasStatus_t with_max_levels(cublasHandle_t h, int levels, Call &&call) {
  static const auto get = routine<decltype(&xnGetOption)>("xnGetOption");
  static const auto set = routine<decltype(&xnSetOption)>("xnSetOption");
  std::int64_t was = 0;
  if (levels < 0 || !get || !set || get(h, XN_OPT_MAX_LEVELS, &was) != CUBLAS_STATUS_SUCCESS ||
      was <= levels)
    return call();
  set(h, XN_OPT_MAX_LEVELS, levels);
  const cublasStatus_t s = call();
  set(h, XN_OPT_MAX_LEVELS, was);
  return s;
}

// Statuses with which the library's routines return before writing C (bad
// arguments, no memory, no support): the call can still go to cuBLAS.
bool leaves_c_untouched(cublasStatus_t s) {
  return s == CUBLAS_STATUS_NOT_INITIALIZED || s == CUBLAS_STATUS_ALLOC_FAILED ||
         s == CUBLAS_STATUS_INVALID_VALUE || s == CUBLAS_STATUS_ARCH_MISMATCH ||
         s == CUBLAS_STATUS_NOT_SUPPORTED;
}

// cublas?gemm_v2: route (the scanning modes read op(A) and op(B) on the
// device and synchronise the handle's stream once), then the library's
// routine on the same handle, or cuBLAS.
template <class T>
cublasStatus_t cublas_entry(Routine r, const void *caller, cublasHandle_t h, cublasOperation_t transa,
                            cublasOperation_t transb, int m, int n, int k,
                            const T *alpha, const T *A, int lda, const T *B, int ldb,
                            const T *beta, T *C, int ldc) {
  int max_levels = -1;  // ngemm mode: the depth its scan allows
  Outcome o = h && valid(cublas_op(transa), cublas_op(transb), m, n, k, lda, ldb, ldc)
                  ? route<T>(
                        m, n, k,
                        [&] {
                          // Only a host alpha can be read here; a device alpha = 0 is
                          // the library's quick return (it handles both modes).
                          const auto get_pointer_mode =
                              g_next_get_pointer_mode
                                  .for_program<decltype(&cublasGetPointerMode_v2)>(caller);
                          cublasPointerMode_t mode;
                          return get_pointer_mode(h, &mode) == CUBLAS_STATUS_SUCCESS &&
                                 mode == CUBLAS_POINTER_MODE_HOST && alpha &&
                                 *alpha == T(0);
                        },
                        [&](int *flags) {
                          return device_operand_flags<T>(h, transa, transb, m, n, k, A,
                                                         lda, B, ldb, flags, &max_levels);
                        })
                  : kBadArguments;
  CublasGemm<T> fn = nullptr;
  if (o == kRerouted &&
      !(fn = routine<CublasGemm<T>>(config().mode->device[precision_index<T>()])))
    o = kNoLibrary;
  if (o == kRerouted) {
    const cublasStatus_t s = with_max_levels(h, max_levels, [&] {
      return fn(h, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
    });
    if (s == CUBLAS_STATUS_SUCCESS || !leaves_c_untouched(s)) {
      count(r, s == CUBLAS_STATUS_SUCCESS ? kRerouted : kDeviceError);
      return s;
    }
    o = kCannotRun;
  }
  count(r, o);
  return next_for<CublasGemm<T>>(g_next[r], o, caller)(h, transa, transb, m, n, k, alpha, A, lda,
                                               B, ldb, beta, C, ldc);
}

// Frees the library's state of a handle about to be destroyed (its
// workspace, events, cuBLASLt plans): the library's if loaded here, else a
// libxngemm the program links; nothing if neither.
void release_library_state(cublasHandle_t h) {
  if (!h || inside_library()) return;  // the library releases its own
  void *lib = g_library.load(std::memory_order_acquire);
  using Release = cublasStatus_t (*)(cublasHandle_t);
  if (auto release =
          reinterpret_cast<Release>(dlsym(lib ? lib : RTLD_DEFAULT, "xnRelease")))
    release(h);
}

}  // namespace

XN_INTERCEPTED void dgemm_(const char *transa, const char *transb, const int *m,
                           const int *n, const int *k, const double *alpha,
                           const double *A, const int *lda, const double *B,
                           const int *ldb, const double *beta, double *C,
                           const int *ldc) {
  fortran_entry<double>(kDgemm, __builtin_return_address(0), transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C,
                        ldc);
}

XN_INTERCEPTED void sgemm_(const char *transa, const char *transb, const int *m,
                           const int *n, const int *k, const float *alpha,
                           const float *A, const int *lda, const float *B,
                           const int *ldb, const float *beta, float *C, const int *ldc) {
  fortran_entry<float>(kSgemm, __builtin_return_address(0), transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C,
                       ldc);
}

XN_INTERCEPTED void cblas_dgemm(int layout, int transa, int transb, int m, int n, int k,
                                double alpha, const double *A, int lda, const double *B,
                                int ldb, double beta, double *C, int ldc) {
  cblas_entry<double>(kCblasDgemm, __builtin_return_address(0), layout, transa, transb, m, n, k, alpha, A, lda, B, ldb,
                      beta, C, ldc);
}

XN_INTERCEPTED void cblas_sgemm(int layout, int transa, int transb, int m, int n, int k,
                                float alpha, const float *A, int lda, const float *B,
                                int ldb, float beta, float *C, int ldc) {
  cblas_entry<float>(kCblasSgemm, __builtin_return_address(0), layout, transa, transb, m, n, k, alpha, A, lda, B, ldb,
                     beta, C, ldc);
}

XN_INTERCEPTED cublasStatus_t cublasDgemm_v2(cublasHandle_t handle,
                                             cublasOperation_t transa,
                                             cublasOperation_t transb, int m, int n,
                                             int k, const double *alpha, const double *A,
                                             int lda, const double *B, int ldb,
                                             const double *beta, double *C, int ldc) {
  return cublas_entry<double>(kCublasDgemm, __builtin_return_address(0), handle, transa, transb, m, n, k, alpha, A,
                              lda, B, ldb, beta, C, ldc);
}

XN_INTERCEPTED cublasStatus_t cublasSgemm_v2(cublasHandle_t handle,
                                             cublasOperation_t transa,
                                             cublasOperation_t transb, int m, int n,
                                             int k, const float *alpha, const float *A,
                                             int lda, const float *B, int ldb,
                                             const float *beta, float *C, int ldc) {
  return cublas_entry<float>(kCublasSgemm, __builtin_return_address(0), handle, transa, transb, m, n, k, alpha, A, lda,
                             B, ldb, beta, C, ldc);
}

XN_INTERCEPTED cublasStatus_t cublasDestroy_v2(cublasHandle_t handle) {
  const bool own = inside_library();
  release_library_state(handle);
  return (own ? g_next_destroy.for_library<decltype(&cublasDestroy_v2)>()
              : g_next_destroy.for_program<decltype(&cublasDestroy_v2)>(
                    __builtin_return_address(0)))(handle);
}
