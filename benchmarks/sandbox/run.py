#!/usr/bin/env python3
"""What the sandbox of explored executions costs (docs/src/sandbox.md): executions per second of
`irs explore --random N` with isolation on (the default) and off (`IRS_SANDBOX=off`), the two
alternating run by run so that their ratio is measured side by side, on programs that write no
file (the per-execution check only: a stat, an fstatfs and a chdir) and on one that writes a
file in every execution (a fresh view of the file system per execution).

Standard library only. Run from the repository root after `cargo build --release --workspace`.
"""
import argparse, datetime, os, re, statistics, subprocess, sys, tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
PROGRAMS = [
    ("two_threads_20", REPO / "benchmarks/explore_throughput/two_threads_20.c"),
    ("lock_10_threads", REPO / "benchmarks/explore_throughput/lock_10_threads.c"),
    ("writes_file", HERE / "writes_file.c"),
]
RATE = re.compile(r"^(\d+) executions in ([\d.]+) s \((\d+)/s")


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--irs", default=str(REPO / "target/release/irs"))
    ap.add_argument("--executions", type=int, default=2000)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--out", default=str(REPO / "benchmarks/results/sandbox/results.md"))
    a = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as d:
        for name, src in PROGRAMS:
            exe = Path(d) / name
            r = subprocess.run([a.irs, "cc", "-O2", "-o", str(exe), str(src), "-lpthread"], capture_output=True, text=True)
            if r.returncode != 0:
                sys.exit(f"error: building {name}: {r.stderr.strip()[-300:]}")
            rates = {"on": [], "off": []}
            for i in range(a.repeats):
                for mode in rates:
                    env = dict(os.environ, IRS_SANDBOX=mode)
                    r = subprocess.run([a.irs, "explore", "--random", str(a.executions), "--seed", str(i + 1), "--", str(exe)], capture_output=True, text=True, env=env, cwd=d)
                    m = RATE.match(r.stdout)
                    if r.returncode != 0 or not m:
                        sys.exit(f"error: {name} ({mode}): {r.stdout.strip()[:200]} {r.stderr.strip()[:300]}")
                    rates[mode].append(int(m.group(3)))
            on, off = statistics.median(rates["on"]), statistics.median(rates["off"])
            per_run = (1e6 / on - 1e6 / off)
            rows.append((name, off, on, on / off, per_run))
            print(f"{name}: off {off:.0f}/s, on {on:.0f}/s, ratio {on / off:.2f}, {per_run:+.1f} µs per execution", flush=True)
    out = Path(a.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    cmd = f"python3 benchmarks/sandbox/run.py --executions {a.executions} --repeats {a.repeats}"
    lines = [
        "# What the sandbox of explored executions costs",
        "",
        f"Measured {datetime.date.today()} on this machine (2 cores; other work running: ratios are side by side, run by run alternating).",
        f"Command: `{cmd}`.",
        "",
        "`irs explore --random N`, executions per second, median of the repeats; *on* is the default, *off* is `IRS_SANDBOX=off`.",
        "",
        "| program | off (runs/s) | on (runs/s) | on / off | cost per execution |",
        "|---|---:|---:|---:|---:|",
    ]
    for name, off, on, ratio, per_run in rows:
        lines.append(f"| {name} | {off:.0f} | {on:.0f} | {ratio:.2f} | {per_run:+.1f} µs |")
    lines += ["", "`writes_file` writes a file in every execution, so every execution starts in a freshly built view (one overlay mount per writable file system plus the read-only binds)."]
    out.write_text("\n".join(lines) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
