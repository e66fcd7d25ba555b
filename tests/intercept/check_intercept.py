#!/usr/bin/env python3
"""Tests of libxngemm_intercept.so on unchanged programs (ctest, label api).

  check_intercept.py client INTERPOSER CLIENT     the C client (intercept_client.c)
  check_intercept.py fortran INTERPOSER DGEMM_EXE DNGEMM_EXE
  check_intercept.py numpy INTERPOSER             numpy.dot on the system BLAS
  check_intercept.py cublas INTERPOSER CLIENT REFERENCE
                                                  cublasDgemm/cublasSgemm (GPU)

Each part runs the program without the interposer, then under LD_PRELOAD in
several XN_INTERCEPT modes, and checks the results bit for bit: against the
program's own output where the call must pass through, and against the
correctly rounded product (exact rational arithmetic, fractions.Fraction)
where exdgemm must have taken it, or (cuBLAS) against xNGEMM's device
routine called directly. XN_INTERCEPT_LOG=1's counts say which way each call
went. Exit status 77: skipped (numpy not installed, no GPU).
"""
import os
import re
import subprocess
import sys
from fractions import Fraction

SKIP = 77
M, N, K = 5, 4, 96  # intercept_client.c's sizes


def run(cmd, preload=None, **env):
    e = dict(os.environ)
    for key in ("LD_PRELOAD", "XN_INTERCEPT", "XN_INTERCEPT_MIN_FLOPS", "XN_INTERCEPT_LOG"):
        e.pop(key, None)
    if preload:
        e["LD_PRELOAD"] = preload
        e["XN_INTERCEPT_LOG"] = "1"
    e.update({k: str(v) for k, v in env.items()})
    p = subprocess.run(cmd, env=e, capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        raise AssertionError(f"{cmd} {env} exited {p.returncode}: {p.stderr}")
    return p.stdout, p.stderr


BLAS_LOG, CUBLAS_LOG = "xngemm intercept:", "xngemm intercept (cuBLAS):"


def counts(stderr, prefix=BLAS_LOG):
    """The interposer's exit line for one family of entry points as {reason: count}."""
    line = [l for l in stderr.splitlines() if l.startswith(prefix)]
    assert line, f"no interposer log {prefix!r} in: {stderr!r}"
    out = {}
    for part in line[-1][len(prefix):].split(","):
        n, reason = part.strip().split(" ", 1)
        out[reason] = int(n)
    return out


def expect(c, **want):
    names = {
        "rerouted": "rerouted",
        "off": "passed through: XN_INTERCEPT off",
        "small": "passed through: below XN_INTERCEPT_MIN_FLOPS",
        "negative": "passed through: negative entries (ngemm)",
        "nonfinite": "passed through: NaN or Inf entries",
        "own": "passed through: the library's own calls",
        "precision": "passed through: no such routine for this precision",
        "bad": "passed through: bad arguments (reported by the BLAS)",
        "quick": "passed through: quick return (alpha = 0 or k = 0 or empty C)",
        "cannot": "passed through: xNGEMM could not run the call",
        "failed": "rerouted and failed: the library's status returned",
    }
    for key, n in want.items():
        assert c[names[key]] == n, f"{key}: {c[names[key]]} != {n} in {c}"


def without_log(text):
    return "\n".join(l for l in text.splitlines() if not l.startswith("xngemm intercept"))


# ------------------------------------------------------------- the client


class Lcg:
    """intercept_client.c's generator."""

    def __init__(self):
        self.state = 0x9E3779B97F4A7C15

    def u64(self):
        self.state = (self.state * 6364136223846793005 + 1442695040888963407) % 2**64
        return self.state

    def draw(self, nonneg):
        r = self.u64()
        if nonneg:
            return float((r >> 33) % 7)
        mant = float(r >> 11) / 9007199254740992.0
        e = (r >> 3) % 41 - 20
        v = (1.0 + mant) * (2.0**e)
        return -v if r & 1 else v


def client_inputs(nonneg):
    g = Lcg()
    A = [g.draw(nonneg) for _ in range(M * K)]  # column-major m x k
    B = [g.draw(nonneg) for _ in range(K * N)]  # column-major k x n
    return A, B


def correctly_rounded(A, B, lda, ldb, m, n, k):
    """C[i][j] = fl(sum_p A[i,p] B[p,j]) rounded once (column-major inputs)."""
    return [[float(sum(Fraction(A[i + p * lda]) * Fraction(B[p + j * ldb]) for p in range(k)))
             for j in range(n)] for i in range(m)]


def parse(stdout):
    vals = {}
    for line in stdout.splitlines():
        mt = re.match(r"(\w+) (\d+) (\d+) (\S+)$", line)
        if mt:
            vals[(mt.group(1), int(mt.group(2)), int(mt.group(3)))] = float.fromhex(mt.group(4))
    return vals


names_own = "passed through: the library's own calls"


def part_client(lib, exe):
    plain, _ = run([exe])
    plain_v = parse(plain)
    assert len(plain_v) == 4 * M * N, plain
    A, B = client_inputs(False)
    cr = correctly_rounded(A, B, M, K, M, N, K)
    wrong = sum(plain_v[("dgemm", i, j)] != cr[i][j] for i in range(M) for j in range(N))
    print(f"plain BLAS: {wrong} of {M * N} dgemm entries not correctly rounded")

    # Off (unset) and below the threshold: every call passes through, same bits.
    out, err = run([exe], lib)
    assert out == plain, "XN_INTERCEPT unset changed the result"
    expect(counts(err), rerouted=0, off=4)
    out, err = run([exe], lib, XN_INTERCEPT="exdgemm", XN_INTERCEPT_MIN_FLOPS=1e12)
    assert out == plain, "a call below XN_INTERCEPT_MIN_FLOPS changed the result"
    expect(counts(err), rerouted=0, small=2, precision=2)

    # exdgemm: the double calls correctly rounded, the single ones unchanged.
    out, err = run([exe], lib, XN_INTERCEPT="exdgemm")
    v = parse(out)
    for i in range(M):
        for j in range(N):
            for name in ("dgemm", "cblas_dgemm"):
                assert v[(name, i, j)] == cr[i][j], f"{name} ({i},{j}): {v[(name, i, j)]!r} != {cr[i][j]!r}"
            for name in ("sgemm", "cblas_sgemm"):
                assert v[(name, i, j)] == plain_v[(name, i, j)], f"{name} changed"
    expect(counts(err), rerouted=2, precision=2)
    print("exdgemm: dgemm_ and cblas_dgemm correctly rounded in every entry; "
          "sgemm_ and cblas_sgemm passed through")

    # The library cannot run them (a workspace limit of 1 byte: EXDGEMM
    # leaves C unchanged and says so through its per-thread flag): BLAS's.
    out, err = run([exe], lib, XN_INTERCEPT="exdgemm", XN_EXDGEMM_WORKSPACE_LIMIT=1)
    assert out == plain, "a call xNGEMM could not run did not get the BLAS's result"
    expect(counts(err), rerouted=0, cannot=2, precision=2)
    print("exdgemm without workspace: dgemm_ and cblas_dgemm went to the BLAS")

    # ngemm: signed operands pass through; non-negative ones are rerouted
    # (small integers: every routine gives the exact product).
    out, err = run([exe], lib, XN_INTERCEPT="ngemm")
    assert out == plain, "ngemm changed a call with negative entries"
    expect(counts(err), rerouted=0, negative=4)
    # Leaves of 2 and no crossover, so that the 5 x 4 x 96 calls recurse: the
    # leaf GEMMs come back through the interposer as the library's own.
    small_leaves = {f"XN_{v}": 2 for v in ("LEAF_D", "LEAF_S", "STRASSEN_LEAF_D",
                                             "STRASSEN_LEAF_S", "WINOGRAD_LEAF_D",
                                             "WINOGRAD_LEAF_S")}
    small_leaves.update({f"XN_{v}": 0 for v in ("MIN_SIZE_D", "MIN_SIZE_S",
                                                  "STRASSEN_MIN_SIZE_D", "STRASSEN_MIN_SIZE_S",
                                                  "WINOGRAD_MIN_SIZE_D", "WINOGRAD_MIN_SIZE_S")})
    plain_nn, _ = run([exe, "nonneg"])
    for mode in ("ngemm", "strassen", "winograd"):
        out, err = run([exe, "nonneg"], lib, XN_INTERCEPT=mode, **small_leaves)
        assert out == plain_nn, f"{mode}: not the exact integer product"
        c = counts(err)
        expect(c, rerouted=4)
        assert c[names_own] > 4 * 7, f"{mode}: did not recurse ({c[names_own]} leaf calls)"
    print("ngemm: negative operands passed through; ngemm, strassen, winograd rerouted "
          "non-negative integer calls exactly, recursing (leaf 2)")

    # NaN: the recursive modes pass it through (it would reach more entries
    # than in the classical product); exdgemm takes it as BLAS does.
    plain_nan, _ = run([exe, "nan"])
    for mode in ("ngemm", "strassen", "winograd"):
        out, err = run([exe, "nan"], lib, XN_INTERCEPT=mode, **small_leaves)
        assert out == plain_nan, f"{mode}: a NaN input changed the result"
        expect(counts(err), rerouted=0, nonfinite=4)
    print("NaN in A: passed through by ngemm, strassen and winograd")

    # Threads: four at once, each rerouted and correctly rounded, none of
    # them mistaken for the library's own calls of another thread.
    out, err = run([exe, "threads"], lib, XN_INTERCEPT="exdgemm")
    v = parse(out)
    for t in range(4):
        for i in range(M):
            for j in range(N):
                assert v[(f"dgemm_t{t}", i, j)] == cr[i][j], f"thread {t} ({i},{j})"
    expect(counts(err), rerouted=32)
    print("threads: 4 x 8 concurrent dgemm_ calls rerouted, each correctly rounded")

    # alpha = 0: BLAS's quick return, left to the BLAS (nothing scanned).
    plain_q, _ = run([exe, "alpha0"])
    for mode in ("exdgemm", "ngemm"):
        out, err = run([exe, "alpha0"], lib, XN_INTERCEPT=mode)
        assert out == plain_q, f"{mode}: alpha = 0 changed C"
        expect(counts(err), rerouted=0, quick=2)
    print("alpha = 0: passed to the BLAS's quick return")

    # Bad arguments: the BLAS's own report, whatever it does next.
    plain_out, plain_err = run([exe, "bad"])
    out, err = run([exe, "bad"], lib, XN_INTERCEPT="exdgemm")
    assert out == plain_out and without_log(err) == without_log(plain_err), (out, err)
    expect(counts(err), rerouted=0, bad=1)
    print("bad arguments: passed to the BLAS, same report")


def part_fortran(lib, dgemm_exe, dngemm_exe):
    want, _ = run([dngemm_exe])
    out, err = run([dgemm_exe], lib, XN_INTERCEPT="ngemm")
    assert out == want, f"DGEMM under the interposer:\n{out}\nDNGEMM build:\n{want}"
    expect(counts(err), rerouted=1)
    print("Fortran DGEMM program under XN_INTERCEPT=ngemm prints what the DNGEMM build prints")


NUMPY_PROBE = r"""
import sys, numpy as np
rng = np.random.default_rng(20261125)
m, k, n = 6, 200, 5
A = rng.uniform(-1, 1, (m, k)) * np.exp2(rng.integers(-30, 30, (m, k)))
B = rng.uniform(-1, 1, (k, n)) * np.exp2(rng.integers(-30, 30, (k, n)))
C = A @ B
for a in (A, B, C):
    print(" ".join(float(x).hex() for x in a.ravel()))
"""


def part_numpy(lib):
    python = sys.executable
    probe = subprocess.run([python, "-c", "import numpy"], capture_output=True)
    if probe.returncode != 0:
        print("numpy is not installed for", python, "(Debian: python3-numpy): skipped")
        return SKIP
    plain, _ = run([python, "-c", NUMPY_PROBE])
    off, _ = run([python, "-c", NUMPY_PROBE], lib, XN_INTERCEPT="off")
    assert off == plain, "numpy under the interposer, off: not the plain BLAS's bits"
    out, err = run([python, "-c", NUMPY_PROBE], lib, XN_INTERCEPT="exdgemm")
    m, k, n = 6, 200, 5
    rows = [list(map(float.fromhex, l.split())) for l in plain.splitlines()]
    A, B, C_plain = rows
    C_ours = list(map(float.fromhex, out.splitlines()[2].split()))
    assert list(map(float.fromhex, out.splitlines()[0].split())) == A
    # numpy's row-major A (m x k) is the column-major k x m A^T: entry (i, p)
    # at i * k + p; B (k x n) row-major: (p, j) at p * n + j.
    cr = [[float(sum(Fraction(A[i * k + p]) * Fraction(B[p * n + j]) for p in range(k)))
           for j in range(n)] for i in range(m)]
    wrong = sum(C_plain[i * n + j] != cr[i][j] for i in range(m) for j in range(n))
    assert wrong > 0, "the plain BLAS was correctly rounded here: the case proves nothing"
    for i in range(m):
        for j in range(n):
            assert C_ours[i * n + j] == cr[i][j], f"numpy.dot ({i},{j}) not correctly rounded"
    c = counts(err)
    assert c["rerouted"] >= 1, c
    print(f"numpy.dot: plain BLAS {wrong} of {m * n} entries not correctly rounded; "
          f"under XN_INTERCEPT=exdgemm all correctly rounded ({c['rerouted']} call(s) rerouted)")
    return 0


# ---------------------------------------------------------------- cuBLAS

def part_cublas(lib, client, reference):
    """cublas_client.cpp under the interposer against cublas_reference.cpp."""
    # Leaves of 64 and no crossover, so that the recursive modes recurse on
    # the client's few-hundred sizes (read by both programs' libxngemm).
    env = {f"XN_{v}": 64 for v in ("LEAF_D", "LEAF_S", "STRASSEN_LEAF_D", "STRASSEN_LEAF_S",
                                   "WINOGRAD_LEAF_D", "WINOGRAD_LEAF_S")}
    env.update({f"XN_{v}": 0 for v in ("MIN_SIZE_D", "MIN_SIZE_S", "STRASSEN_MIN_SIZE_D",
                                       "STRASSEN_MIN_SIZE_S", "WINOGRAD_MIN_SIZE_D",
                                       "WINOGRAD_MIN_SIZE_S")})
    p = subprocess.run([client], capture_output=True, text=True, timeout=600,
                       env={**os.environ, **{k: str(v) for k, v in env.items()}})
    if p.returncode == SKIP:
        print(p.stdout.strip())
        return SKIP

    def lines(out):
        """{name: (status, hash)}, {comment key: value}; anything else
        (cuBLAS's own report of a bad argument) under the key None."""
        res, extra = {None: []}, {}
        for l in out.splitlines():
            fields = l.split()
            if l.startswith("# "):
                extra[fields[1]] = float(fields[2])
            elif len(fields) == 3 and re.fullmatch(r"-?\d+ [0-9a-f]{16}", " ".join(fields[1:])):
                res[fields[0]] = (int(fields[1]), fields[2])
            else:
                res[None].append(l)
        return res, extra

    def same(got, want, what):
        assert got.keys() == want.keys(), f"{what}: cases {list(got)} != {list(want)}"
        bad = [n for n in want if got[n] != want[n]]
        assert not bad, f"{what}: " + "; ".join(f"{n} {got[n]} != {want[n]}" for n in bad)

    plain, _ = lines(run([client], **env)[0])
    # One call per line, but "handles" stands for 1 + 12 (cublas_cases.h).
    calls = sum(1 for n in plain if n not in ("handles", None)) + 1 + 12
    assert plain["d_nn_bad_lda"][0] == 7, "cuBLAS did not report lda < m"

    out, err = run([client], lib, **env)
    same(lines(out)[0], plain, "XN_INTERCEPT unset")
    expect(counts(err, CUBLAS_LOG), rerouted=0, bad=1, quick=1, off=calls - 2)
    print(f"off: {calls} cuBLAS calls passed through, same bits")

    for mode in ("exdgemm", "ngemm", "strassen", "winograd"):
        ref, ref_extra = lines(run([reference, mode], **env)[0])
        out, err = run([client], lib, XN_INTERCEPT=mode, **env)
        got, extra = lines(out)
        same(got, ref, f"{mode}: the client under the interposer and {mode}'s routine")
        c = counts(err, CUBLAS_LOG)
        want = int(ref_extra["rerouted"])
        expect(c, rerouted=want, bad=1, quick=1, cannot=0, failed=0)
        changed = [n for n in ref if n and ref[n] != plain[n]]
        assert changed, f"{mode}: no call differs from cuBLAS: was anything computed?"
        if mode == "exdgemm":
            # Random signed data with k = 301: cuBLAS is not correctly rounded
            # in every entry, the rerouted call is.
            assert "d_nn_signed" in changed, "exdgemm: d_nn_signed equals cuBLAS's"
        else:
            assert c["passed through: the library's own calls"] > want, \
                f"{mode}: the rerouted calls did not recurse"
        # (Up to 32 MiB moves with cuBLAS's and the pool's own allocations.)
        assert extra["leak_mib"] < 64, f"{mode}: {extra['leak_mib']} MiB left by destroyed handles"
        if mode == "exdgemm":
            # The measurement sees a missing release: the reference program
            # destroys its handles without xnRelease.
            assert ref_extra["leak_mib"] > 128, \
                f"the reference left only {ref_extra['leak_mib']} MiB: leak check blind"
        print(f"{mode}: {want} of {calls} calls rerouted, each bit for bit the routine's "
              f"({len(changed)} differ from cuBLAS); destroyed handles left "
              f"{extra['leak_mib']:.0f} MiB")

    # Below the threshold, and when the library cannot run the call (a
    # workspace budget of 1 byte: ALLOC_FAILED, C untouched): cuBLAS's bits.
    out, err = run([client], lib, XN_INTERCEPT="exdgemm", XN_INTERCEPT_MIN_FLOPS=1e12, **env)
    same(lines(out)[0], plain, "below XN_INTERCEPT_MIN_FLOPS")
    expect(counts(err, CUBLAS_LOG), rerouted=0)
    out, err = run([client], lib, XN_INTERCEPT="exdgemm", XN_EXDGEMM_WORKSPACE_LIMIT=1, **env)
    same(lines(out)[0], plain, "exdgemm without workspace")
    ex_ref = int(lines(run([reference, "exdgemm"], **env)[0])[1]["rerouted"])
    expect(counts(err, CUBLAS_LOG), rerouted=0, cannot=ex_ref)
    print(f"threshold and ALLOC_FAILED: every call cuBLAS's ({ex_ref} could not run "
          "in xNGEMM and went to cuBLAS)")
    return 0


def main():
    part = sys.argv[1]
    if part == "client":
        part_client(*sys.argv[2:4])
    elif part == "fortran":
        part_fortran(*sys.argv[2:5])
    elif part == "numpy":
        return part_numpy(sys.argv[2])
    elif part == "cublas":
        return part_cublas(*sys.argv[2:5])
    else:
        raise SystemExit(f"unknown part {part}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
