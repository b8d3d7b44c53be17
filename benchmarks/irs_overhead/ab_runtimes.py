#!/usr/bin/env python3
"""ENFORCE overhead of two irs runtimes side by side (A/B), on the IRS paper's programs (or,
with --programs, on any of them and of benchmarks/irs_overhead/*.c, such as rwlock_relaxed).

Builds each program plainly (clang-14 -O2) and with `irs cc -O2` twice, once per runtime library
(IRS_RUNTIME_LIB), makes prefixes from the default-policy trace (full, a middle cut, empty), then
runs every configuration in turn, round after round, and prints the median work time and the
overhead against the plain build. Standard library only; run from the repository root:

  git worktree add /tmp/irs-old <commit> && (cd /tmp/irs-old && cargo build --release -p irs-runtime)
  python3 benchmarks/irs_overhead/ab_runtimes.py --a /tmp/irs-old/target/release/libirs_runtime.a --runs 200
  python3 benchmarks/irs_overhead/ab_runtimes.py --a OLD.a --programs rwlock_relaxed:empty --runs 50
"""
import argparse, os, statistics, subprocess, sys, tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PROGRAMS = {"dekker": ["full", "middle", "empty"], "fibonacci": ["empty"], "indexer": ["full", "empty"], "last_zero": ["full", "empty"]}

def sh(cmd, env=None, cwd=None):
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=cwd)
    if r.returncode != 0:
        sys.exit(f"error: {' '.join(map(str, cmd))}: {r.stderr.strip()[-300:]}")
    return r.stdout

def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--a", required=True, help="runtime library A (e.g. an older build)")
    ap.add_argument("--b", default=str(REPO / "target/release/libirs_runtime.a"), help="runtime library B (default: this checkout's)")
    ap.add_argument("--irs", default=str(REPO / "target/release/irs"))
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--programs", nargs="+", metavar="NAME:CUT,CUT", help="programs and prefixes (full, middle, empty) instead of the default set")
    a = ap.parse_args()
    programs = PROGRAMS if not a.programs else {p.split(":")[0]: p.split(":")[1].split(",") for p in a.programs}
    d = Path(tempfile.mkdtemp(prefix="irs-ab-"))
    cfgs = []
    for prog, cuts in programs.items():
        src = REPO / f"benchmarks/irs_paper/{prog}.c"
        # The paper's programs' traces are the default policy's; the others' may be longer than
        # EXPLORE's event limit, so theirs is a recorded run's (any complete run's trace will do).
        trace_cmd = ["replay", "--schedule-default", "--trace-out"]
        if not src.exists():
            src = REPO / f"benchmarks/irs_overhead/{prog}.c"
            trace_cmd = ["record", "--out"]
        sh(["clang-14", "-O2", "-pthread", "-w", "-o", str(d / f"plain_{prog}"), str(src)])
        for tag, lib in (("A", a.a), ("B", a.b)):
            sh([a.irs, "cc", "-O2", "-pthread", "-w", "-o", str(d / f"{tag}_{prog}"), str(src)], env=dict(os.environ, IRS_RUNTIME_LIB=lib))
        sh([a.irs, *trace_cmd, str(d / f"{prog}.trace"), "--", str(d / f"B_{prog}")])
        full = sh([a.irs, "constrain", "--trace", str(d / f"{prog}.trace"), "--out", str(d / f"{prog}_full.prefix")])
        total = int(full.split(" of ")[1].split()[0])
        sh([a.irs, "constrain", "--trace", str(d / f"{prog}.trace"), "--out", str(d / f"{prog}_middle.prefix"), "--keep", str(max(1, total // 2))])
        sh([a.irs, "constrain", "--trace", str(d / f"{prog}.trace"), "--out", str(d / f"{prog}_empty.prefix"), "--keep", "0"])
        cfgs.append((prog, "plain", [str(d / f"plain_{prog}")], {}))
        for cut in cuts:
            for tag in ("A", "B"):
                cfgs.append((prog, f"{tag} {cut}", [str(d / f"{tag}_{prog}")], {"IRS_PREFIX": str(d / f"{prog}_{cut}.prefix")}))
    res = {(p, n): [] for p, n, _, _ in cfgs}
    for _ in range(a.runs):
        for prog, name, cmd, env in cfgs:
            out = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, **env)).stdout
            res[(prog, name)].append(float(out.strip().splitlines()[-1].split("=")[1]))
    print(f"A = {a.a}\nB = {a.b}\n{a.runs} runs per configuration, interleaved; median work µs and overhead against plain\n")
    print("| program | configuration | median µs | overhead % |\n| --- | --- | ---: | ---: |")
    for prog in programs:
        base = statistics.median(res[(prog, "plain")])
        for (p, name), v in res.items():
            if p == prog:
                print(f"| {prog} | {name} | {statistics.median(v):.1f} | {100 * (statistics.median(v) / base - 1):.1f} |")
    subprocess.run(["rm", "-rf", str(d)])

if __name__ == "__main__":
    main()
