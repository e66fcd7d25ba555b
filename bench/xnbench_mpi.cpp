// xnbench_mpi - the distributed products (PDNGEMM, PSNGEMM, PEXDGEMM) against
// ScaLAPACK's PDGEMM/PSGEMM in the same run, under mpirun (docs/xnbench.md,
// "xnbench_mpi"):
//
//   mpirun -np 4 xnbench_mpi [--routine pdngemm|psngemm|pexdgemm]
//       [--sizes N,...|--shape MxNxK,...] [--grid PxQ] [--nb B] [--reps R]
//       [--samples S] [--seed S] [--csv FILE]
//
// Per case, on the same distributed data: ScaLAPACK's PxGEMM, ours, and
// ours with the classical product as the local engine (XN_OPT_MAX_LEVELS =
// 0: cuBLAS's or OpenBLAS's GEMM on the same strips; not for pexdgemm),
// each a warm-up then R timed calls between barriers (MPI_Wtime on rank 0,
// median); TFLOP/s and the ratios; and the error of S sampled entries of
// ours and of PxGEMM against the exact MPFR value (pexdgemm: how many are not
// the correctly rounded value; must be 0). Entries are generated from their
// global indices (a hash), so the data does not depend on the grid: strong
// scaling is the same size on more processes, weak scaling a size grown with
// them.
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "distributed/scalapack.h"
#include "mpi_entries.h"
#include "support/mpfr_oracle.h"
#include "xnbench_mpi_gpu.h"
#include "xngemm.h"
#include "xngemm_dist.h"

namespace {

int g_rank = 0, g_size = 1;

struct Options {
  std::string routine = "pdngemm";
  std::vector<std::int64_t> shapes;  // m, n, k triples
  int P = 0, Q = 0, nb = 256, reps = 3, samples = 64;
  std::uint64_t seed = 20261126;
  std::string csv;
  bool device = false;      // --memory device: local arrays on each process's GPU
  std::int64_t single = 0;  // --single N: one GPU's routine at N^3, for scale
  double card_gib = 0;      // --card-gib G: run as on a card of G GiB (0: as it is)
};

[[noreturn]] void usage(const char *why) {
  if (g_rank == 0)
    std::fprintf(stderr,
                 "xnbench_mpi: %s\nusage: mpirun -np P xnbench_mpi [--routine "
                 "pdngemm|psngemm|pexdgemm] [--sizes N,...] [--shape MxNxK,...] [--grid "
                 "PxQ] [--nb B] [--reps R] [--samples S] [--seed S] [--csv FILE] "
                 "[--memory host|device] [--single N] [--card-gib G]\n",
                 why);
  MPI_Finalize();
  std::exit(2);
}

std::vector<std::string> split(const std::string &s, char sep) {
  std::vector<std::string> out;
  std::size_t a = 0;
  for (;;) {
    const std::size_t b = s.find(sep, a);
    out.push_back(s.substr(a, b - a));
    if (b == std::string::npos) return out;
    a = b + 1;
  }
}

Options parse(int argc, char **argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string key = argv[i];
    if (i + 1 >= argc) usage(("missing value of " + key).c_str());
    const std::string v = argv[++i];
    if (key == "--routine") {
      o.routine = v;
      if (v != "pdngemm" && v != "psngemm" && v != "pexdgemm") usage("bad --routine");
    } else if (key == "--sizes") {
      for (const std::string &t : split(v, ','))
        for (int r = 0; r < 3; ++r) o.shapes.push_back(std::atoll(t.c_str()));
    } else if (key == "--shape") {
      for (const std::string &t : split(v, ',')) {
        const std::vector<std::string> p = split(t, 'x');
        if (p.size() != 3) usage("bad --shape");
        for (const std::string &x : p) o.shapes.push_back(std::atoll(x.c_str()));
      }
    } else if (key == "--grid") {
      const std::vector<std::string> p = split(v, 'x');
      if (p.size() != 2) usage("bad --grid");
      o.P = std::atoi(p[0].c_str());
      o.Q = std::atoi(p[1].c_str());
    } else if (key == "--nb") {
      o.nb = std::atoi(v.c_str());
    } else if (key == "--reps") {
      o.reps = std::max(1, std::atoi(v.c_str()));
    } else if (key == "--samples") {
      o.samples = std::max(0, std::atoi(v.c_str()));
    } else if (key == "--seed") {
      o.seed = std::strtoull(v.c_str(), nullptr, 10);
    } else if (key == "--csv") {
      o.csv = v;
    } else if (key == "--memory") {
      if (v != "host" && v != "device") usage("bad --memory");
      o.device = v == "device";
    } else if (key == "--single") {
      o.single = std::atoll(v.c_str());
    } else if (key == "--card-gib") {
      o.card_gib = std::atof(v.c_str());
    } else {
      usage(("unknown option " + key).c_str());
    }
  }
  if (o.shapes.empty()) o.shapes = {2048, 2048, 2048};
  if (o.P <= 0 || o.Q <= 0) {  // the most square grid of all processes
    o.P = 1;
    for (int p = 1; p * p <= g_size; ++p)
      if (g_size % p == 0) o.P = p;
    o.Q = g_size / o.P;
  }
  if (o.P * o.Q != g_size) usage("the grid must hold every process mpirun started");
  if (o.nb < 1) usage("bad --nb");
  return o;
}

using xnb::entry;

// With --memory device the array lives on this process's GPU (dev).
template <class T>
struct Local {
  std::vector<T> a;
  T *dev = nullptr;
  int desc[9] = {};
  Local() = default;
  Local(const Local &) = delete;
  Local(Local &&o) noexcept : a(std::move(o.a)), dev(o.dev) {
    std::memcpy(desc, o.desc, sizeof desc);
    o.dev = nullptr;
  }
  ~Local() { xnb::device_free(dev); }
  T *data() { return dev ? dev : a.data(); }
  const T *data() const { return dev ? dev : a.data(); }
  T at(std::int64_t index) const {
    return dev ? xnb::device_read(dev, index) : a[std::size_t(index)];
  }
};

// The local part of an M x N matrix, nb x nb blocks from process (0, 0).
template <class T>
Local<T> make_local(int ctxt, int P, int Q, int myrow, int mycol, std::int64_t M,
                    std::int64_t N, int nb, std::uint64_t seed, int which, bool signed_,
                    bool device) {
  Local<T> L;
  const int m = int(M), n = int(N), zero = 0;
  const int lr = numroc_(&m, &nb, &myrow, &zero, &P);
  const int lc = numroc_(&n, &nb, &mycol, &zero, &Q);
  const int lld = std::max(1, lr);
  L.desc[0] = 1;
  L.desc[1] = ctxt;
  L.desc[2] = m;
  L.desc[3] = n;
  L.desc[4] = L.desc[5] = nb;
  L.desc[6] = L.desc[7] = 0;
  L.desc[8] = lld;
  if (device) {
    L.dev =
        xnb::device_local<T>(lr, lc, lld, nb, P, Q, myrow, mycol, seed, which, signed_);
    if (!L.dev) {
      std::fprintf(stderr, "xnbench_mpi: rank %d: no GPU memory for %d x %d\n", g_rank,
                   lr, lc);
      MPI_Abort(MPI_COMM_WORLD, 3);
    }
    return L;
  }
  L.a.resize(std::size_t(lld) * std::size_t(std::max(lc, 1)));
  for (int lj = 0; lj < lc; ++lj) {
    const std::int64_t j = xnb::global_of(lj, nb, mycol, Q);
    for (int li = 0; li < lr; ++li) {
      const std::int64_t i = xnb::global_of(li, nb, myrow, P);
      L.a[std::size_t(li) + std::size_t(lj) * lld] = T(entry(seed, which, i, j, signed_));
    }
  }
  return L;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? NAN : v[v.size() / 2];
}

template <class T>
using PGemm = void (*)(const char *, const char *, const int *, const int *, const int *,
                       const T *, const T *, const int *, const int *, const int *,
                       const T *, const int *, const int *, const int *, const T *, T *,
                       const int *, const int *, const int *);

// Median seconds of `reps` calls after one warm-up, each between barriers.
template <class T>
double time_calls(PGemm<T> fn, int m, int n, int k, const Local<T> &A, const Local<T> &B,
                  Local<T> &C, int reps) {
  const T one = 1, zero = 0;
  const int i1 = 1;
  std::vector<double> t;
  for (int r = 0; r <= reps; ++r) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    fn("N", "N", &m, &n, &k, &one, A.data(), &i1, &i1, A.desc, B.data(), &i1, &i1, B.desc,
       &zero, C.data(), &i1, &i1, C.desc);
    MPI_Barrier(MPI_COMM_WORLD);
    if (r > 0) t.push_back(MPI_Wtime() - t0);
  }
  return median(t);
}

// Errors at sampled entries against the exact value: max relative error
// and the entries not correctly rounded (summed over the grid).
struct Errors {
  double max_rel = 0;
  int wrong = 0, checked = 0;
};

template <class T>
Errors sampled_errors(const Options &o, const Local<T> &C, int P, int Q, int myrow,
                      int mycol, std::int64_t m, std::int64_t n, std::int64_t k,
                      bool signed_) {
  Errors local;
  const int nb = o.nb;
  std::vector<T> arow(static_cast<std::size_t>(k)), bcol(static_cast<std::size_t>(k));
  for (int s = 0; s < o.samples; ++s) {
    const std::int64_t i = std::int64_t(entry(o.seed, 7, s, 0, false) * double(m));
    const std::int64_t j = std::int64_t(entry(o.seed, 8, s, 0, false) * double(n));
    if ((i / nb) % P != myrow || (j / nb) % Q != mycol) continue;
    const std::int64_t li = (i / nb) / P * nb + i % nb, lj = (j / nb) / Q * nb + j % nb;
    const T got = C.at(li + lj * std::int64_t(C.desc[8]));
    for (std::int64_t p = 0; p < k; ++p) {
      arow[std::size_t(p)] = T(entry(o.seed, 0, i, p, signed_));
      bcol[std::size_t(p)] = T(entry(o.seed, 1, p, j, signed_));
    }
    const xn_test::ExactEntry e = xn_test::exact_gemm_entry<T>(
        false, false, k, T(1), arow.data(), 1, bcol.data(), k, T(0), nullptr, 1, 0, 0);
    const double err = std::fabs(double(got) - e.hi) - std::fabs(e.lo);
    local.max_rel = std::max(local.max_rel, std::max(err, 0.0) / std::fabs(e.hi));
    local.wrong += double(got) != e.hi;
    ++local.checked;
  }
  // Every process gets the totals (a wrong entry ends the run on all).
  Errors all;
  MPI_Allreduce(&local.max_rel, &all.max_rel, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(&local.wrong, &all.wrong, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(&local.checked, &all.checked, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  return all;
}

xnb::Routine routine_of(const Options &o) {
  return o.routine == "pexdgemm"  ? xnb::Routine::pexdgemm
         : o.routine == "psngemm" ? xnb::Routine::psngemm
                                  : xnb::Routine::pdngemm;
}

// The slowest process's value.
double grid_max(double v) {
  double r = v;
  MPI_Allreduce(&v, &r, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return r;
}

// Host memory: ours, ours over the classical local product, and PBLAS's
// PxGEMM (base). GPU memory: ours, ours over cuBLAS's GEMM (base), and the
// local engine alone on each process's share (the slowest process's
// time: what the distribution costs is ours / local).
template <class T>
int run(const Options &o, PGemm<T> ours, PGemm<T> pblas) {
  int ctxt = -1, P = 0, Q = 0, myrow = -1, mycol = -1;
  Cblacs_get(-1, 0, &ctxt);
  Cblacs_gridinit(&ctxt, "Row", o.P, o.Q);
  Cblacs_gridinfo(ctxt, &P, &Q, &myrow, &mycol);
  const bool in = myrow >= 0 && myrow < P && mycol >= 0 && mycol < Q;
  const bool exact = o.routine == "pexdgemm";
  const xnb::Routine routine = routine_of(o);
  std::FILE *csv = nullptr;
  const char *base_name = o.device         ? "cuBLAS-local"
                          : sizeof(T) == 8 ? "PDGEMM"
                                           : "PSGEMM";

  // One GPU alone at N^3, the yardstick of the distributed rate.
  double single_ms = NAN;
  if (o.device && o.single > 0) {
    if (g_rank == 0)
      single_ms = xnb::time_local_engine(routine, false, o.single, o.single, o.single,
                                         o.reps, o.seed);
    MPI_Bcast(&single_ms, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  }
  const double single_tf = 2.0 * double(o.single) * double(o.single) * double(o.single) /
                           (single_ms * 1e-3) / 1e12;
  if (g_rank == 0) {
    std::printf(
        "xnbench_mpi: %s against %s, %d processes, grid %dx%d, blocks %d, %s memory, %d "
        "timed calls (median), %d sampled entries against MPFR\n",
        o.routine.c_str(), base_name, g_size, o.P, o.Q, o.nb, o.device ? "GPU" : "host",
        o.reps, o.samples);
    if (o.device && o.single > 0)
      std::printf("one GPU, the library's routine at %lld^3: %.2f ms, %.2f TFLOP/s\n",
                  (long long)o.single, single_ms, single_tf);
    std::printf("%-18s %10s %10s %10s %10s %8s %8s %9s %9s %11s %11s %6s\n", "m x n x k",
                "ours_ms", "base_ms", "class_ms", "local_ms", "ours_TF", "base_TF",
                "speedup", "vs_class", "ours_maxrel", "base_maxrel", "wrong");
    if (!o.csv.empty()) {
      csv = std::fopen(o.csv.c_str(), "w");
      if (csv)
        std::fprintf(csv,
                     "routine,memory,processes,P,Q,nb,m,n,k,ours_ms,base_ms,classical_ms,"
                     "local_ms,ours_tflops,base_tflops,speedup,speedup_vs_classical,"
                     "ours_over_local,single_n,single_tflops,ours_max_rel,base_max_rel,"
                     "ours_wrong,checked\n");
    }
  }
  for (std::size_t s = 0; s + 2 < o.shapes.size(); s += 3) {
    const std::int64_t m = o.shapes[s], n = o.shapes[s + 1], k = o.shapes[s + 2];
    double t_ours = NAN, t_base = NAN, t_class = NAN, t_local = NAN;
    // Of the last call of ours (xnGetLastDistInfo, xnGetLastDistLevels).
    int bands = 0, panels = 0, ran_levels = -1;
    Errors e_ours, e_base;
    if (o.device) {  // the local engine alone on this process's share
      const int mi = int(m), ni = int(n), zero = 0;
      const std::int64_t ml = in ? numroc_(&mi, &o.nb, &myrow, &zero, &P) : 0;
      const std::int64_t nl = in ? numroc_(&ni, &o.nb, &mycol, &zero, &Q) : 0;
      t_local =
          grid_max(xnb::time_local_engine(routine, false, ml, nl, k, o.reps, o.seed));
    }
    if (in) {
      const Local<T> A =
          make_local<T>(ctxt, P, Q, myrow, mycol, m, k, o.nb, o.seed, 0, exact, o.device);
      const Local<T> B =
          make_local<T>(ctxt, P, Q, myrow, mycol, k, n, o.nb, o.seed, 1, exact, o.device);
      Local<T> C =
          make_local<T>(ctxt, P, Q, myrow, mycol, m, n, o.nb, o.seed, 2, exact, o.device);
      if (!o.device) {
        t_base = time_calls<T>(pblas, int(m), int(n), int(k), A, B, C, o.reps);
        e_base = sampled_errors<T>(o, C, P, Q, myrow, mycol, m, n, k, exact);
      }
      if (!exact) {
        std::int64_t levels = -1;
        xnGetOption(nullptr, XN_OPT_MAX_LEVELS, &levels);
        xnSetOption(nullptr, XN_OPT_MAX_LEVELS, 0);
        t_class = time_calls<T>(ours, int(m), int(n), int(k), A, B, C, o.reps);
        if (o.device)
          e_base = sampled_errors<T>(o, C, P, Q, myrow, mycol, m, n, k, exact);
        xnSetOption(nullptr, XN_OPT_MAX_LEVELS, levels);
      }
      if (o.device) t_base = t_class;
      t_ours = time_calls<T>(ours, int(m), int(n), int(k), A, B, C, o.reps);
      xnGetLastDistInfo(&bands, &panels);
      xnGetLastDistLevels(&ran_levels);
      e_ours = sampled_errors<T>(o, C, P, Q, myrow, mycol, m, n, k, exact);
    }
    if (g_rank == 0) {
      const double flops = 2.0 * double(m) * double(n) * double(k);
      char shape[64];
      std::snprintf(shape, sizeof shape, "%lldx%lldx%lld", (long long)m, (long long)n,
                    (long long)k);
      std::printf(
          "%-18s %10.2f %10.2f %10.2f %10.2f %8.2f %8.2f %8.3fx %8.3fx %11.2e %11.2e "
          "%6d\n",
          shape, t_ours * 1e3, t_base * 1e3, t_class * 1e3, t_local,
          flops / t_ours / 1e12, flops / t_base / 1e12, t_base / t_ours, t_class / t_ours,
          e_ours.max_rel, e_base.max_rel, exact ? e_ours.wrong : 0);
      if (o.device && o.single > 0)
        std::printf("%-18s ours / local engine %.3f; ours / one GPU at %lld^3: %.2fx\n",
                    "", t_ours * 1e3 / t_local, (long long)o.single,
                    flops / t_ours / 1e12 / single_tf);
      std::printf(
          "%-18s ours took %d band(s) of sub(C), %d panel(s) of K, %d recursion "
          "level(s)\n",
          "", bands, panels, ran_levels);
      if (csv)
        std::fprintf(
            csv,
            "%s,%s,%d,%d,%d,%d,%lld,%lld,%lld,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,"
            "%.6g,%.6g,%lld,%.6g,%.6g,%.6g,%d,%d\n",
            o.routine.c_str(), o.device ? "device" : "host", g_size, o.P, o.Q, o.nb,
            (long long)m, (long long)n, (long long)k, t_ours * 1e3, t_base * 1e3,
            t_class * 1e3, t_local, flops / t_ours / 1e12, flops / t_base / 1e12,
            t_base / t_ours, t_class / t_ours, t_ours * 1e3 / t_local,
            (long long)o.single, single_tf, e_ours.max_rel, e_base.max_rel,
            exact ? e_ours.wrong : 0, e_ours.checked);
      std::fflush(stdout);
    }
    if (exact && e_ours.wrong > 0) {
      if (g_rank == 0)
        std::printf("PEXDGEMM: %d of %d sampled entries NOT correctly rounded\n",
                    e_ours.wrong, e_ours.checked);
      return 1;
    }
  }
  if (csv) std::fclose(csv);
  if (in) Cblacs_gridexit(ctxt);
  return 0;
}

}  // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  const Options o = parse(argc, argv);
  if (o.device) {  // one GPU per process of a host, round robin
    MPI_Comm node;
    int local_rank = 0;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &local_rank);
    MPI_Comm_free(&node);
    if (xnb::bind_gpu(local_rank) == 0) usage("--memory device needs a GPU");
    if (o.card_gib > 0 && !xnb::hold_all_but(o.card_gib))
      usage("--card-gib: that much of the GPU's memory is not free");
  }
  int rc = 0;
  if (o.routine == "psngemm")
    rc = run<float>(o, psngemm_, psgemm_);
  else
    rc = run<double>(o, o.routine == "pexdgemm" ? pexdgemm_ : pdngemm_, pdgemm_);
  int any = 0;
  MPI_Allreduce(&rc, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return any;
}
