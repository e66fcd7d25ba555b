// call_depth.h - how many of the library's entry points (host or device) the
// calling thread is inside, raised for each by an RAII guard so that no
// return path can leave it raised. The interposer reads it
// (api/interposer_support.h): a BLAS or cuBLAS call made inside is one of the
// library's leaves and goes to the real routine.
#pragma once

namespace xn {

inline thread_local int t_call_depth = 0;

class CallDepthGuard {
 public:
  CallDepthGuard() { ++t_call_depth; }
  ~CallDepthGuard() { --t_call_depth; }
  CallDepthGuard(const CallDepthGuard &) = delete;
  CallDepthGuard &operator=(const CallDepthGuard &) = delete;
};

}  // namespace xn
