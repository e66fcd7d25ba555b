// next_definition.cpp - the lookup behind NextDefinition (next_definition.h)
// and the private load of libxngemm.
#include "intercept/next_definition.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "core/environment.h"

#ifndef XN_LIBRARY_SONAME
#define XN_LIBRARY_SONAME "libxngemm.so.0"
#endif

namespace xn::intercept {

namespace {
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

// libxngemm, loaded at the first rerouted call, privately; nullptr (said
// once) when it cannot be. g_library: the handle once loaded, for the paths
// that must not load it. g_library_objects: the objects that load brought
// in (libxngemm, its OpenBLAS, CUDA, ...), never the program's BLAS.
std::atomic<void *> g_library{nullptr};
std::mutex g_objects_mutex;
std::vector<ElfW(Addr)> g_library_objects;  // under g_objects_mutex

}  // namespace

bool object_of(const void *p, ElfW(Addr) *base, const char **path) {
  Dl_info info;
  link_map *map = nullptr;
  if (!p || !dladdr1(p, &info, reinterpret_cast<void **>(&map), RTLD_DL_LINKMAP) || !map)
    return false;
  *base = map->l_addr;
  if (path) *path = map->l_name;
  return true;
}

void *library() {
  static void *const handle = [] {
    const std::vector<LoadedObject> before = loaded_objects();
    void *h = dlopen(XN_LIBRARY_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      diagnostic("intercept: cannot load %s (%s): every call passes through",
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

void *loaded_library() { return g_library.load(std::memory_order_acquire); }

namespace {

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

}  // namespace

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


void *NextDefinition::per_caller(const void *caller) {
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

[[noreturn]] void NextDefinition::abort_without_definition() const {
  std::fprintf(stderr,
               "xngemm intercept: no definition of %s to pass a call to (none "
               "after the interposer, globally, in the caller's scope or in an "
               "object loaded since; libxngemm's own BLAS is not the program's): "
               "aborting\n",
               name_);
  std::abort();
}

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

}  // namespace xn::intercept
