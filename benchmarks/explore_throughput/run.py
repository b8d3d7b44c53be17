#!/usr/bin/env python3
"""Executor throughput (issue 3): executions per second of `irs explore --random` on three
program shapes, median of repeated runs, with the per-execution split the executor measures
(fork call, the execution's run, transfer = request + response + decoding). Each program is
measured in the persistent worker and with a process per execution (`--fork-each`), the two
alternating run by run, so that their ratio is measured side by side.

Standard library only. Run from the repository root after `cargo build --release --workspace`.
"""
import argparse, datetime, os, re, statistics, subprocess, sys, tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
# (program, snapshot step or None): from main, and from a snapshot after the given step.
PROGRAMS = [
    ("two_threads_20", None),
    ("lock_10_threads", None),
    ("lock_10_threads", 30),
    ("four_threads_200", None),
    ("long_prefix", None),
    ("long_prefix", 4),
]
# Where a program's source is not `<name>.c` here: the source and its defines. The long-prefix
# program is the snapshot benchmark's prefix.c with 3M iterations of work before 4 threads that
# each take the mutex once.
SOURCES = {"long_prefix": (REPO / "benchmarks/snapshots/prefix.c", ["-DWORK=3000000", "-DNT=4", "-DITERS=1"])}
LINE = re.compile(r"^(\d+) executions in ([\d.]+) s \((\d+)/s; per execution: set-up \(fork or restore\) ([\d.]+) µs, run ([\d.]+) µs, transfer ([\d.]+) µs\)")

def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--irs", default=str(REPO / "target/release/irs"))
    ap.add_argument("--executions", type=int, default=3000)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--out", default=str(REPO / "benchmarks/results/explore_throughput.md"))
    a = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as d:
        for p, snap in PROGRAMS:
            exe = Path(d) / p
            if not exe.exists():
                src, defines = SOURCES.get(p, (HERE / f"{p}.c", []))
                r = subprocess.run([a.irs, "cc", "-O2", *defines, "-o", str(exe), str(src)], capture_output=True, text=True)
                if r.returncode != 0:
                    sys.exit(f"error: building {p}: {r.stderr.strip().splitlines()[-1:]}")
            extra = ["--snapshot-at", str(snap)] if snap is not None else []
            modes = {"persistent worker": [], "fork per execution": ["--fork-each"]}
            rates = {m: [] for m in modes}
            splits = {m: [] for m in modes}
            for i in range(a.repeats):
                for mode, flag in modes.items():
                    r = subprocess.run([a.irs, "explore", "--random", str(a.executions), "--seed", str(i + 1), *extra, *flag, "--", str(exe)], capture_output=True, text=True)
                    m = LINE.match(r.stdout)
                    if r.returncode != 0 or not m:
                        sys.exit(f"error: {p}: {r.stdout.strip()[:200]} {r.stderr.strip()[:200]}")
                    rates[mode].append(int(m.group(3)))
                    splits[mode].append(tuple(float(m.group(k)) for k in (4, 5, 6)))
            label = p if snap is None else f"{p}, from a snapshot at step {snap}"
            for mode in modes:
                med = statistics.median(rates[mode])
                split = tuple(statistics.median(s[k] for s in splits[mode]) for k in range(3))
                rows.append((label, mode, med, min(rates[mode]), max(rates[mode]), split))
                print(f"{label} ({mode}): median {med:.0f}/s (set-up {split[0]:.1f} µs, run {split[1]:.1f} µs, transfer {split[2]:.1f} µs)")
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    cmd = "python3 benchmarks/explore_throughput/run.py" + ("" if a.executions == 3000 and a.repeats == 5 else f" --executions {a.executions} --repeats {a.repeats}")
    with open(a.out, "w") as f:
        f.write("# Executor throughput (controlled executions per second)\n\n")
        f.write(f"- Date: {datetime.datetime.utcnow():%Y-%m-%d %H:%M} UTC\n- Command: `{cmd}`\n")
        f.write(f"- Machine: nproc={os.cpu_count()}, CPU: {cpu}, load before: {os.getloadavg()[0]:.2f}\n")
        f.write(f"- Each figure: `irs explore --random {a.executions}` (random schedules from `main`, or with `--snapshot-at K` from a snapshot of the default execution after K steps), median of {a.repeats} runs; the persistent worker (default) and `--fork-each` (a process per execution) alternate run by run\n")
        f.write("- From a snapshot: the persistent worker of the paused execution restores its image and resumes it; with `--fork-each` a process is forked from the paused execution per run\n\n")
        f.write("| program | executor | executions/s (median) | min | max | set-up µs | run µs | transfer µs |\n| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |\n")
        for p, mode, med, lo, hi, s in rows:
            f.write(f"| {p} | {mode} | {med:.0f} | {lo} | {hi} | {s[0]:.1f} | {s[1]:.1f} | {s[2]:.1f} |\n")
    print(f"wrote {a.out}")

if __name__ == "__main__":
    main()
