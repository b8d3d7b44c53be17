#!/usr/bin/env python3
"""The IRS paper's evaluation, our way (issue 4): ENFORCE overhead per constraint count for our
own versions of the paper's programs (benchmarks/irs_paper/*.c), with the default-policy first
trace (few preemptions) and a round-robin one (many), measured against the plain build.

Writes benchmarks/results/irs_overhead/{results.md, overhead.csv, overhead_default.svg,
overhead_round_robin.svg}. Standard library only; run from the repository root after
`cargo build --release --workspace`.
"""
import argparse, datetime, os, subprocess, sys, tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PROGRAMS = REPO / "benchmarks/irs_paper"

def sh(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        sys.exit(f"error: {' '.join(map(str, cmd))}: {(r.stderr or r.stdout).strip().splitlines()[-1:]}")
    return r.stdout

def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--irs", default=str(REPO / "target/release/irs"))
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--points", type=int, default=20, help="constraint counts measured per program and policy")
    ap.add_argument("--only", nargs="*", help="program names to run (default: all)")
    ap.add_argument("--out", default=str(REPO / "benchmarks/results/irs_overhead"))
    a = ap.parse_args()
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    sources = sorted(p for p in PROGRAMS.glob("*.c") if not a.only or p.stem in a.only)
    if not sources:
        sys.exit(f"error: no programs in {PROGRAMS}")
    md = []
    with tempfile.TemporaryDirectory() as d:
        for policy in ["default", "round-robin"]:
            csv = Path(d) / f"{policy}.csv"
            for src in sources:
                plain, inst = Path(d) / f"{src.stem}.plain", Path(d) / src.stem
                if not inst.exists():
                    sh(["clang-14", "-O2", "-pthread", "-o", str(plain), str(src)])
                    sh([a.irs, "cc", "-O2", "-pthread", "-o", str(inst), str(src)])
                print(f"{src.stem} ({policy})...", flush=True)
                md.append(sh([a.irs, "bench", "overhead", "--plain", str(plain), "--runs", str(a.runs), "--points", str(a.points),
                              "--policy", policy, "--name", src.stem, "--csv", str(csv),
                              "--svg", str(out / f"overhead_{policy.replace('-', '_')}.svg"), "--", str(inst)]))
            (out / f"overhead_{policy.replace('-', '_')}.csv").write_text(csv.read_text())
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    head = (f"# ENFORCE overhead per constraint count\n\n- Date: {datetime.datetime.utcnow():%Y-%m-%d %H:%M} UTC\n"
            f"- Command: `python3 benchmarks/irs_overhead/run.py --runs {a.runs} --points {a.points}`\n"
            f"- Machine: nproc={os.cpu_count()}, CPU: {cpu}, kernel {os.uname().release}\n"
            f"- Each configuration (the plain build, and the instrumented build under each prefix) ran {a.runs} times as separate processes, "
            f"interleaved round by round; figures are medians of the programs' own work time (first create to last join).\n"
            f"- First trace: `default` = the controlled execution with the default policy (few preemptions), `round-robin` = the next thread at every step (many).\n\n")
    (out / "results.md").write_text(head + "\n".join(md))
    print(f"wrote {out}")

if __name__ == "__main__":
    main()
