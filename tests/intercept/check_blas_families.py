#!/usr/bin/env python3
"""The interposer beyond the system BLAS's GEMMs (ctest, labels api / gpu):
DGEMV and DDOT, the names and integer widths of the BLAS builds Python wheels
and Julia bundle, and cuBLAS's GEMV, DOT, batched and Ex routines.

  check_blas_families.py wheels INTERPOSER CLIENT MODULE
      wheel_client loads wheel_module (RTLD_LOCAL) over its own BLAS with
      plain, scipy_ and 64_ names, 32- and 64-bit integers: off gives the module's BLAS's
      bits, exdgemm the correctly rounded values for every call (each symbol
      rerouted once), and a 64-bit lda beyond 32 bits passes through.
  check_blas_families.py numpy_vectors INTERPOSER
      Debian's NumPy: A @ v (cblas_dgemv), v @ w (cblas_ddot) and a batched
      np.matmul (cblas_dgemm per matrix) correctly rounded under exdgemm;
      XN_INTERCEPT_MIN_VECTOR_FLOPS sends the vector calls through alone.
  check_blas_families.py cublas INTERPOSER CLIENT REFERENCE
      cublas_families_client (cublasDgemv_v2, cublasDdot_v2 in both pointer
      modes, cublasDgemmStridedBatched, cublasDgemmBatched, cublasGemmEx,
      cublasGemmStridedBatchedEx, cublasGemmBatchedEx with FP64, and one
      FP32 cublasGemmEx) under exdgemm: the library's bits (the same program
      calling xNGEMM directly), FP32 untouched; off: cuBLAS's bits.
  check_blas_families.py pypi_venv VENV
      a virtual environment with NumPy, SciPy, pytest and hypothesis from
      PyPI (skipped when the registry cannot be reached).
  check_blas_families.py pypi INTERPOSER VENV
      PyPI NumPy's (scipy_cblas_*64_, 64-bit) and SciPy's (scipy_*_, 32-bit)
      GEMM, GEMV and DOT correctly rounded under exdgemm.
  check_blas_families.py pypi_suites INTERPOSER VENV
      numpy.linalg's and scipy.linalg's own test suites under every mode.

Correct rounding is checked with exact rationals (fractions.Fraction).
Exit status 77: skipped (numpy not installed, no GPU).
"""
import os
import subprocess
import sys
from fractions import Fraction

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_intercept import SKIP, counts, expect, run, summary  # noqa: E402


def exact(values):
    """The exact sum of products of pairs, rounded once (Fraction -> float
    rounds to nearest, ties to even)."""
    return float(sum(Fraction(a) * Fraction(b) for a, b in values))


def parse_wheel(out):
    """[(kind, symbol, {field: [floats]})] from wheel_module's output."""
    calls, cur = [], None
    for line in out.splitlines():
        head, *rest = line.split()
        if head in ("gemm", "gemv", "gemvt", "dot", "toolarge"):
            cur = (head, rest[0], {})
            calls.append(cur)
        else:
            cur[2][head] = [float.fromhex(v) for v in rest]
    return calls


def correctly_rounded(kind, f):
    """The correctly rounded results of a wheel_module call (column-major,
    alpha = 1, beta = 0; sizes from the operands)."""
    if kind == "gemm":
        m, k = 5, 96
        n = len(f["B"]) // k
        return [exact((f["A"][i + p * m], f["B"][p + j * k]) for p in range(k))
                for j in range(n) for i in range(m)]
    if kind in ("gemv", "toolarge"):
        n = len(f["x"])
        m = len(f["A"]) // n
        return [exact((f["A"][i + p * m], f["x"][p]) for p in range(n)) for i in range(m)]
    if kind == "gemvt":  # y = A^T x, A m x n
        m = len(f["x"])
        n = len(f["A"]) // m
        return [exact((f["A"][p + j * m], f["x"][p]) for p in range(m)) for j in range(n)]
    return [exact(zip(f["x"], f["y"]))]


def result(kind, f):
    return f["C"] if kind == "gemm" else f["r"] if kind == "dot" else f["y"]


def part_wheels(lib, client, module):
    plain, _ = run([client, module])
    off, err = run([client, module], lib, XN_INTERCEPT="off")
    assert off == plain, "off: not the module's own BLAS's bits"
    calls = parse_wheel(plain)
    symbols = [s for kind, s, _ in calls if kind != "toolarge"]
    assert len(symbols) == 24, symbols
    s = summary(err)
    for sym in symbols + ["scipy_dgemv_64_"]:
        assert s[sym][0]["off"] >= 1 and s[sym][1], (sym, s.get(sym))
    wrong_plain = sum(result(k, f) != correctly_rounded(k, f) for k, _, f in calls)
    assert wrong_plain > 0, "the plain loops were correctly rounded: the data proves nothing"

    out, err = run([client, module], lib, XN_INTERCEPT="exdgemm", XN_DEVICE="cpu")
    ours = parse_wheel(out)
    assert [c[:2] for c in ours] == [c[:2] for c in calls]
    for (kind, sym, f), (_, _, p) in zip(ours, calls):
        if kind == "toolarge":  # passed through: the module's BLAS's bits
            assert result(kind, f) == result(kind, p), f"{sym}: not passed through"
            continue
        assert result(kind, f) == correctly_rounded(kind, f), f"{sym}: not correctly rounded"
    s = summary(err)
    for sym in symbols:
        expect(s[sym][0], rerouted=1)
    expect(s["scipy_dgemv_64_"][0], rerouted=1, toolarge=1)
    print(f"wheels: {len(symbols)} symbols of 4 builds (plain, scipy_ 32-bit, scipy_ 64_, 64_) "
          f"rerouted and correctly rounded ({wrong_plain} plain results were not); "
          "off and a 64-bit lda beyond 32 bits reach the module's own BLAS")
    return 0


NUMPY_VECTORS = r"""
import numpy as np
rng = np.random.default_rng(20261128)
def wide(*shape):
    return rng.uniform(-1, 1, shape) * np.exp2(rng.integers(-30, 30, shape))
A, v, w = wide(7, 300), wide(300), wide(300)
w[-1] = -(v[:-1] @ w[:-1]) / v[-1]  # v @ w cancels: plain sums lose it
S, T = wide(3, 6, 40), wide(3, 40, 5)
for a in (A, v, w, S, T, A @ v, v @ w, S @ T):
    print(" ".join(float(x).hex() for x in np.ravel(a)))
"""


def part_numpy_vectors(lib):
    python = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
    if subprocess.run([python, "-c", "import numpy"], capture_output=True).returncode:
        print("numpy is not installed for", python, "(Debian: python3-numpy): skipped")
        return SKIP

    def probe(**env):
        out, err = run([python, "-c", NUMPY_VECTORS], lib if env else None, **env)
        return [[float.fromhex(v) for v in l.split()] for l in out.splitlines()], err

    # The exact results of a run, from that run's own operands: w's last
    # entry comes from a dot product too, which the interposer rounds
    # correctly and the plain BLAS need not (so w differs between the runs).
    def exact_results(run):
        A, v, w, S, T = run[:5]
        Av = [exact(zip(A[i * 300:(i + 1) * 300], v)) for i in range(7)]
        vw = [exact(zip(v, w))]
        ST = [exact((S[b * 240 + i * 40 + p], T[b * 200 + p * 5 + j]) for p in range(40))
              for b in range(3) for i in range(6) for j in range(5)]
        return [Av, vw, ST]

    plain, _ = probe()
    want = exact_results(plain)
    ST = want[2]
    wrong = [sum(g != e for g, e in zip(got, exp)) for got, exp in zip(plain[5:], want)]
    assert sum(wrong) > 0, "the plain BLAS was correctly rounded: the data proves nothing"

    ours, err = probe(XN_INTERCEPT="exdgemm", XN_DEVICE="cpu")
    assert all(ours[x] == plain[x] for x in (0, 1, 3, 4)), "A, v, S, T are the same data"
    for name, got, exp in zip(("A @ v", "v @ w", "S @ T"), ours[5:], exact_results(ours)):
        assert got == exp, f"{name} not correctly rounded under exdgemm"
    s = summary(err)
    for sym, calls in (("cblas_dgemv", 1), ("cblas_ddot", 1), ("cblas_dgemm", 3)):
        assert s[sym][0]["rerouted"] >= calls, (sym, s.get(sym))
    # The vector threshold alone: GEMV and DOT pass through, GEMM does not.
    ours, err = probe(XN_INTERCEPT="exdgemm", XN_DEVICE="cpu",
                      XN_INTERCEPT_MIN_VECTOR_FLOPS=1e9)
    assert ours[5:7] == plain[5:7], "below XN_INTERCEPT_MIN_VECTOR_FLOPS: not the BLAS's bits"
    assert ours[7] == ST
    # (A @ v, v @ w, and the dot that makes w cancel.)
    expect(counts(err, ("cblas_dgemv", "cblas_ddot")), rerouted=0, small=3)
    print(f"numpy: A @ v, v @ w, batched S @ T correctly rounded under exdgemm (plain BLAS: "
          f"{wrong[0]}/7, {wrong[1]}/1, {wrong[2]}/90 not); the vector threshold works alone")
    return 0


def part_cublas(lib, client, reference):
    if subprocess.run([client], capture_output=True).returncode == SKIP:
        print("no GPU: skipped")
        return SKIP
    plain, _ = run([client])
    off, _ = run([client], lib, XN_INTERCEPT="off")
    assert off == plain, "off: not cuBLAS's bits"
    ref, _ = run([reference])
    ours, err = run([client], lib, XN_INTERCEPT="exdgemm")
    p, r, o = (dict(l.split(" ", 1) for l in x.splitlines()) for x in (plain, ref, ours))
    assert p.keys() == r.keys() == o.keys()
    differ = 0
    for key in p:
        if key.startswith("fp32"):
            assert o[key] == p[key], f"{key}: an FP32 GemmEx was not left to cuBLAS"
        else:
            assert o[key] == r[key], f"{key}: not the library's bits"
            differ += o[key] != p[key]
    assert differ > 0, "cuBLAS was correctly rounded everywhere: the data proves nothing"
    s = summary(err)
    for sym in ("cublasDgemv_v2", "cublasDdot_v2", "cublasDgemmStridedBatched",
                "cublasDgemmBatched", "cublasGemmEx", "cublasGemmStridedBatchedEx",
                "cublasGemmBatchedEx"):
        assert s[sym][0]["rerouted"] >= 1, (sym, s.get(sym))
    assert s["cublasGemmEx"][0]["types"] == 1, s["cublasGemmEx"]
    print(f"cuBLAS: {len(p)} results, the library's bits under exdgemm ({differ} differ "
          "from cuBLAS's), cuBLAS's when off; FP32 GemmEx passed through")
    return 0


# ---------------------------------------------------------------- PyPI

PYPI_PACKAGES = ("numpy", "scipy", "pytest", "hypothesis")


def venv_python(venv):
    return os.path.join(venv, "bin", "python")


def part_pypi_venv(venv):
    """A virtual environment with NumPy, SciPy (their wheels bundle
    scipy-openblas64 / scipy-openblas32) and pytest from PyPI; skipped when
    the registry cannot be reached."""
    py = venv_python(venv)
    if os.path.exists(py) and subprocess.run(
            [py, "-c", "import numpy, scipy, pytest, hypothesis"],
            capture_output=True).returncode == 0:
        print("venv ready:", venv)
        return 0
    made = subprocess.run([sys.executable, "-m", "venv", "--clear", venv],
                          capture_output=True, text=True)
    if made.returncode != 0:
        print("python3 -m venv failed (Debian: python3-venv):", made.stderr)
        return 1
    pip = subprocess.run([py, "-m", "pip", "install", "-q", "--disable-pip-version-check",
                          "--only-binary=:all:", *PYPI_PACKAGES],
                         capture_output=True, text=True, timeout=900)
    if pip.returncode != 0:
        print("pip could not install from PyPI (no registry?): skipped\n", pip.stderr[-2000:])
        return SKIP
    print(subprocess.run([py, "-m", "pip", "list", "--format=freeze"], capture_output=True,
                         text=True).stdout)
    return 0


PYPI_PROBE = r"""
import numpy as np, scipy.linalg.blas as sb
rng = np.random.default_rng(20261128)
def wide(*shape):
    return rng.uniform(-1, 1, shape) * np.exp2(rng.integers(-30, 30, shape))
A, B, v, w = wide(6, 200), wide(200, 5), wide(200), wide(200)
S, T = wide(2, 4, 50), wide(2, 50, 3)
for a in (A, B, v, w, S, T, A @ B, A @ v, v @ w, S @ T, sb.dgemm(1.0, A, B),
          sb.dgemv(1.0, A, v), sb.ddot(v, w)):
    print(" ".join(float(x).hex() for x in np.ravel(a)))
"""


def part_pypi(lib, venv):
    py = venv_python(venv)
    if not os.path.exists(py):
        print("no PyPI venv (api_intercept_pypi_venv skipped): skipped")
        return SKIP

    def probe(**env):
        out, err = run([py, "-c", PYPI_PROBE], lib if env else None, **env)
        return [[float.fromhex(x) for x in l.split()] for l in out.splitlines()], err

    plain, _ = probe()
    A, B, v, w, S, T = plain[:6]
    AB = [exact((A[i * 200 + p], B[p * 5 + j]) for p in range(200))
          for i in range(6) for j in range(5)]
    Av = [exact(zip(A[i * 200:(i + 1) * 200], v)) for i in range(6)]
    vw = [exact(zip(v, w))]
    ST = [exact((S[b * 200 + i * 50 + p], T[b * 150 + p * 3 + j]) for p in range(50))
          for b in range(2) for i in range(4) for j in range(3)]
    # scipy's dgemm returns a Fortran-ordered array: ravel() is row-major.
    want = [AB, Av, vw, ST, AB, Av, vw]
    wrong = sum(g != e for got, exp in zip(plain[6:], want) for g, e in zip(got, exp))
    assert wrong > 0, "PyPI's OpenBLAS was correctly rounded: the data proves nothing"
    ours, err = probe(XN_INTERCEPT="exdgemm", XN_DEVICE="cpu")
    names = ("A @ B", "A @ v", "v @ w", "S @ T", "scipy dgemm", "scipy dgemv", "scipy ddot")
    for name, got, exp in zip(names, ours[6:], want):
        assert got == exp, f"{name} (PyPI) not correctly rounded under exdgemm"
    s = summary(err)
    for sym in ("scipy_cblas_dgemm64_", "scipy_cblas_dgemv64_", "scipy_cblas_ddot64_",
                "scipy_dgemm_", "scipy_dgemv_", "scipy_ddot_"):
        assert s.get(sym, ({"rerouted": 0}, []))[0]["rerouted"] >= 1, (sym, s.get(sym))
    print(f"PyPI NumPy and SciPy: {len(names)} results correctly rounded under exdgemm "
          f"({wrong} plain entries were not); their scipy_ and 64_ symbols rerouted")
    return 0


def part_pypi_suites(lib, venv):
    """NumPy's and SciPy's own linalg test suites under the interposer in
    every mode (the CPU backend)."""
    py = venv_python(venv)
    if not os.path.exists(py):
        print("no PyPI venv (api_intercept_pypi_venv skipped): skipped")
        return SKIP
    for mode in ("off", "exdgemm", "ngemm", "strassen", "winograd"):
        for suite in ("numpy.linalg", "scipy.linalg"):
            cmd = [py, "-m", "pytest", "--pyargs", suite, "-q", "-p", "no:cacheprovider"]
            out, err = run(cmd, lib, XN_INTERCEPT=mode, XN_DEVICE="cpu")
            tail = [l for l in out.splitlines() if " passed" in l]
            c = counts(err, tuple(summary(err)))
            # The suites exercise the rerouted routines, not only the BLAS.
            assert (c["rerouted"] > 0) == (mode != "off"), (mode, suite, c)
            print(f"{mode:9s} {suite:13s} {tail[-1] if tail else '?'}; "
                  f"{c['rerouted']} calls rerouted")
    return 0


def main():
    part = sys.argv[1]
    if part == "wheels":
        return part_wheels(*sys.argv[2:5])
    if part == "numpy_vectors":
        return part_numpy_vectors(sys.argv[2])
    if part == "cublas":
        return part_cublas(*sys.argv[2:5])
    if part == "pypi_venv":
        return part_pypi_venv(sys.argv[2])
    if part == "pypi":
        return part_pypi(*sys.argv[2:4])
    if part == "pypi_suites":
        return part_pypi_suites(*sys.argv[2:4])
    raise SystemExit(f"unknown part {part}")


if __name__ == "__main__":
    sys.exit(main())
