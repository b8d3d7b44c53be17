#!/usr/bin/env python3
"""OFF-mode overhead benchmark for `irs cc`.

Builds a C program twice (plain clang-14 and `irs cc`), runs the two binaries
alternately, parses the `work_us=<N>` line each run prints last, checks that
both builds print the same result, and writes a Markdown report.

Standard library only.  Run from anywhere; default paths are relative to the
repository root (two directories above this file).
"""

import argparse
import datetime
import os
import platform
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
CLANG = "clang-14"
CFLAGS = ["-O2", "-pthread"]
WORK_RE = re.compile(r"^work_us=(\d+)\s*$")
RUN_TIMEOUT_S = 300
BUILD_TIMEOUT_S = 600


class BenchError(Exception):
    pass


def one_line(text, limit=300):
    """Last non-empty line of some (stderr) text, trimmed, for error messages."""
    lines = [l.strip() for l in (text or "").splitlines() if l.strip()]
    if not lines:
        return ""
    line = lines[-1]
    return line if len(line) <= limit else line[:limit] + "..."


def first_error(text):
    """The first compiler-style error line of some stderr, else its last line."""
    for l in (text or "").splitlines():
        if "error" in l.lower():
            return one_line(l)
    return one_line(text)


def repo_path(p):
    p = Path(p)
    return p if p.is_absolute() else REPO_ROOT / p


def user_path(p, default):
    """An explicitly given path is relative to the cwd; a default one to the repo root."""
    if p is None:
        return repo_path(default)
    return Path(p).resolve()


def off_mode_env():
    """The environment for runs: no IRS_* variable, so the runtime stays OFF."""
    return {k: v for k, v in os.environ.items() if not k.upper().startswith("IRS")}


def build(name, cmd, out):
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=BUILD_TIMEOUT_S)
    except FileNotFoundError as e:
        raise BenchError(f"{name} build failed: cannot execute {cmd[0]}: {e.strerror}")
    except subprocess.TimeoutExpired:
        raise BenchError(f"{name} build timed out after {BUILD_TIMEOUT_S}s: {shlex.join(cmd)}")
    if r.returncode != 0:
        raise BenchError(
            f"{name} build failed (exit {r.returncode}): {shlex.join(cmd)}: {first_error(r.stderr)}"
        )
    if not out.is_file() or not os.access(out, os.X_OK):
        raise BenchError(f"{name} build produced no executable at {out}: {shlex.join(cmd)}")


def run_once(name, exe, args, env):
    cmd = [str(exe)] + args
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=RUN_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise BenchError(f"{name} run timed out after {RUN_TIMEOUT_S}s")
    if r.returncode != 0:
        detail = one_line(r.stderr) or f"stdout: {one_line(r.stdout)}"
        raise BenchError(f"{name} run failed (exit {r.returncode}): {detail}")
    lines = r.stdout.splitlines()
    while lines and not lines[-1].strip():
        lines.pop()
    m = WORK_RE.match(lines[-1]) if lines else None
    if not m:
        last = lines[-1] if lines else "<no output>"
        raise BenchError(f"{name} run: last stdout line is not work_us=<N>: {last!r}")
    # Everything the program prints before work_us is its result ("checksum").
    return int(m.group(1)), "\n".join(lines[:-1])


def stats(xs):
    return {
        "median": statistics.median(xs),
        "min": min(xs),
        "max": max(xs),
        "mean": statistics.fmean(xs),
        "stdev": statistics.stdev(xs) if len(xs) > 1 else 0.0,
    }


def cmd_output(cmd):
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
        return (r.stdout or r.stderr).strip()
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def loadavg():
    try:
        with open("/proc/loadavg") as f:
            return " ".join(f.read().split()[:3])
    except OSError:
        return "unknown"


def git_state():
    head = cmd_output(["git", "-C", str(REPO_ROOT), "rev-parse", "--short", "HEAD"])
    dirty = cmd_output(["git", "-C", str(REPO_ROOT), "status", "--porcelain", "--untracked-files=no"])
    return head + (" with uncommitted changes" if dirty and dirty != "unknown" else "")


def fmt_ms(us):
    return f"{us / 1000:.1f}"


def summarise_result(text):
    text = text.strip()
    if not text:
        return "(empty)"
    if "\n" in text or len(text) > 120:
        return f"{len(text.splitlines())} lines, identical in every run"
    return f"`{text}`"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--irs", help="path to the irs binary (default: target/release/irs in the repo)")
    ap.add_argument("--program", help="C file to benchmark (default: memheavy.c beside this script)")
    ap.add_argument("--runs", type=int, default=31, help="timed runs of each binary (default 31)")
    ap.add_argument("--warmup", type=int, default=1,
                    help="untimed runs of each binary first (default 1)")
    ap.add_argument("--out", help="Markdown results file (default: benchmarks/results/off_overhead.md)")
    ap.add_argument("--keep", action="store_true", help="keep the build directory and print its path")
    ap.add_argument("args", nargs="*", help="arguments passed to the program on each run")
    a = ap.parse_args()

    if a.runs < 1:
        raise BenchError("--runs must be at least 1")
    if a.warmup < 0:
        raise BenchError("--warmup must not be negative")
    irs = user_path(a.irs, "target/release/irs")
    program = user_path(a.program, HERE / "memheavy.c")
    out = user_path(a.out, "benchmarks/results/off_overhead.md")
    if not program.is_file():
        raise BenchError(f"program not found: {program}")
    if not irs.is_file():
        raise BenchError(f"irs binary not found: {irs} (build it, or pass --irs PATH)")
    if shutil.which(CLANG) is None:
        raise BenchError(f"{CLANG} not found on PATH")

    load_before = loadavg()
    irs_mtime = datetime.datetime.fromtimestamp(irs.stat().st_mtime, datetime.timezone.utc)
    tmp = Path(tempfile.mkdtemp(prefix="irs-off-overhead-"))
    try:
        plain_exe = tmp / "plain"
        instr_exe = tmp / "instrumented"
        plain_cmd = [CLANG] + CFLAGS + [str(program), "-o", str(plain_exe)]
        instr_cmd = [str(irs), "cc"] + CFLAGS + [str(program), "-o", str(instr_exe)]
        build("plain", plain_cmd, plain_exe)
        build("instrumented", instr_cmd, instr_exe)

        env = off_mode_env()
        progress = sys.stderr.isatty()
        names = ("plain", "instrumented")
        exes = {"plain": plain_exe, "instrumented": instr_exe}
        times = {n: [] for n in names}
        results = {n: set() for n in names}

        for i in range(a.warmup + a.runs):
            for n in names:  # alternate: plain, instrumented, plain, ...
                us, res = run_once(n, exes[n], a.args, env)
                results[n].add(res)
                if i >= a.warmup:
                    times[n].append(us)
            if i >= a.warmup and progress:
                done = i - a.warmup + 1
                print(f"\rrun {done}/{a.runs}: plain {times['plain'][-1]} us, "
                      f"instrumented {times['instrumented'][-1]} us  ", end="", file=sys.stderr)
        if progress:
            print(file=sys.stderr)

        for n in names:
            if len(results[n]) != 1:
                raise BenchError(f"{n} build printed {len(results[n])} different results across runs")
        (p_res,), (i_res,) = results["plain"], results["instrumented"]
        if p_res != i_res:
            raise BenchError(
                f"checksums differ: plain {one_line(p_res)!r} vs instrumented {one_line(i_res)!r}"
            )
    finally:
        if a.keep:
            print(f"builds kept in {tmp}", file=sys.stderr)
        else:
            shutil.rmtree(tmp, ignore_errors=True)

    load_after = loadavg()
    sp, si = stats(times["plain"]), stats(times["instrumented"])
    ratio = si["median"] / sp["median"] if sp["median"] else float("nan")
    ratio_min = si["min"] / sp["min"] if sp["min"] else float("nan")

    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
    command = "python3 " + shlex.join([os.path.relpath(sys.argv[0])] + sys.argv[1:])
    try:
        prog_shown = program.relative_to(REPO_ROOT)
    except ValueError:
        prog_shown = program
    irs_version = cmd_output([str(irs), "--version"]).splitlines()
    clang_version = cmd_output([CLANG, "--version"]).splitlines()

    def row(n, s):
        return (f"| {n} | {fmt_ms(s['median'])} | {fmt_ms(s['min'])} | {fmt_ms(s['max'])} "
                f"| {fmt_ms(s['mean'])} | {fmt_ms(s['stdev'])} |")

    md = [
        "# OFF-mode overhead of `irs cc`",
        "",
        f"- Date: {now}",
        f"- Command (from `{os.getcwd()}`): `{command}`",
        f"- Program: `{prog_shown}`" + (f" with arguments `{shlex.join(a.args)}`" if a.args else ""),
        f"- Machine: nproc={cmd_output(['nproc'])}, CPU: {cpu_model()}, kernel: {platform.release()}",
        f"- Load average (1/5/15 min): {load_before} before, {load_after} after",
        f"- Compiler: {clang_version[0] if clang_version else 'unknown'}",
        f"- irs: `{irs}`" + (f" ({irs_version[0]})" if irs_version and irs_version[0] != "unknown" else "")
        + f", binary built {irs_mtime.strftime('%Y-%m-%d %H:%M:%S UTC')}; repository at {git_state()}",
        f"- Plain build: `{shlex.join([CLANG] + CFLAGS + [prog_shown.name, '-o', 'plain'])}`",
        f"- Instrumented build: `{shlex.join(['irs', 'cc'] + CFLAGS + [prog_shown.name, '-o', 'instrumented'])}`",
        f"- Runs: {a.runs} timed runs of each binary, alternating plain/instrumented, after "
        f"{a.warmup} untimed warm-up run(s) of each; no `IRS*` variable in the environment (OFF mode).",
        f"- Result (checksum), identical in every run of both builds: {summarise_result(p_res)}",
        "",
        "Work time (the program's own `work_us`, threaded part only), in milliseconds:",
        "",
        "| build | median | min | max | mean | stdev |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
        row("plain", sp),
        row("instrumented", si),
        "",
        f"**Ratio of medians (instrumented / plain): {ratio:.3f}** "
        f"(overhead {100 * (ratio - 1):+.1f}%; ratio of minimums {ratio_min:.3f})",
        "",
    ]
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(md) + "\n")
    print(f"plain median {fmt_ms(sp['median'])} ms, instrumented median {fmt_ms(si['median'])} ms, "
          f"ratio {ratio:.3f}; wrote {out}")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BenchError as e:
        print(f"error: {e}", file=sys.stderr)
        sys.exit(1)
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        sys.exit(130)
