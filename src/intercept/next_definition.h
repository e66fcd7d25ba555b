// next_definition.h - where the interposer's calls go when they are not
// rerouted (docs/design.md, "Interposer"): the definition the caller reaches
// without the interposer, found among the process's objects; and
// libxngemm, loaded privately at the first rerouted call.
#pragma once

#include <dlfcn.h>
#include <link.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace xn::intercept {

// libxngemm, loaded at the first call (privately, RTLD_LOCAL); nullptr when
// it cannot be (said once on stderr under XN_VERBOSE=1).
void *library();
// The loaded libxngemm, or nullptr while it is not loaded (never loads it).
void *loaded_library();

// The object that holds address `p` (its load bias and path); false if none.
bool object_of(const void *p, ElfW(Addr) *base, const char **path = nullptr);

// The address range [lo, hi) an object's loadable segments span.
struct AddressRange {
  std::uintptr_t lo = 0, hi = 0;
};
AddressRange address_range(ElfW(Addr) base);

// The first definition of `name` in an object loaded after the interposer,
// never an excluded one (next_definition.cpp); nullptr if none.
void *search_loaded_objects(const char *name, bool blas);
// The definition of `name` in the lookup scope of the object at `path`;
// nullptr if none (or only an excluded one).
void *search_caller_scope(const char *path, const char *name, bool blas);

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
        if (void *lib = loaded_library()) p = dlsym(lib, name_);
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

  void *per_caller(const void *caller);
  [[noreturn]] void abort_without_definition() const;

  const char *name_;
  bool blas_;  // a host BLAS symbol (else cuBLAS)
  std::atomic<void *> global_{nullptr}, library_{nullptr};
  std::mutex mutex_;  // serialises the resolution of new callers
  CallerSlot caller_slots_[kCallerSlots];
  std::atomic<int> callers_{0};
};


// Where a symbol's passed-through calls went, for the log: the objects of
// its resolved definitions, each once ("?" if none is known).
std::string targets(const NextDefinition &next);

}  // namespace xn::intercept
