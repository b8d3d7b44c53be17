#!/usr/bin/env python3
"""The cost of `irs run` itself over the plain build, with no constraint in force: a trivial
program (prints a line) whose verification has finished (its prefix is empty), run as
`./prog` (the instrumented build, no irs mode: the plain path) and as `irs run -- ./prog`,
interleaved round after round, beside `exec_floor ./prog` (a static C program that only execs
its arguments: what any front that execs the program costs at least) and `irs-full run -- ./prog` (the same command from the binary
with LLVM linked in, which is what `irs` was before its light front: LLVM's static constructors
and relocations at every start). Medians of wall time, in ms, per irs binary given (side by
side; `irs-full` is looked for beside each).

With `--pigz DIR` (a checkout of madler/pigz, never committed), the same for a real program:
pigz built by clang (`plain build`) and by each `irs cc` (`irs build`, run directly, and under
`irs run`), compressing a small file to standard output, once its verification has finished.
Its runtime's start-up and what `irs run` compares (a file and two variables the verification
read) are a real program's, not a trivial one's.

Standard library only; from the repository root:

  python3 benchmarks/irs_overhead/run_cost.py --irs target/release/irs --runs 100
  python3 benchmarks/irs_overhead/run_cost.py --irs A/irs B/irs --runs 300 --pigz /tmp/real/pigz
"""
import argparse, json, os, shutil, statistics, subprocess, tempfile, time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SRC = '#include <stdio.h>\nint main(void) { puts("hi"); return 0; }\n'
# The least any front that `exec`s the program can cost: a static C program that does nothing
# but exec its arguments.
EXEC_SRC = '#include <unistd.h>\nint main(int c, char **v) { execv(v[1], v + 1); return 127; }\n'


def timed(cmd, env, cwd=None):
    """Wall time and CPU time (user + system, of the command and every process it waited
    for), in ms."""
    t = time.perf_counter()
    p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=cwd)
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
    ap.add_argument("--pigz", help="a pigz checkout: measure a real program instead of a trivial one")
    a = ap.parse_args()
    if a.pigz:
        return real_program(a)
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
        st = wait_finished(irs, [str(exe)], env, None)
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


def wait_finished(irs, cmd, env, cwd):
    """Until the verification of `cmd`'s input has finished (its prefix is then the last)."""
    deadline = time.time() + 300
    while True:
        st = json.loads(subprocess.run([irs, "status", "--json", *cmd], capture_output=True, text=True, env=env, cwd=cwd, stdin=subprocess.DEVNULL).stdout)
        if st["status"] == "finished":
            return st
        if time.time() > deadline:
            raise SystemExit(f"the verification of {cmd} did not finish in 300 s")
        time.sleep(0.5)


def real_program(a):
    d = Path(tempfile.mkdtemp(prefix="irs-run-cost-pigz-"))
    (d / "small.txt").write_text("hello, world\n")
    base_env = {k: v for k, v in os.environ.items() if not k.startswith("IRS_")}

    def build(cc, where):
        shutil.copytree(a.pigz, where, ignore=shutil.ignore_patterns(".git"))
        subprocess.run(["make", "-s", "clean"], cwd=where, capture_output=True)
        subprocess.run(["make", "-s", f"CC={cc}"], cwd=where, check=True, capture_output=True)
        return where / "pigz"

    plain = build("clang-14", d / "plain")
    cfgs = []
    for i, shown in enumerate(a.irs):
        irs = str(Path(shown).resolve())
        env = dict(base_env, IRS_STORE=str(d / f"store{i}"))
        exe = build(f"{irs} cc", d / f"irs{i}")
        cmd = [str(exe), "-c", "small.txt"]
        subprocess.run([irs, "run", "--", *cmd], check=True, env=env, cwd=d, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        st = wait_finished(irs, cmd, env, d)
        assert st["constraints_in_force"] == 0, st
        cfgs.append((irs, cmd, env, shown))
    times = {}
    for _ in range(a.runs):
        for irs, cmd, env, _ in cfgs:
            for what, c in (("plain build", [str(plain), *cmd[1:]]), ("irs build", cmd), ("irs run", [irs, "run", "--", *cmd])):
                times.setdefault((irs, what), []).append(timed(c, env, d))
    print(f"pigz -c small.txt, {a.runs} rounds, interleaved; medians in ms (verification finished, no constraint in force); load average before: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs\n")
    print("| irs | | plain build (clang) | irs build, direct | `irs run` | cost of `irs run` over the plain build | over the irs build |")
    print("|---|---|---|---|---|---|---|")
    for irs, _, _, shown in cfgs:
        for col, name in ((0, "wall"), (1, "CPU")):
            m = {w: statistics.median(x[col] for x in times[(irs, w)]) for w in ("plain build", "irs build", "irs run")}
            print(f"| {shown} | {name} | {m['plain build']:.2f} | {m['irs build']:.2f} | {m['irs run']:.2f} | {m['irs run'] - m['plain build']:.2f} | {m['irs run'] - m['irs build']:.2f} |")
    for irs, cmd, env, _ in cfgs:
        subprocess.run([irs, "forget", cmd[0]], env=env, cwd=d, stdin=subprocess.DEVNULL, capture_output=True)
    shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main()
