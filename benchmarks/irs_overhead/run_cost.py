#!/usr/bin/env python3
"""The cost of `irs run` itself over the plain build, with no constraint in force: a trivial
program (prints a line) whose verification has finished (its prefix is empty), run as
`./prog` (the instrumented build, no irs mode: the plain path) and as `irs run -- ./prog`,
interleaved round after round, beside `exec_floor ./prog` (a static C program that only execs
its arguments: what any front that execs the program costs at least) and `irs-full run -- ./prog` (the same command from the binary
with LLVM linked in, which is what `irs` was before its light front: LLVM's static constructors
and relocations at every start). Medians of wall time, in ms, per irs binary given (side by
side; `irs-full` is looked for beside each).

Standard library only; from the repository root:

  python3 benchmarks/irs_overhead/run_cost.py --irs target/release/irs --runs 100
"""
import argparse, json, os, shutil, statistics, subprocess, tempfile, time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SRC = '#include <stdio.h>\nint main(void) { puts("hi"); return 0; }\n'
# The least any front that `exec`s the program can cost: a static C program that does nothing
# but exec its arguments.
EXEC_SRC = '#include <unistd.h>\nint main(int c, char **v) { execv(v[1], v + 1); return 127; }\n'


def timed(cmd, env):
    """Wall time and CPU time (user + system, of the command and every process it waited
    for), in ms."""
    t = time.perf_counter()
    p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    _, status, ru = os.wait4(p.pid, 0)
    wall = (time.perf_counter() - t) * 1e3
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        raise SystemExit(f"{cmd} failed ({p.returncode})")
    return wall, (ru.ru_utime + ru.ru_stime) * 1e3


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--irs", nargs="+", default=[str(REPO / "target/release/irs")], help="irs binaries (each with its runtime beside it)")
    ap.add_argument("--runs", type=int, default=100)
    a = ap.parse_args()
    d = Path(tempfile.mkdtemp(prefix="irs-run-cost-"))
    (d / "exec.c").write_text(EXEC_SRC)
    floor = d / "exec_floor"
    subprocess.run(["clang-14", "-O2", "-static", "-o", str(floor), str(d / "exec.c")], check=True)
    cfgs = []
    for i, irs in enumerate(a.irs):
        exe = d / f"triv{i}"
        env = {k: v for k, v in os.environ.items() if not k.startswith("IRS_")}
        env["IRS_STORE"] = str(d / f"store{i}")
        # A program of its own per irs binary: prefix segments are named by the program and its
        # input, not by the store, so two identical binaries would share one.
        src = d / f"triv{i}.c"
        src.write_text(SRC + f'__attribute__((used)) static const char which[] = "run_cost {i}";\n')
        subprocess.run([irs, "cc", "-O2", "-o", str(exe), str(src)], check=True, env=env)
        subprocess.run([irs, "run", "--", str(exe)], check=True, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
        deadline = time.time() + 120
        while json.loads(subprocess.run([irs, "status", "--json", str(exe)], capture_output=True, text=True, env=env, stdin=subprocess.DEVNULL).stdout)["status"] != "finished":
            if time.time() > deadline:
                raise SystemExit("the verification did not finish in 120 s")
            time.sleep(0.2)
        st = json.loads(subprocess.run([irs, "status", "--json", str(exe)], capture_output=True, text=True, env=env, stdin=subprocess.DEVNULL).stdout)
        assert st["constraints_in_force"] == 0, st
        cfgs.append((irs, exe, env))
    whats = ("plain", "exec floor", "irs run", "irs-full run")
    times = {(irs, what): [] for irs, _, _ in cfgs for what in whats}
    for _ in range(a.runs):
        for irs, exe, env in cfgs:
            full = Path(irs).with_name("irs-full")
            times[(irs, "plain")].append(timed([str(exe)], env))
            times[(irs, "exec floor")].append(timed([str(floor), str(exe)], env))
            times[(irs, "irs run")].append(timed([irs, "run", "--", str(exe)], env))
            if full.exists():
                times[(irs, "irs-full run")].append(timed([str(full), "run", "--", str(exe)], env))
    print(f"{a.runs} rounds, interleaved; medians in ms (no constraint in force: verification finished, empty prefix); load average before: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs\n")
    for col, name in ((0, "wall time"), (1, "CPU time (user + system, the program included)")):
        print(f"{name}:\n")
        print("| irs | plain `./prog` | exec floor | cost of the floor | `irs run -- ./prog` | cost of `irs run` | `irs-full run -- ./prog` | cost of `irs-full run` |")
        print("|---|---|---|---|---|---|---|---|")
        for irs, _, _ in cfgs:
            m = {w: statistics.median(x[col] for x in times[(irs, w)]) if times[(irs, w)] else float("nan") for w in whats}
            print(f"| {irs} | {m['plain']:.2f} | {m['exec floor']:.2f} | {m['exec floor'] - m['plain']:.2f} | {m['irs run']:.2f} | {m['irs run'] - m['plain']:.2f} | {m['irs-full run']:.2f} | {m['irs-full run'] - m['plain']:.2f} |")
        print()
    # Leave nothing behind: each program's verifications (its prefix segments in /dev/shm
    # included), then the scratch directory.
    for irs, exe, env in cfgs:
        subprocess.run([irs, "forget", str(exe)], env=env, stdin=subprocess.DEVNULL, capture_output=True)
    shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main()
