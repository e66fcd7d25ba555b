/* wheel_client.c - loads wheel_module (an extension module over its own
 * bundled BLAS, wheel_blas.c) with RTLD_LOCAL, as Python loads NumPy's and
 * SciPy's, and runs it: the module's BLAS calls bind to the interposer
 * (global scope) when it is preloaded, and pass through to the module's
 * own BLAS, which only the module's scope holds.
 *   wheel_client MODULE */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s MODULE\n", argv[0]);
    return 2;
  }
  void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    fprintf(stderr, "cannot load %s: %s\n", argv[1], dlerror());
    return 1;
  }
  void (*run)(void) = (void (*)(void))dlsym(h, "wheel_run");
  if (!run) {
    fprintf(stderr, "no wheel_run in %s\n", argv[1]);
    return 1;
  }
  run();
  return 0;
}
