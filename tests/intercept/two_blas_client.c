/* two_blas_client.c - a program with two modules, each loaded with
 * RTLD_LOCAL and each linked against its own BLAS (blas_plugin.c over
 * fake_blas.c, marks 1 and 2). Every call must reach the caller's own BLAS:
 * without the interposer, and under it when the call passes through (off,
 * or below XN_INTERCEPT_MIN_FLOPS). With "--preloaded" the program also
 * checks that the interposer does see the calls (the global dgemm_ is its).
 * Prints what each module got; exits 0 when all are right.
 *   two_blas_client PLUGIN_1 PLUGIN_2 [--preloaded] */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

typedef double (*product_fn)(int);

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s PLUGIN_1 PLUGIN_2 [--preloaded]\n", argv[0]);
    return 2;
  }
  if (argc > 3 && strcmp(argv[3], "--preloaded") == 0) {
    Dl_info info;
    void *global = dlsym(RTLD_DEFAULT, "dgemm_");
    if (!global || !dladdr(global, &info) || !strstr(info.dli_fname, "intercept")) {
      fprintf(stderr, "the interposer is not the global dgemm_ (%s)\n",
              global && dladdr(global, &info) ? info.dli_fname : "none");
      return 1;
    }
  }
  int failures = 0;
  /* Twice each, alternating: the first call of a module resolves, the
   * second reuses what was kept for it. */
  for (int round = 0; round < 2; ++round)
    for (int mark = 1; mark <= 2; ++mark) {
      void *h = dlopen(argv[mark], RTLD_NOW | RTLD_LOCAL);
      if (!h) {
        fprintf(stderr, "cannot load %s: %s\n", argv[mark], dlerror());
        return 1;
      }
      product_fn product = (product_fn)dlsym(h, "plugin_product");
      if (!product) {
        fprintf(stderr, "no plugin_product in %s\n", argv[mark]);
        return 1;
      }
      for (int which = 0; which < 2; ++which) {
        const double got = product(which), expected = which == 0 ? mark : 10 + mark;
        printf("module %d, %s: %g (expected %g)\n", mark,
               which == 0 ? "dgemm_" : "cblas_dgemm", got, expected);
        failures += got != expected;
      }
    }
  return failures ? 1 : 0;
}
