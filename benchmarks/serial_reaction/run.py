#!/usr/bin/env python3
"""The cost of the serialised reaction on the IRS paper's programs (benchmarks/irs_paper/*.c).

A serialised run is what irs does with a run no verification covers (`irs run --no-wait` on an
input not verified yet, an input it cannot capture, or a run that leaves the verified trace):
one thread at a time, by the verifier's default policy (keep running the thread that ran last
while it can, else the lowest-numbered thread that can). It is selected on the instrumented
binary by IRS_MODE=enforce IRS_SERIAL=1 (with IRS_DIVERGENCE=serial, as `irs run` sets them).

Configurations per program, each run as a separate process, alternating (the order rotates
round by round):
- plain: `clang-14 -O2 -pthread`; "plain again" is the same binary measured a second time in the
  same rounds (an A/A control: its ratio to plain is the noise);
- OFF: the `irs cc -O2 -pthread` build with no IRS_* variable (no verification, no runtime work
  but the flag checks);
- serialised: the same build with IRS_MODE=enforce IRS_SERIAL=1 IRS_DIVERGENCE=serial.

Each program prints `work_us=N` as its last line (first pthread_create to last join,
CLOCK_MONOTONIC); the table gives its median and the median whole-process wall time
(time.perf_counter around subprocess.run), with ratios to plain. Every run's other output lines
are compared with the plain build's (a run whose output differs is reported), and every run has
a timeout (default 20 s): the busy-waiting programs (dekker, peterson, lamport) could spin for
ever if the thread that spins kept the turn; a run that times out is reported, and after
--max-timeouts of them the configuration is not run again for that program. Those three
programs run --spin-runs times, the others --runs.

    python3 benchmarks/serial_reaction/run.py
    python3 benchmarks/serial_reaction/run.py --runs 30 --only dekker,indexer

Standard library only; results go to benchmarks/results/serial_reaction/results.md.
"""
import argparse, datetime, os, shutil, statistics, subprocess, sys, tempfile, time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from report_tail import finish_report  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
PROGRAMS = REPO / "benchmarks/irs_paper"
SPINNING = {"dekker", "peterson", "lamport"}
BASE_ENV = {k: v for k, v in os.environ.items() if not k.startswith("IRS_")}
CONFIGS = {
    "plain": None,
    "plain again": None,
    "OFF": {},
    "serialised": {"IRS_MODE": "enforce", "IRS_SERIAL": "1", "IRS_DIVERGENCE": "serial"},
}


def sh(cmd):
    r = subprocess.run([str(c) for c in cmd], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"error: {' '.join(map(str, cmd))}: {(r.stderr or r.stdout).strip()[-500:]}")


def med(xs):
    return statistics.median(xs) if xs else float("nan")


def iqr_pct(xs):
    if len(xs) < 4:
        return float("nan")
    q = statistics.quantiles(xs, n=4)
    return 100 * (q[2] - q[0]) / q[1]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--irs", default=str(REPO / "target/release/irs"))
    ap.add_argument("--runs", type=int, default=100, help="runs per configuration")
    ap.add_argument("--spin-runs", type=int, default=50, help="runs per configuration of dekker, peterson and lamport")
    ap.add_argument("--timeout", type=float, default=20, help="per-run timeout, seconds")
    ap.add_argument("--max-timeouts", type=int, default=2, help="stop running a configuration of a program after this many time-outs")
    ap.add_argument("--only", help="comma-separated program names (default: all)")
    ap.add_argument("--out", default=str(REPO / "benchmarks/results/serial_reaction/results.md"))
    a = ap.parse_args()
    names = sorted(p.stem for p in PROGRAMS.glob("*.c") if not a.only or p.stem in a.only.split(","))
    if not names:
        sys.exit(f"error: no programs in {PROGRAMS}")
    cmdline = "python3 benchmarks/serial_reaction/run.py " + " ".join(sys.argv[1:])
    started = datetime.datetime.utcnow()
    load_start = os.getloadavg()
    tmp = Path(tempfile.mkdtemp(prefix="irs-serial-reaction-"))
    work, wall, problems, timeouts, done_runs = {}, {}, [], {}, {}
    try:
        for n in names:
            sh(["clang-14", "-O2", "-pthread", "-o", tmp / f"plain_{n}", PROGRAMS / f"{n}.c"])
            sh([a.irs, "cc", "-O2", "-pthread", "-o", tmp / n, PROGRAMS / f"{n}.c"])
        expected = {}
        rounds = max(a.runs, a.spin_runs if SPINNING & set(names) else 0)
        confs = list(CONFIGS)
        t_start = time.time()
        for rnd in range(rounds):
            for n in names:
                if rnd >= (a.spin_runs if n in SPINNING else a.runs):
                    continue
                for conf in confs[rnd % len(confs):] + confs[:rnd % len(confs)]:
                    if timeouts.get((n, conf), 0) >= a.max_timeouts:
                        continue
                    exe = tmp / (f"plain_{n}" if conf.startswith("plain") else n)
                    env = dict(BASE_ENV, **(CONFIGS[conf] or {}))
                    t = time.perf_counter()
                    try:
                        r = subprocess.run([str(exe)], capture_output=True, text=True, env=env, timeout=a.timeout, stdin=subprocess.DEVNULL)
                    except subprocess.TimeoutExpired:
                        timeouts[(n, conf)] = timeouts.get((n, conf), 0) + 1
                        problems.append(f"{n} {conf}: run {rnd + 1} did not end within {a.timeout:g} s (killed)")
                        continue
                    t = time.perf_counter() - t
                    done_runs[(n, conf)] = done_runs.get((n, conf), 0) + 1
                    lines = r.stdout.strip().split("\n")
                    w = lines[-1] if lines else ""
                    rest = lines[:-1]
                    if conf == "plain" and n not in expected and r.returncode == 0:
                        expected[n] = rest
                    if r.returncode != 0 or not w.startswith("work_us=") or (n in expected and rest != expected[n]) or r.stderr.strip():
                        problems.append(f"{n} {conf} run {rnd + 1}: exit {r.returncode}, stdout `{' / '.join(lines)[:150]}` "
                                        f"(plain: `{' / '.join(expected.get(n, ['?']))}`), stderr `{r.stderr.strip()[:200]}`")
                    if r.returncode == 0 and w.startswith("work_us="):
                        work.setdefault((n, conf), []).append(float(w.split("=")[1]))
                        wall.setdefault((n, conf), []).append(t * 1e3)
        elapsed = time.time() - t_start
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    md = ["# The serialised reaction on the IRS paper's programs\n",
          f"- Command: `{cmdline}`",
          f"- Date: {started:%Y-%m-%d %H:%M} UTC; machine: nproc={os.cpu_count()}, CPU: {cpu}, kernel {os.uname().release}; load average (1 min) {load_start[0]:.2f} at the start, {os.getloadavg()[0]:.2f} at the end; irs: `{a.irs}`",
          f"- Programs: `benchmarks/irs_paper/*.c`, `clang-14 -O2 -pthread` (plain) and `irs cc -O2 -pthread`. "
          f"Configurations: plain; plain again (the same binary again, A/A); OFF (the instrumented build, no IRS_* variable); serialised (IRS_MODE=enforce IRS_SERIAL=1 "
          f"IRS_DIVERGENCE=serial, what `irs run` sets for a run no verification covers).",
          f"- {a.runs} runs per configuration ({a.spin_runs} for dekker, peterson and lamport), each a separate process, alternating "
          f"with the order rotated each round; timeout {a.timeout:g} s per run. Medians; ×plain = median / plain's median; "
          f"IQR % = interquartile range / median. Measuring took {elapsed:.0f} s.\n",
          "## work_us (first create to last join), median µs\n",
          "| program | runs | plain | plain again | ×plain | OFF | ×plain | serialised | ×plain | IQR % plain / plain again / OFF / serialised |",
          "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for n in names:
        row = [n, "/".join(str(done_runs.get((n, c), 0)) for c in confs)]
        pw = med(work.get((n, "plain"), []))
        for c in confs:
            m = med(work.get((n, c), []))
            row.append(f"{m:.1f}")
            if c != "plain":
                row.append(f"{m / pw:.2f}")
        row.append(" / ".join(f"{iqr_pct(work.get((n, c), [])):.0f}" for c in confs))
        md.append("| " + " | ".join(row) + " |")
    md += ["\n## Whole-process wall time, median ms\n",
           "| program | plain | plain again | ×plain | OFF | ×plain | serialised | ×plain |",
           "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for n in names:
        row = [n]
        pl = med(wall.get((n, "plain"), []))
        for c in confs:
            m = med(wall.get((n, c), []))
            row.append(f"{m:.2f}")
            if c != "plain":
                row.append(f"{m / pl:.2f}")
        md.append("| " + " | ".join(row) + " |")
    md.append("\nruns (first table): completed runs of plain / plain again / OFF / serialised.\n")
    finish_report(md, problems, a.out, 60, "## Time-outs, outputs that differ from plain, failures\n")


if __name__ == "__main__":
    main()
