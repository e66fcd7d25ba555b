// A C++ consumer of the installed library: xngemm.h from C++ (its extern "C"
// block), cblas_dwigemm (Winograd, signed data) with A transposed and
// exdgemm_ (correctly rounded) with B transposed, on 7 x 9 times 9 x 6
// matrices of small signed integers, each checked against a plain loop. The
// results must be exact. Exits non-zero on a mismatch.
#include <xngemm.h>

#include <cstdio>
#include <vector>

namespace {
constexpr int m = 7, n = 6, k = 9;

double a_at(int i, int p) { return (i * 3 + p * 5) % 7 - 3.0; }
double b_at(int p, int j) { return (p * 2 + j * 3) % 5 - 2.0; }
double c_at(int i, int j) { return i - j; }

// Column-major C(i, j) = alpha sum_p a(i, p) b(p, j) + beta c(i, j).
std::vector<double> reference(double alpha, double beta) {
  std::vector<double> c(m * n);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      double s = 0;
      for (int p = 0; p < k; ++p) s += a_at(i, p) * b_at(p, j);
      c[i + m * j] = alpha * s + beta * c_at(i, j);
    }
  return c;
}

bool check(const char *what, const std::vector<double> &got,
           const std::vector<double> &want) {
  bool ok = true;
  for (std::size_t e = 0; e < got.size(); ++e)
    if (got[e] != want[e]) {
      std::fprintf(stderr, "%s: entry %zu is %g, expected %g\n", what, e, got[e], want[e]);
      ok = false;
    }
  return ok;
}
}  // namespace

int main() {
  const double alpha = 2.0, beta = -0.5;
  // A stored transposed (k x m), B as is (k x n), C column-major (m x n).
  std::vector<double> at(k * m), b(k * n), bt(n * k), c0(m * n);
  for (int p = 0; p < k; ++p)
    for (int i = 0; i < m; ++i) at[p + k * i] = a_at(i, p);
  for (int j = 0; j < n; ++j)
    for (int p = 0; p < k; ++p) {
      b[p + k * j] = b_at(p, j);
      bt[j + n * p] = b_at(p, j);
    }
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) c0[i + m * j] = c_at(i, j);
  const std::vector<double> want = reference(alpha, beta);

  std::vector<double> c = c0;
  cblas_dwigemm(XnColMajor, XnTrans, XnNoTrans, m, n, k, alpha, at.data(), k, b.data(),
                k, beta, c.data(), m);
  bool ok = check("cblas_dwigemm", c, want);

  // A as is (m x k) for exdgemm_, B transposed (n x k).
  std::vector<double> a(m * k);
  for (int p = 0; p < k; ++p)
    for (int i = 0; i < m; ++i) a[i + m * p] = a_at(i, p);
  c = c0;
  exdgemm_("N", "T", &m, &n, &k, &alpha, a.data(), &m, bt.data(), &n, &beta, c.data(), &m);
  ok = check("exdgemm_", c, want) && ok;

  std::printf("c++ consumer: %s\n", ok ? "OK" : "MISMATCH");
  return ok ? 0 : 1;
}
