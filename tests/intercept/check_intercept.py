#!/usr/bin/env python3
"""Tests of libxngemm_intercept.so on unchanged programs (ctest, label api).

  check_intercept.py client INTERPOSER CLIENT     the C client (intercept_client.c)
  check_intercept.py fortran INTERPOSER DGEMM_EXE DNGEMM_EXE
  check_intercept.py numpy INTERPOSER             numpy.dot on the system BLAS
  check_intercept.py numpy_reference INTERPOSER   numpy on the reference BLAS,
                                                  loaded privately (RTLD_LOCAL)
  check_intercept.py environment INTERPOSER CLIENT
                                                  bad XN_* values: said once
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
    for key in ("LD_PRELOAD", "XN_INTERCEPT", "XN_INTERCEPT_MIN_FLOPS",
                "XN_INTERCEPT_MIN_VECTOR_FLOPS", "XN_INTERCEPT_LOG", "XN_VERBOSE"):
        e.pop(key, None)
    if preload:
        e["LD_PRELOAD"] = preload
        e["XN_INTERCEPT_LOG"] = "1"
    e.update({k: str(v) for k, v in env.items()})
    p = subprocess.run(cmd, env=e, capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        raise AssertionError(f"{cmd} {env} exited {p.returncode}: {p.stderr}")
    return p.stdout, p.stderr


BLAS_ROUTINES = ("dgemm_", "sgemm_", "cblas_dgemm", "cblas_sgemm")
CUBLAS_ROUTINES = ("cublasDgemm_v2", "cublasSgemm_v2")
# The exit summary's reasons (src/intercept/routing.cpp, kOutcomeNames).
REASONS = {
    "off": "XN_INTERCEPT=off",
    "small": "below the threshold",
    "negative": "negative entries",
    "nonfinite": "NaN or Inf entries",
    "precision": "no routine in the mode",
    "bad": "bad arguments",
    "own": "the library's own calls",
    "quick": "quick return",
    "noload": "libxngemm not loadable",
    "cannot": "xNGEMM could not run them",
    "toolarge": "sizes beyond 32-bit integers",
    "types": "operand or compute types other than FP64",
}
KEY_OF = {v: k for k, v in REASONS.items()}
TOTALS = re.compile(r"xngemm intercept: (\d+) rerouted, (\d+) passed through \(XN_INTERCEPT=")
ROUTINE = re.compile(r"xngemm intercept:\s+(\w+): (\d+) rerouted"
                     r"(?:, (\d+) rerouted and failed)?"
                     r"(?:, (\d+) passed through \((.*)\) to (.*))?$")


def summary(stderr):
    """XN_INTERCEPT_LOG's exit summary: {routine: ({key: count}, [library paths])},
    checked against its totals line."""
    totals = [TOTALS.match(l) for l in stderr.splitlines() if TOTALS.match(l)]
    assert len(totals) == 1, f"not one interposer summary in: {stderr!r}"
    out = {}
    for l in stderr.splitlines():
        mt = ROUTINE.match(l)
        if not mt:
            continue
        c = dict.fromkeys(["rerouted", "failed", *REASONS], 0)
        c["rerouted"], c["failed"] = int(mt.group(2)), int(mt.group(3) or 0)
        targets = []
        if mt.group(4):
            for part in mt.group(5).split(", "):
                n, reason = part.split(" ", 1)
                c[KEY_OF[reason]] = int(n)
            assert sum(c[k] for k in REASONS) == int(mt.group(4)), l
            targets = mt.group(6).split(" and ")
        out[mt.group(1)] = (c, targets)
    rerouted = sum(c["rerouted"] + c["failed"] for c, _ in out.values())
    passed = sum(c[k] for c, _ in out.values() for k in REASONS)
    assert (rerouted, passed) == (int(totals[0].group(1)), int(totals[0].group(2))), stderr
    return out


def counts(stderr, family=BLAS_ROUTINES):
    """The summary's counts, summed over one family of entry points."""
    total = dict.fromkeys(["rerouted", "failed", *REASONS], 0)
    for routine, (c, _) in summary(stderr).items():
        if routine in family:
            for k in total:
                total[k] += c[k]
    return total


def expect(c, **want):
    for key, n in want.items():
        assert c[key] == n, f"{key}: {c[key]} != {n} in {c}"


def without_log(text):
    return "\n".join(l for l in text.splitlines() if not l.startswith("xngemm intercept:"))


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
        assert c["own"] > 4 * 7, f"{mode}: did not recurse ({c['own']} leaf calls)"
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


# The reference BLAS (Debian's libblas3, chosen by LD_LIBRARY_PATH as the
# alternatives system would): numpy's extension module loads it privately
# (RTLD_LOCAL), where RTLD_NEXT does not see it.
REFERENCE_BLAS_DIR = "/usr/lib/x86_64-linux-gnu/blas"
# Two products, 2 m n k = 2 6 40 5 = 2400 and 2 8 300 7 = 33600 flops, and the
# shared objects the process maps.
NUMPY_REFERENCE_PROBE = r"""
import sys, numpy as np
rng = np.random.default_rng(int(sys.argv[1]))
for m, k, n in ((6, 40, 5), (8, 300, 7)):
    A = rng.uniform(-1, 1, (m, k)) * np.exp2(rng.integers(-30, 30, (m, k)))
    B = rng.uniform(-1, 1, (k, n)) * np.exp2(rng.integers(-30, 30, (k, n)))
    C = A @ B
    for a in (A, B, C):
        print(" ".join(float(x).hex() for x in a.ravel()))
maps = {l.split()[-1] for l in open("/proc/self/maps") if l.split()[-1].startswith("/")}
print("maps", " ".join(sorted(p for p in maps if ".so" in p)))
"""
THRESHOLD = 10000  # between the two products' flops


def probe_reference(lib=None, blas_dir=REFERENCE_BLAS_DIR, seed=0, **env):
    """[(A, B, C) per product], the mapped shared objects, stderr."""
    if blas_dir:
        env["LD_LIBRARY_PATH"] = blas_dir
    out, err = run([sys.executable, "-c", NUMPY_REFERENCE_PROBE, str(seed)], lib, **env)
    lines = out.splitlines()
    assert lines[-1].startswith("maps "), out
    vals = [list(map(float.fromhex, l.split())) for l in lines[:-1]]
    return [vals[0:3], vals[3:6]], set(lines[-1].split()[1:]), err


def blas_of(maps):
    return sorted(p for p in maps if re.search(r"/lib(open)?blas", p))


def correctly_rounded_rowmajor(A, B, m, k, n):
    return [float(sum(Fraction(A[i * k + p]) * Fraction(B[p * n + j]) for p in range(k)))
            for i in range(m) for j in range(n)]


def part_numpy_reference(lib):
    """The pass-through keeps the program's own BLAS, also where it was loaded
    privately: bit for bit the reference BLAS's results with the interposer
    off, the same BLAS mapped and neither libxngemm nor CUDA; under exdgemm,
    the calls below the threshold still the reference BLAS's."""
    python = sys.executable
    if subprocess.run([python, "-c", "import numpy"], capture_output=True).returncode:
        print("numpy is not installed for", python, "(Debian: python3-numpy): skipped")
        return SKIP
    seed = int.from_bytes(os.urandom(4), "little")
    plain, plain_maps, _ = probe_reference(seed=seed)
    reference = [p for p in plain_maps if p.startswith(REFERENCE_BLAS_DIR + "/libblas.so")]
    if not reference:
        print(f"numpy does not run on {REFERENCE_BLAS_DIR}/libblas.so.3 here "
              f"(Debian: libblas3; mapped: {blas_of(plain_maps)}): skipped")
        return SKIP
    print(f"seed {seed}; plain on the reference BLAS: {blas_of(plain_maps)}")
    # The system's default BLAS (OpenBLAS here) rounds differently: the case
    # tells the two apart (the interposer used to give OpenBLAS's bits).
    default, default_maps, _ = probe_reference(blas_dir=None, seed=seed)
    if reference[0] in default_maps:
        print("the system's default BLAS is the reference BLAS: no other BLAS to tell apart")
    else:
        assert any(default[i][2] != plain[i][2] for i in range(2)), \
            "OpenBLAS and the reference BLAS agree bit for bit here: the case proves nothing"

    def library_objects(maps):
        return sorted(p for p in maps if re.search(r"libxngemm\.so|libcudart|libcublas", p))

    for env in ({}, {"XN_INTERCEPT": "off"}):
        got, maps, err = probe_reference(lib, seed=seed, **env)
        assert got == plain, f"{env or 'unset'}: numpy's results differ from the reference BLAS's"
        # The same objects, but for the interposer and its C++ runtime.
        extra = {p for p in maps - plain_maps
                 if not re.search(r"libxngemm_intercept|libstdc\+\+|libgcc_s", p)}
        assert not extra and plain_maps <= maps, \
            f"{env}: mapped {sorted(maps ^ plain_maps)} differently from the plain run"
        assert blas_of(maps) == blas_of(plain_maps), (blas_of(maps), blas_of(plain_maps))
        assert not library_objects(maps), f"{env}: off loaded {library_objects(maps)}"
        c = counts(err)
        assert c["off"] >= 2 and c["rerouted"] == 0, c
        for routine, (_, targets) in summary(err).items():
            assert all(t.startswith(REFERENCE_BLAS_DIR + "/") for t in targets), \
                f"{routine} passed through to {targets}"
    print("off and unset: the reference BLAS's bits, the same objects mapped, "
          "neither libxngemm nor CUDA loaded")

    got, maps, err = probe_reference(lib, seed=seed, XN_INTERCEPT="exdgemm",
                                     XN_INTERCEPT_MIN_FLOPS=THRESHOLD)
    assert got[0] == plain[0], "exdgemm: a product below the threshold changed"
    (A, B, C), (m, k, n) = got[1], (8, 300, 7)
    cr = correctly_rounded_rowmajor(A, B, m, k, n)
    wrong = [i for i in range(m * n) if C[i] != cr[i]]
    assert not wrong, f"exdgemm: {len(wrong)} entries not correctly rounded, first {wrong[0]}"
    assert library_objects(maps), "exdgemm: libxngemm was not loaded"
    s = summary(err)
    c, targets = s["cblas_dgemm"]
    assert c["rerouted"] == 1 and c["small"] >= 1, s
    assert targets and targets[0].startswith(REFERENCE_BLAS_DIR + "/"), \
        f"exdgemm: the small product passed through to {targets}"
    print(f"exdgemm with XN_INTERCEPT_MIN_FLOPS={THRESHOLD}: the small product the reference "
          f"BLAS's bits ({targets[0]}), the large one correctly rounded "
          f"({sum(C[i] != plain[1][2][i] for i in range(m * n))} of {m * n} entries "
          "differ from the reference BLAS)")
    return 0


# ------------------------------------------------------- the environment

def messages(stderr):
    """The validator's lines ("xngemm: XN_...")."""
    return [l for l in stderr.splitlines() if l.startswith("xngemm: XN_")]


def ours(stderr):
    """Every line the library or the interposer wrote ("xngemm...")."""
    return [l for l in stderr.splitlines() if l.startswith("xngemm")]


def part_environment(lib, exe):
    """Bad values of the interposer's and the library's variables: under
    XN_VERBOSE=1 one line each on stderr, naming the variable, the value and
    what is used instead, once per process however many calls read them;
    without it, nothing. The defaults apply either way."""
    plain, _ = run([exe])
    # Not asked for: not a line of ours, and the same results; for the
    # interposer's variables and for the library's, read when it loads.
    out, err = run([exe], lib, XN_INTERCEPT="banana", XN_INTERCEPT_MIN_FLOPS="12x",
                   XN_INTERCEPT_LOG="yes")
    assert out == plain and not ours(err), err
    threads_ref, _ = run([exe, "threads"], lib, XN_INTERCEPT="exdgemm")
    out, err = run([exe, "threads"], lib, XN_INTERCEPT="exdgemm", XN_INTERCEPT_LOG="0",
                   XN_DEVICE="banana", XN_LEAF_D="abc", XN_MAX_LEVELS="99")
    assert out == threads_ref and not ours(err), err
    # The interposer's own variables, validated with it off (libxngemm is
    # never loaded to read them).
    out, err = run([exe], lib, XN_INTERCEPT="banana", XN_INTERCEPT_MIN_FLOPS="12x",
                   XN_INTERCEPT_LOG="yes", XN_VERBOSE="1")
    assert out == plain, "bad interposer settings changed a result"
    assert sorted(messages(err)) == sorted([
        "xngemm: XN_INTERCEPT=banana is not one of off, exdgemm, ngemm, strassen, winograd: "
        "using off",
        "xngemm: XN_INTERCEPT_MIN_FLOPS=12x is not a number: using 0",
        "xngemm: XN_INTERCEPT_LOG=yes is not one of 0, 1: using 0"]), err
    assert "xngemm intercept:" not in err, f"XN_INTERCEPT_LOG=yes printed the summary: {err}"
    out, err = run([exe], lib, XN_INTERCEPT="exdgemm", XN_INTERCEPT_MIN_FLOPS="-5",
                   XN_VERBOSE="1")
    assert messages(err) == [
        "xngemm: XN_INTERCEPT_MIN_FLOPS=-5 is out of range (at least 0): using 0"], err
    expect(counts(err), rerouted=2)

    # The library's: read when it is loaded; 32 rerouted calls from 4
    # threads (the client's "threads" case), one line each.
    out, err = run([exe, "threads"], lib, XN_INTERCEPT="exdgemm", XN_DEVICE="banana",
                   XN_LEAF_D="abc", XN_MAX_LEVELS="99", XN_EXDGEMM_BLOCK="-1",
                   XN_VERBOSE="1")
    assert out == threads_ref, "bad library settings changed a rerouted result"
    assert sorted(messages(err)) == sorted([
        "xngemm: XN_DEVICE=banana is not one of auto, cpu, gpu: using auto",
        "xngemm: XN_LEAF_D=abc is not an integer: using -1",
        "xngemm: XN_MAX_LEVELS=99 is out of range (0 to 30): using 6",
        "xngemm: XN_EXDGEMM_BLOCK=-1 is out of range (0 to 2147483648): using 0"]), err
    expect(counts(err), rerouted=32)

    # XN_DEVICE=gpu where no GPU is usable: the CPU, said once.
    out, err = run([exe, "threads"], lib, XN_INTERCEPT="exdgemm", XN_DEVICE="gpu",
                   XN_VERBOSE="1")
    assert out == threads_ref
    said = "xngemm: XN_DEVICE=gpu but no GPU is usable: the host routines run on the CPU"
    if os.path.exists("/dev/nvidiactl"):
        print("a GPU may be usable here: XN_DEVICE=gpu's message not checked")
        assert said not in messages(err) or messages(err) == [said], err
    else:
        assert messages(err) == [said], err
    print("bad values: one line each, once per process (32 calls, 4 threads); "
          "the defaults used; the interposer's read without libxngemm")
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
    expect(counts(err, CUBLAS_ROUTINES), rerouted=0, bad=1, quick=1, off=calls - 2)
    print(f"off: {calls} cuBLAS calls passed through, same bits")

    for mode in ("exdgemm", "ngemm", "strassen", "winograd"):
        ref, ref_extra = lines(run([reference, mode], **env)[0])
        out, err = run([client], lib, XN_INTERCEPT=mode, **env)
        got, extra = lines(out)
        same(got, ref, f"{mode}: the client under the interposer and {mode}'s routine")
        c = counts(err, CUBLAS_ROUTINES)
        want = int(ref_extra["rerouted"])
        expect(c, rerouted=want, bad=1, quick=1, cannot=0, failed=0)
        changed = [n for n in ref if n and ref[n] != plain[n]]
        assert changed, f"{mode}: no call differs from cuBLAS: was anything computed?"
        if mode == "exdgemm":
            # Random signed data with k = 301: cuBLAS is not correctly rounded
            # in every entry, the rerouted call is.
            assert "d_nn_signed" in changed, "exdgemm: d_nn_signed equals cuBLAS's"
        else:
            assert c["own"] > want, \
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
    expect(counts(err, CUBLAS_ROUTINES), rerouted=0)
    out, err = run([client], lib, XN_INTERCEPT="exdgemm", XN_EXDGEMM_WORKSPACE_LIMIT=1, **env)
    same(lines(out)[0], plain, "exdgemm without workspace")
    ex_ref = int(lines(run([reference, "exdgemm"], **env)[0])[1]["rerouted"])
    expect(counts(err, CUBLAS_ROUTINES), rerouted=0, cannot=ex_ref)
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
    elif part == "numpy_reference":
        return part_numpy_reference(sys.argv[2])
    elif part == "environment":
        return part_environment(*sys.argv[2:4])
    elif part == "cublas":
        return part_cublas(*sys.argv[2:5])
    else:
        raise SystemExit(f"unknown part {part}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
