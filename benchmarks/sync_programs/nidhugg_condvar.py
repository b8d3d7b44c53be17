#!/usr/bin/env python3
"""Condition variables side by side: irs, Nidhugg as published, and Nidhugg with its relock rule
corrected, on the condition-variable programs of this directory and two probes.

Nidhugg (0aea4d23, `src/TSOTraceBuilder.cpp`, `cond_awake`) orders the relock that ends a
`pthread_cond_wait` after the condition variable's *last* signal or broadcast, as a fixed
happens-before edge, instead of after the signal that woke the thread. A later signal that
finds nobody waiting commutes with the pending relock, but the edge puts it first, the race
between the two lock acquisitions is dropped, and the runs in which the woken thread relocks
first are never tried when the exploration did not happen to start with one. The corrected
build (`--nidhugg-fixed`, made by hand, never committed) records for each thread the
signal or broadcast that woke it and orders the relock after that event alone; nothing else
differs.

Probes (expected verdict `violation`; a tool that says "No errors" missed runs):
- `bounded_buffer -DPROBE_RESUMED`: see the program's header;
- `tests/verify_programs/sync_cond_relock_before_idle_signal.c`: 2 threads, 4 feasible orders,
  the assertion fails in one.

Standard library only; from the repository root, after `cargo build --release --workspace`:

  python3 benchmarks/sync_programs/nidhugg_condvar.py --nidhugg N/src/nidhuggc \\
      --nidhugg-fixed NF/src/nidhuggc --out benchmarks/results/sync_programs/nidhugg_condvar.md
"""
import argparse, datetime, os, re, subprocess, sys, tempfile, time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
HERE = REPO / "benchmarks/sync_programs"
CASES = [
    ("bounded_buffer.c", [], "safe"),
    ("bounded_buffer.c", ["-DPRODUCERS=2"], "safe"),
    ("bounded_buffer.c", ["-DPROBE_RESUMED"], "violation"),
    ("thread_pool.c", ["-DTASKS=1"], "safe"),
    ("thread_pool.c", [], "safe"),
    ("thpool_like.c", ["-DWORKERS=1", "-DJOBS=2"], "safe"),
    ("thpool_like.c", ["-DWORKERS=2", "-DJOBS=1"], "safe"),
    ("../../tests/verify_programs/sync_cond_relock_before_idle_signal.c", [], "violation"),
]


def run(cmd, limit, cwd=None):
    t = time.perf_counter()
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=limit, cwd=cwd)
        return r.stdout + r.stderr, time.perf_counter() - t, False
    except subprocess.TimeoutExpired:
        return "", time.perf_counter() - t, True


def nidhugg(path, src, flags, limit):
    out, s, to = run([path, *flags, "--", str(src), "--sc", "--optimal"], limit)
    if to:
        return {"verdict": "timeout", "traces": None, "s": s}
    m = re.search(r"Trace count: (\d+)", out)
    v = "safe" if "No errors were detected" in out else "violation" if "Error detected" in out else "error"
    return {"verdict": v, "traces": int(m.group(1)) if m else None, "s": s}


def irs(path, src, flags, limit, wd):
    exe = Path(wd) / "prog"
    out, _, _ = run([path, "cc", "-O1", "-pthread", *flags, str(src), "-o", str(exe)], limit)
    if not exe.exists():
        return {"verdict": "compile error", "traces": None, "s": 0}
    out, s, to = run([path, "verify", "--time-limit", str(limit), "--json", "--out-dir", wd, "--", str(exe)], limit + 30, wd)
    exe.unlink()
    import json
    try:
        j = json.loads(out.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return {"verdict": "error", "traces": None, "s": s}
    # `safe-within-bounds` for want of spurious wake-ups (which Nidhugg does not explore either)
    # is compared as `safe`.
    v = j.get("verdict")
    if v == "safe-within-bounds" and all(str(b).startswith("no spurious wake-ups") for b in j.get("bounds") or []):
        v = "safe"
    return {"verdict": v, "traces": j.get("traces"), "discarded": j.get("discarded"), "s": j.get("seconds", s)}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--irs", default=str(REPO / "target/release/irs"))
    ap.add_argument("--nidhugg", required=True)
    ap.add_argument("--nidhugg-fixed", required=True)
    ap.add_argument("--time-limit", type=float, default=300)
    ap.add_argument("--out", type=Path)
    a = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as wd:
        for src, flags, expected in CASES:
            path = (HERE / src).resolve()
            label = " ".join([path.stem, *flags])
            r = {"irs": irs(a.irs, path, flags, a.time_limit, wd),
                 "nidhugg": nidhugg(a.nidhugg, path, flags, a.time_limit),
                 "fixed": nidhugg(a.nidhugg_fixed, path, flags, a.time_limit)}
            rows.append((label, expected, r))
            print(label, {k: (v["verdict"], v["traces"]) for k, v in r.items()}, file=sys.stderr)

    def cell(r, expected):
        v = r["verdict"] if r["verdict"] == expected else f"**{r['verdict']}**"
        t = "—" if r["traces"] is None else f"{r['traces']:,}"
        if r.get("discarded"):
            t += f" ({r['traces'] - r['discarded']:,} + {r['discarded']} discarded)"
        return f"{v} | {t} | {r['s']:.2f}"

    rev = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    L = ["# Condition variables: irs, Nidhugg, and Nidhugg with its relock rule corrected", "",
         f"- Command: `python3 benchmarks/sync_programs/nidhugg_condvar.py --nidhugg {a.nidhugg} --nidhugg-fixed {a.nidhugg_fixed}`",
         f"- Date: {datetime.datetime.utcnow():%Y-%m-%d %H:%M} UTC; repository at {rev}; {os.cpu_count()} CPUs",
         "- irs: `irs verify` (reads commute, optimal); Nidhugg: `nidhuggc -- PROG.c --sc --optimal`; *traces*: irs `traces` "
         "(with, in brackets, those that ran to the end and its `discarded` ones, ended where a thread spins in a wait, "
         "`thpool_like`'s `thpool_wait` polling: Nidhugg counts those as blocked, not as traces), Nidhugg `Trace count`; *s*: seconds "
         "(irs: the verifier's own; Nidhugg: the whole command). **Bold**: not the expected verdict.",
         "- What the correction is, and the probes: the docstring of the script.", "",
         "| instance | expected | irs verdict | irs traces | irs s | Nidhugg verdict | Nidhugg traces | Nidhugg s | corrected verdict | corrected traces | corrected s |",
         "|---|---|---|---:|---:|---|---:|---:|---|---:|---:|"]
    for label, expected, r in rows:
        L.append(f"| `{label}` | {expected} | {cell(r['irs'], expected)} | {cell(r['nidhugg'], expected)} | {cell(r['fixed'], expected)} |")
    text = "\n".join(L) + "\n"
    if a.out:
        a.out.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
