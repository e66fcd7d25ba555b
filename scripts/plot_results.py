#!/usr/bin/env python3
"""plot_results.py - xnbench CSV records as figures (matplotlib).

  scripts/plot_results.py OUTDIR CSV [CSV ...]

For every routine found in the CSVs (column `routine`), one PNG,
OUTDIR/<routine>.png, with two panels against n (square NN rows,
m = n = k): the speedup over the baseline timed in the same run, and the
accuracy gain, the baseline's largest error over ours (above 1: ours is more
accurate). Precisions are separate lines; rows with several repeats of one n
(another run, the `reps` column) keep the one with the most repeats. The
error is the column the routine's table uses: normalised |c - ref| / mean
|ref| for Strassen and Winograd (signed data), relative for the others.

The figures under docs/figures/ are made from the CSVs of the current
tables: scripts/plot_results.py docs/figures docs/results/ngemm/sweep-d.csv
docs/results/ngemm/sweep-s.csv docs/results/fastgemm/sweep.csv
"""
import csv
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

TITLES = {
    "ngemm": "xn?ngemm (non-negative Winograd) vs cublas?gemm",
    "strassen": "xn?gemmStrassen vs cublas?gemm",
    "winograd": "xn?gemmWinograd vs cublas?gemm",
    "exdgemm": "xnExdgemm vs cublasDgemm",
}
PREC = {"d": "double", "s": "single"}


def number(x):
    try:
        return float(x)
    except (TypeError, ValueError):
        return float("nan")


def load(paths):
    rows = []
    for p in paths:
        with open(p, newline="") as f:
            rows += [r for r in csv.DictReader(f)
                     if r.get("status") == "ok" and r.get("trans") == "NN"
                     and r["m"] == r["n"] == r["k"] and not r.get("level_forced")]
    return rows


def gain(r):
    """Baseline error over ours (the columns the routine's table reports);
    NaN where ours is 0 or missing (not drawn)."""
    if r["routine"] in ("strassen", "winograd"):
        base, ours = number(r.get("base_maxnorm")), number(r.get("ours_maxnorm"))
    else:
        base, ours = number(r.get("base_max_rel")), number(r.get("ours_max_rel"))
    return base / ours if ours > 0 else float("nan")


def series(rows, routine, prec):
    best = {}
    for r in rows:
        if r["routine"] != routine or r["prec"] != prec:
            continue
        reps = number(r.get("reps"))
        n, reps = int(r["n"]), int(reps) if reps == reps else 0
        if n not in best or reps > best[n][0]:
            best[n] = (reps, number(r["speedup"]), gain(r), r["date"][:10],
                       r.get("device", "") or "?")
    ns = sorted(best)
    return (ns, [best[n][1] for n in ns], [best[n][2] for n in ns],
            sorted({best[n][3] for n in ns}), sorted({best[n][4] for n in ns}))


def plot(rows, routine, out):
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.2))
    dates, devices = set(), set()
    for prec in ("d", "s"):
        ns, sp, gn, ds, dv = series(rows, routine, prec)
        if not ns:
            continue
        dates.update(ds)
        devices.update(dv)
        ax1.plot(ns, sp, marker=".", label=PREC[prec])
        ax2.plot(ns, gn, marker=".", label=PREC[prec])
    ax1.axhline(1.0, color="gray", lw=0.8)
    ax1.set_xlabel("n (m = n = k)")
    ax1.set_ylabel("speedup over the baseline (same run)")
    ax2.axhline(1.0, color="gray", lw=0.8)
    ax2.set_yscale("log")
    ax2.set_xlabel("n (m = n = k)")
    ax2.set_ylabel("baseline max error / ours (> 1: more accurate)")
    for ax in (ax1, ax2):
        ax.grid(True, alpha=0.3)
        ax.legend()
    fig.suptitle(f"{TITLES.get(routine, routine)}, {', '.join(sorted(devices))}, "
                 f"{', '.join(sorted(dates))}")
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def main():
    if len(sys.argv) < 3:
        raise SystemExit(__doc__)
    outdir, paths = sys.argv[1], sys.argv[2:]
    rows = load(paths)
    os.makedirs(outdir, exist_ok=True)
    for routine in sorted({r["routine"] for r in rows}):
        out = os.path.join(outdir, f"{routine}.png")
        plot(rows, routine, out)
        print("wrote", out)


if __name__ == "__main__":
    main()
