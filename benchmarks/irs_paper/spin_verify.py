#!/usr/bin/env python3
"""Verification of the IRS paper's busy-waiting programs (dekker, peterson, lamport) by round
count, with GenMC side by side when given its path (issue 20, "spin-waits end").

    python3 benchmarks/irs_paper/spin_verify.py [--irs target/release/irs] [--genmc /tmp/genmc/genmc]
        [--time-limit 300] [--out benchmarks/results/irs_paper/spin_verification.md]

For each program and round count: `irs cc -O2 -pthread -DROUNDS=R`, then `irs verify --json
--time-limit T` (traces, discarded, executions, verdict, wall time); GenMC 0.10.3 runs the same
source with its timing code removed (`genmc --sc --disable-estimation --disable-race-detection
--disable-ipr`: the programs use plain volatile ints, which GenMC calls racy, and its in-place
revisiting refuses peterson's spin-wait). Both run one after the other on the same machine.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CASES = [("peterson", [1, 2, 4]), ("dekker", [1, 2, 4]), ("lamport", [1, 2, 3, 4])]


def run(cmd, limit, cwd):
    start = time.monotonic()
    try:
        p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=limit)
        return p.returncode, p.stdout, p.stderr, time.monotonic() - start
    except subprocess.TimeoutExpired:
        return None, "", "", time.monotonic() - start


def irs_row(a, prog, rounds, wd):
    exe = wd / f"{prog}_{rounds}"
    rc, _, err, _ = run([a.irs, "cc", "-O2", "-pthread", f"-DROUNDS={rounds}", "-o", str(exe), str(REPO / "benchmarks/irs_paper" / f"{prog}.c")], 300, wd)
    if rc != 0:
        sys.exit(f"irs cc {prog}: {err.strip()}")
    rc, out, err, secs = run([a.irs, "verify", "--json", "--time-limit", str(a.time_limit), "--", str(exe)], a.time_limit + 60, wd)
    last = [l for l in out.splitlines() if l.strip()][-1:] or ["{}"]
    try:
        j = json.loads(last[0])
    except json.JSONDecodeError:
        j = {}
    return {"verdict": j.get("verdict", f"error ({err.strip()[:80]})"), "traces": j.get("traces"), "discarded": j.get("discarded"),
            "executions": j.get("executions"), "seconds": secs}


def genmc_row(a, prog, rounds, wd):
    src = (REPO / "benchmarks/irs_paper" / f"{prog}.c").read_text()
    src = re.sub(r"static double now_us\(void\) \{.*?\n\}", "static double now_us(void) { return 0; }", src, flags=re.S)
    src = re.sub(r"#define ROUNDS \d+", f"#define ROUNDS {rounds}", src)
    f = wd / f"genmc_{prog}_{rounds}.c"
    f.write_text(src)
    rc, out, err, secs = run([a.genmc, "--sc", "--disable-estimation", "--disable-race-detection", "--disable-ipr", "--", str(f)], a.time_limit, wd)
    if rc is None:
        return {"text": f"not in {a.time_limit} s"}
    text = out + err
    num = lambda pat: (m.group(1) if (m := re.search(pat, text)) else "?")
    verdict = "safe" if "No errors were detected" in text else "error"
    complete = int(num(r"complete executions explored: (\d+)"))
    blocked = int(num(r"blocked executions seen: (\d+)")) if "blocked executions" in text else 0
    return {"text": f"{verdict}: {complete:,} complete / {blocked:,} blocked, {secs:.1f} s"}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--irs", default=str(REPO / "target/release/irs"))
    ap.add_argument("--genmc")
    ap.add_argument("--time-limit", type=int, default=300)
    ap.add_argument("--out", default=str(REPO / "benchmarks/results/irs_paper/spin_verification.md"))
    a = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as d:
        wd = Path(d)
        for prog, rounds_list in CASES:
            for r in rounds_list:
                i = irs_row(a, prog, r, wd)
                g = genmc_row(a, prog, r, wd) if a.genmc else None
                complete = None if i["traces"] is None else i["traces"] - (i["discarded"] or 0)
                fmt = lambda v: "" if v is None else f"{v:,}"
                line = f"| `{prog}` | {r} | {i['verdict']} | {fmt(complete)} | {fmt(i['discarded'])} | {fmt(i['executions'])} | {i['seconds']:.1f} s |"
                if g:
                    line += f" {g['text']} |"
                print(line, flush=True)
                rows.append(line)
    machine = subprocess.run(["uname", "-srm"], capture_output=True, text=True).stdout.strip()
    head = "| program | rounds | irs verdict | complete traces | discarded | executions | irs time |" + (" GenMC |" if a.genmc else "")
    sep = "| --- " * (8 if a.genmc else 7) + "|"
    cmd = "python3 benchmarks/irs_paper/spin_verify.py" + (f" --genmc {a.genmc}" if a.genmc else "") + f" --time-limit {a.time_limit}"
    text = "\n".join([
        "# Verifying the IRS paper's busy-waiting programs",
        "",
        f"`{cmd}` ({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {machine}, {os.cpu_count()} cores; one tool at a time).",
        "`verdict` `incomplete` is the time limit. irs counts traces with two reads of a word commuting (its default",
        "equivalence); GenMC counts reads-from classes. *complete traces* are irs's traces less the discarded ones.",
        "",
        head,
        sep,
        *rows,
        "",
    ])
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    Path(a.out).write_text(text)
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
