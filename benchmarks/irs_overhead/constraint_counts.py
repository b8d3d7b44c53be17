#!/usr/bin/env python3
"""Constraint counts of the first trace's prefix under each equivalence (DESIGN §4): how many
scheduling constraints a production run starts under when `irs verify --publish` anchors its
prefix, with reads of a word commuting (the default) and with every access to a word ordered
(`--equivalence mazurkiewicz`). Two reads are never ordered by a constraint under the first.

For each program: `irs cc -O2 -pthread`, then `irs verify --publish --max-executions 1
--equivalence E --json` (the first published cutoff is the whole first trace); the program's
segment (/dev/shm/irs-<id>) is removed before and after each. Standard library only; from the
repository root:

  python3 benchmarks/irs_overhead/constraint_counts.py [--irs target/release/irs] [PROGRAM.c ...]

Default programs: the IRS paper's (`benchmarks/irs_paper/*.c`) and the synchronisation
benchmarks (`benchmarks/sync_programs/*.c`).
"""
import argparse, glob, json, os, subprocess, tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
EQUIVALENCES = ("reads-commute", "mazurkiewicz")


def first_prefix(irs, exe, eq, cwd):
    out = subprocess.run([irs, "verify", "--publish", "--max-executions", "1", "--equivalence", eq, "--json", "--", str(exe)],
                         capture_output=True, text=True, cwd=cwd, stdin=subprocess.DEVNULL, timeout=600)
    j = json.loads(out.stdout.strip().splitlines()[-1])
    pub = j.get("published") or {}
    seg = pub.get("segment")
    if seg and os.path.exists(seg):
        os.unlink(seg)
    log = pub.get("log") or []
    if not log:
        return None, pub.get("error")
    return log[0], None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--irs", default=str(REPO / "target/release/irs"))
    ap.add_argument("programs", nargs="*")
    a = ap.parse_args()
    progs = a.programs or sorted(glob.glob(str(REPO / "benchmarks/irs_paper/*.c"))) + sorted(glob.glob(str(REPO / "benchmarks/sync_programs/*.c")))
    d = Path(tempfile.mkdtemp(prefix="irs-constraints-"))
    print("| program | events (first trace) | constraints, reads commute | constraints, Mazurkiewicz | fewer |")
    print("|---|---:|---:|---:|---:|")
    for src in progs:
        name = Path(src).stem
        exe = d / name
        subprocess.run([a.irs, "cc", "-O2", "-pthread", "-o", str(exe), src], check=True, capture_output=True)
        counts, steps, err = {}, None, None
        for eq in EQUIVALENCES:
            first, e = first_prefix(a.irs, exe, eq, d)
            if first is None:
                err = e
                break
            counts[eq] = first["constraints"]
            steps = sum(first["cut"])
        if err:
            print(f"| `{name}` | | {err} | | |")
            continue
        rc, mz = counts["reads-commute"], counts["mazurkiewicz"]
        fewer = f"{100 * (mz - rc) / mz:.0f}%" if mz else "-"
        print(f"| `{name}` | {steps} | {rc} | {mz} | {fewer} |")


if __name__ == "__main__":
    main()
