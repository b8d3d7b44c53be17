#!/usr/bin/env python3
"""Builds of irs side by side on the QPOR families: `irs verify` time, the program's share of
it, and the share outside the program's runs (the issue's "time outside program execution"),
also without counting the set-up of the runs (forks or the worker's restores) as the program's,
and where that share goes: the verifier walking a run after the program ended it, backtracking,
and pruning (which begins while the program runs the next prefix).
With one build it measures that build alone, with several the runs alternate between them.

Each build is a directory holding its `irs` binary and the `libirs_runtime.a` it links (a
program must be built by the irs that verifies it: the buffer format may differ). Make one
from a checkout with `cargo build --release --workspace` and copy `target/release/irs` and
`target/release/libirs_runtime.a` into a directory. Every instance is built by each irs into
that directory; then the runs alternate between the builds, `--reps` times, and the table
gives the fastest and the median of each.

    python3 benchmarks/qpor/ab.py /tmp/irs-before /tmp/irs-after --reps 5
    python3 benchmarks/qpor/ab.py /tmp/irs-before /tmp/irs-after --only MPAT5,DISP54 -- --k 2
    python3 benchmarks/qpor/ab.py target/release --only MPAT5,PI8,DISP53,MPC33,POL63,MPAT6,DISP54

Standard library only.
"""
import argparse, json, statistics, subprocess, sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

INSTANCES = {
    "MPAT5": ("mpat.c", ["-DK=5"]),
    "MPAT6": ("mpat.c", ["-DK=6"]),
    "PI7": ("pi.c", ["-DN=7", "-ffp-contract=off"]),
    "PI8": ("pi.c", ["-DN=8", "-ffp-contract=off"]),
    "DISP53": ("disp.c", ["-DJOBS=5", "-DWORKERS=3", "-DRESOURCES=2"]),
    "DISP54": ("disp.c", ["-DJOBS=5", "-DWORKERS=4", "-DRESOURCES=2"]),
    "MPC33": ("mpc.c", ["-DPRODUCERS=3", "-DCONSUMERS=3"]),
    "POL63": ("pool.c", ["-DTASKS=6", "-DWORKERS=3"]),
    "POL123": ("pool.c", ["-DTASKS=12", "-DWORKERS=3"]),
}
DEFAULT = "MPAT5,PI8,DISP53,MPC33,POL63"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("builds", nargs="+", help="directories, each with irs and libirs_runtime.a (target/release is one)")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--only", default=DEFAULT, help=f"comma-separated instances of: {','.join(INSTANCES)}")
    ap.add_argument("verify_args", nargs="*", help="after --: more `irs verify` arguments (default: optimal)")
    a = ap.parse_args()
    names = [n.strip().upper() for n in a.only.split(",") if n.strip()]
    for n in names:
        if n not in INSTANCES:
            ap.error(f"unknown instance {n}")
    builds = [Path(b).resolve() for b in a.builds]
    for b in builds:
        for f in ("irs", "libirs_runtime.a"):
            if not (b / f).is_file():
                sys.exit(f"error: {b / f} does not exist")
        for n in names:
            src, defines = INSTANCES[n]
            exe = b / n
            if not exe.exists() or exe.stat().st_mtime < (b / "irs").stat().st_mtime:
                r = subprocess.run([str(b / "irs"), "cc", "-O1", *defines, "-o", str(exe), str(HERE / src)], capture_output=True, text=True)
                if r.returncode:
                    sys.exit(f"error: building {n} with {b}: {r.stderr.strip()}")
    results = {}
    for _ in range(a.reps):
        for n in names:
            for b in builds:
                r = subprocess.run([str(b / "irs"), "verify", "--json", *a.verify_args, "--", str(b / n)], capture_output=True, text=True)
                try:
                    j = json.loads(r.stdout.strip().splitlines()[-1])
                except (IndexError, json.JSONDecodeError):
                    sys.exit(f"error: {b} on {n}: {r.stderr.strip()[-300:]}")
                results.setdefault((n, b), []).append(j)
    print(f"{a.reps} {'alternating ' if len(builds) > 1 else ''}repetitions; `irs verify --json {' '.join(a.verify_args)}`\n")
    print("| instance | build | traces | fastest s | median s | program s (median) | outside the program (median, range) | set-up not counted | walk behind / backtracking / pruning (median %) | median / first build's |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for n in names:
        base = None
        for b in builds:
            js = results[(n, b)]
            secs = [j["seconds"] for j in js]
            prog = statistics.median(j["program_seconds"] for j in js)
            med = statistics.median(secs)
            base = base or med
            out = [100 * (1 - j["program_seconds"] / j["seconds"]) for j in js]
            # Builds before program_setup_seconds existed did not count the worker's restore.
            bare = [100 * (1 - (j["program_seconds"] - j.get("program_setup_seconds", 0)) / j["seconds"]) for j in js]
            spread = f"{statistics.median(out):.0f}% ({min(out):.0f}–{max(out):.0f})"
            # Where the program waits for the verifier (builds before these fields: "–").
            parts = ["walk_behind_seconds", "backtrack_seconds", "prune_seconds"]
            waits = " / ".join(f"{statistics.median(100 * j[k] / j['seconds'] for j in js):.0f}" for k in parts) if all(k in js[0] for k in parts) else "–"
            print(f"| {n} | {b.parent.name + '/' + b.name if b.name == 'release' else b.name} | {js[0]['traces']:,} | {min(secs):.3f} | {med:.3f} | {prog:.3f} | {spread} | {statistics.median(bare):.0f}% | {waits} | {med / base:.2f} |")


if __name__ == "__main__":
    main()
