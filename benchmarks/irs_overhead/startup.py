#!/usr/bin/env python3
"""What a run under ENFORCE spends outside its own work: start-up (mapping and validating the
prefix, whose table holds a row per event of the verified trace) and exit, measured as the
process's wall time minus the program's `work_us`, for one or more irs builds side by side.

Builds benchmarks/irs_overhead/rwlock_relaxed.c with each irs, records a run (a trace of about
420,000 events), cuts the empty prefix from it, then runs each build under its prefix in turn,
round after round. Standard library only; from the repository root:

  python3 benchmarks/irs_overhead/startup.py --irs target/release/irs OLD/target/release/irs --runs 20
"""
import argparse, os, statistics, subprocess, tempfile, time
from pathlib import Path

from run import REPO, sh  # the overhead benchmark's helpers, beside this file

def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--irs", nargs="+", default=[str(REPO / "target/release/irs")], help="irs binaries (each with its runtime beside it)")
    ap.add_argument("--runs", type=int, default=20)
    a = ap.parse_args()
    d = Path(tempfile.mkdtemp(prefix="irs-startup-"))
    src = REPO / "benchmarks/irs_overhead/rwlock_relaxed.c"
    cfgs = []
    for i, irs in enumerate(a.irs):
        exe, trace, prefix = d / f"p{i}", d / f"p{i}.trace", d / f"p{i}.prefix"
        sh([irs, "cc", "-O2", "-pthread", "-o", str(exe), str(src)])
        sh([irs, "record", "--out", str(trace), "--", str(exe)])
        made = sh([irs, "constrain", "--trace", str(trace), "--out", str(prefix), "--keep", "0"]).strip()
        cfgs.append((irs, exe, prefix, made, prefix.stat().st_size))
    outside = {c[0]: [] for c in cfgs}
    for _ in range(a.runs):
        for irs, exe, prefix, _, _ in cfgs:
            env = dict(os.environ, IRS_MODE="enforce", IRS_PREFIX=str(prefix))
            t = time.perf_counter()
            out = subprocess.run([str(exe)], capture_output=True, text=True, env=env).stdout
            wall = time.perf_counter() - t
            work = float(out.strip().splitlines()[-1].split("=")[1]) / 1e6
            outside[irs].append((wall - work) * 1e3)
    print(f"{a.runs} runs per build, interleaved; median ms of wall time outside work_us\n")
    print("| irs | prefix | prefix bytes | median ms outside the work |\n| --- | --- | ---: | ---: |")
    for irs, _, _, made, size in cfgs:
        print(f"| {irs} | {made.split(': ', 1)[-1]} | {size:,} | {statistics.median(outside[irs]):.1f} |")
    subprocess.run(["rm", "-rf", str(d)])

if __name__ == "__main__":
    main()
