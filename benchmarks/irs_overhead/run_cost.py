#!/usr/bin/env python3
"""The cost of `irs run` itself over the plain build, with no constraint in force: a trivial
program (prints a line) whose verification has finished (its prefix is empty), run as
`./prog` (the instrumented build, no irs mode: the plain path) and as `irs run -- ./prog`,
interleaved round after round, beside `irs --version` (the irs binary's own start and exit,
which every `irs run` pays). Medians of wall time, in ms, per irs binary given (side by side).

Standard library only; from the repository root:

  python3 benchmarks/irs_overhead/run_cost.py --irs target/release/irs --runs 100
"""
import argparse, json, os, statistics, subprocess, tempfile, time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SRC = '#include <stdio.h>\nint main(void) { puts("hi"); return 0; }\n'


def timed(cmd, env):
    t = time.perf_counter()
    r = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    if r.returncode != 0:
        raise SystemExit(f"{cmd} failed ({r.returncode})")
    return (time.perf_counter() - t) * 1e3


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--irs", nargs="+", default=[str(REPO / "target/release/irs")], help="irs binaries (each with its runtime beside it)")
    ap.add_argument("--runs", type=int, default=100)
    a = ap.parse_args()
    d = Path(tempfile.mkdtemp(prefix="irs-run-cost-"))
    (d / "triv.c").write_text(SRC)
    cfgs = []
    for i, irs in enumerate(a.irs):
        exe = d / f"triv{i}"
        env = {k: v for k, v in os.environ.items() if not k.startswith("IRS_")}
        env["IRS_STORE"] = str(d / f"store{i}")
        subprocess.run([irs, "cc", "-O2", "-o", str(exe), str(d / "triv.c")], check=True, env=env)
        subprocess.run([irs, "run", "--", str(exe)], check=True, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
        deadline = time.time() + 120
        while json.loads(subprocess.run([irs, "status", "--json", str(exe)], capture_output=True, text=True, env=env, stdin=subprocess.DEVNULL).stdout)["status"] != "finished":
            if time.time() > deadline:
                raise SystemExit("the verification did not finish in 120 s")
            time.sleep(0.2)
        st = json.loads(subprocess.run([irs, "status", "--json", str(exe)], capture_output=True, text=True, env=env, stdin=subprocess.DEVNULL).stdout)
        assert st["constraints_in_force"] == 0, st
        cfgs.append((irs, exe, env))
    times = {(irs, what): [] for irs, _, _ in cfgs for what in ("plain", "irs run", "irs --version")}
    for _ in range(a.runs):
        for irs, exe, env in cfgs:
            times[(irs, "plain")].append(timed([str(exe)], env))
            times[(irs, "irs run")].append(timed([irs, "run", "--", str(exe)], env))
            times[(irs, "irs --version")].append(timed([irs, "--version"], env))
    print(f"{a.runs} rounds, interleaved; median wall time in ms (no constraint in force: verification finished, empty prefix)\n")
    print("| irs | plain `./prog` | `irs run -- ./prog` | overhead of `irs run` | `irs --version` | `irs run` beyond the irs binary's start |")
    print("|---|---|---|---|---|---|")
    for irs, _, _ in cfgs:
        m = {w: statistics.median(times[(irs, w)]) for w in ("plain", "irs run", "irs --version")}
        print(f"| {irs} | {m['plain']:.2f} | {m['irs run']:.2f} | {m['irs run'] - m['plain']:.2f} | {m['irs --version']:.2f} | {m['irs run'] - m['irs --version'] - m['plain']:.2f} |")


if __name__ == "__main__":
    main()
