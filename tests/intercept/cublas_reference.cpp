// cublas_reference.cpp - what the interposer must make of cublas_client's
// calls in each XN_INTERCEPT mode (docs/design.md, "Interposer"), computed by
// calling xNGEMM's routines directly: the same lines as the client under
// LD_PRELOAD, plus "# rerouted N", the calls the interposer must reroute.
//
//   cublas_reference MODE     MODE: off, exdgemm, ngemm, strassen, winograd
//
// A call passes through (cuBLAS) when its arguments are bad, alpha = 0
// (cuBLAS's quick return), the mode has no routine for the precision
// (exdgemm: double only), or the mode refuses the data (ngemm: negative
// entries; ngemm, strassen, winograd: NaN or Inf). Every other call goes to
// the mode's routine on the same handle.
#include <atomic>
#include <string>

#include "cublas_cases.h"
#include "xngemm.h"

using cublas_cases::Case;
using cublas_cases::Data;
using cublas_cases::Gemms;

int main(int argc, char **argv) {
  int devices = 0;
  if (argc != 2 || cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("usage: cublas_reference MODE (needs a CUDA device)\n");
    return 77;
  }
  const std::string mode = argv[1];
  struct Routines {
    const char *mode;
    Gemms gemms;
    bool takes_negative, takes_nonfinite;
  };
  const Routines table[] = {
      {"exdgemm", {xnExdgemm, nullptr}, true, true},
      {"ngemm", {xnDngemm, xnSngemm}, false, false},
      {"strassen", {xnDgemmStrassen, xnSgemmStrassen}, true, false},
      {"winograd", {xnDgemmWinograd, xnSgemmWinograd}, true, false},
  };
  const Routines *r = nullptr;
  for (const Routines &t : table)
    if (mode == t.mode) r = &t;
  if (!r && mode != "off") {
    std::fprintf(stderr, "unknown mode %s\n", mode.c_str());
    return 2;
  }
  const Gemms cublas{cublasDgemm, cublasSgemm};
  std::atomic<int> rerouted{0};
  cublas_cases::run_all([&](const Case &c) {
    const bool takes =
        r && !c.bad_lda && c.alpha != 0 &&
        (c.precision == 'd' ? r->gemms.d != nullptr : r->gemms.s != nullptr) &&
        (c.data != Data::Signed || r->takes_negative) &&
        (c.data != Data::NonFinite || r->takes_nonfinite);
    if (!takes) return cublas;
    ++rerouted;
    return r->gemms;
  });
  std::printf("# rerouted %d\n", rerouted.load());
  return 0;
}
