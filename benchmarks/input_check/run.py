#!/usr/bin/env python3
"""The cost of checking a run's input (issue 19): chunked reads of standard input and of a file,
under a verified, fully relaxed input, side by side with the plain build and with IRS before
files were input.

How input works now: `irs run` reads standard input ahead whole and serves the program a sealed
memfd copy, so the runtime intercepts no read at all; a file the program opens for reading is,
under a verified input (`IRS_INPUT_FILES`, the verification's captures), compared with the
capture at the open (the file and the capture are each read once) and the program then reads
the capture.

Programs (built with `clang-14 -O2 -pthread` and `irs cc -O2 -pthread`):
- stdin: tests/programs/inputs/chunks.c: reads standard input in chunks of argv[1] bytes and
  sums the bytes while one worker thread increments a mutex-protected counter 10 times;
  prints `bytes=N sum=S`.
- file: benchmarks/input_check/chunks_file.c: the same, reading the file argv[2] with
  open()+read(); also prints `work_us=` (open to last read, CLOCK_MONOTONIC).

Configurations, alternated round by round (the order rotates each round):
- plain: the plain build (stdin: a data file redirected to it); "plain again" is the same
  binary measured a second time in the same round (an A/A control: its ratio is the noise).
- IRS now (b): the instrumented build run directly as `irs run` runs it under a verified, fully
  relaxed input: IRS_MODE=enforce IRS_PREFIX=<segment> IRS_DIVERGENCE=serial
  IRS_INPUT_FILES=<files_dir> IRS_CAPTURE_LIMIT=16777216 (segment and files_dir from
  `irs status --json` once the input's verification has finished, verdict safe).
- IRS now, OFF: the instrumented build with no IRS_* variable (no prefix, no check): what the
  instrumented binary costs by itself, start-up included.
- IRS now, no check (file only): the same without IRS_INPUT_FILES: the open is not compared
  (what the runtime did before files were input), with this commit's runtime.
- IRS before (d, with --irs-before): the build made by the irs before files were input, run
  the same way (IRS_MODE=enforce IRS_PREFIX=<segment> IRS_DIVERGENCE=serial).

Which verification gives the segment. chunks.c and chunks_file.c do one instrumented load per
byte they sum, and a controlled execution stops at 65,536 events: an input longer than about
60 KiB cannot be verified (the verifier ends with "stopped at the limit of 65536 events", and
`irs run` fails: "no prefix can be anchored on it"). So the SMALL size (default 4 KiB) is
verified end to end, by `irs run --repeat 1` and the background verifier, for each program,
chunk size and irs; its fully relaxed segment (the zero cutoff, published when the
verification finishes safe) is used for the larger sizes too. Under a zero cutoff every thread
runs free from its start, and the runtime never looks at standard input, so for the stdin
program this is exactly the run of a verified larger input. For the file program the capture
of each larger file is the one irs's verifier makes at the first open (its verification is
started by `irs run --no-wait --divergence stop`, the capture copied once written, then
`irs forget`); the run compares the file with it and reads it, as under a verified input. Rows
measured this way are marked "borrowed segment".

(c), a separate table: the whole `irs run --repeat R -- ./prog ARGS` (per run: the command's
wall time / R; it includes irs run's start-up, its read-ahead of stdin into a memfd and, now,
its check of the input's files before each run) against R plain runs started from this
script, at the SMALL size (the only one irs can verify).

Times are whole-process wall times (time.perf_counter around subprocess.run), medians; the
file program's in-program work_us too. Every output is checked against the bytes and sum
computed here, and any stderr output is reported.

    python3 benchmarks/input_check/run.py --irs-before /tmp/irs-before-bin/irs
    python3 benchmarks/input_check/run.py --rounds 5 --sizes 4K,1M     # quicker

The irs before files were input: `git worktree add /tmp/irs-before 6b88e02`, then
`CARGO_TARGET_DIR=/tmp/irs-before/target cargo build --release --workspace` there, and pass its
target/release/irs (its libirs_runtime.a must be next to it). Without --irs-before that column is
skipped. Every verification is made in a store under a temporary directory (IRS_STORE) and
forgotten (`irs forget`) at the end. Standard library only; results go to
benchmarks/results/input_check/results.md.
"""
import argparse, datetime, json, os, random, shutil, statistics, subprocess, sys, tempfile, time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from report_tail import finish_report  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
CHUNKS_C = REPO / "tests/programs/inputs/chunks.c"
FILE_C = HERE / "chunks_file.c"
LIMIT = 16 << 20
# The environment is part of an input: every irs command and run gets this one (no IRS_*).
BASE_ENV = {k: v for k, v in os.environ.items() if not k.startswith("IRS_")}


def die(msg):
    sys.exit(f"error: {msg}")


def parse_size(s):
    s = s.strip().upper()
    mult = {"K": 1 << 10, "M": 1 << 20}.get(s[-1:], 1)
    return int(s[:-1] if s[-1:] in "KM" else s) * mult


def size_name(n):
    return f"{n >> 20} MiB" if n >= 1 << 20 and n % (1 << 20) == 0 else f"{n >> 10} KiB" if n % 1024 == 0 else f"{n} B"


def sh(cmd, **kw):
    r = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kw)
    if r.returncode != 0:
        die(f"{' '.join(map(str, cmd))}: {(r.stderr or r.stdout).strip()[-500:]}")
    return r.stdout


class Irs:
    """One irs build with its own store."""

    def __init__(self, name, exe, store):
        self.name, self.exe, self.store = name, Path(exe), Path(store)
        self.programs = []  # instrumented binaries, to forget at the end

    def env(self):
        return dict(BASE_ENV, IRS_STORE=str(self.store))

    def run(self, args, stdin=None, cwd=None, timeout=600):
        with open(stdin or os.devnull, "rb") as f:
            return subprocess.run([str(self.exe), *map(str, args)], stdin=f, capture_output=True, text=True, env=self.env(), cwd=cwd, timeout=timeout)

    def status(self, prog, args, stdin, cwd):
        r = self.run(["status", "--json", prog, *args], stdin=stdin, cwd=cwd, timeout=60)
        try:
            return json.loads(r.stdout)
        except json.JSONDecodeError:
            die(f"{self.name}: irs status --json {prog} {' '.join(args)}: {r.stderr.strip()[-300:]}")


def this_input(st):
    return next((i for i in st.get("inputs", []) if i.get("this")), None)


def verify(irs, prog, args, stdin, cwd):
    """Start the verification of one input with `irs run --repeat 1` (it waits for the first prefix)."""
    r = irs.run(["run", "--repeat", "1", "--", prog, *args], stdin=stdin, cwd=cwd)
    if r.returncode != 0:
        die(f"{irs.name}: irs run -- {prog} {' '.join(args)}: {r.stderr.strip()[-500:]}")


def wait_finished(jobs, limit):
    """Wait until every (irs, prog, args, stdin, cwd) input's verification has finished; return
    {job index: (segment, files_dir)}. Each must end safe."""
    out, start = {}, time.time()
    while len(out) < len(jobs):
        for k, (irs, prog, args, stdin, cwd) in enumerate(jobs):
            if k in out:
                continue
            st = irs.status(prog, args, stdin, cwd)
            if st["status"] == "finished":
                verdict = (st.get("state") or {}).get("verdict")
                if verdict != "safe":
                    die(f"{irs.name}: the verification of {prog} {' '.join(args)} ended {verdict}: {(st.get('state') or {}).get('error')}")
                me = this_input(st) or {}
                out[k] = (st["segment"], me.get("files_dir"))
            elif st["status"] == "STALE":
                die(f"{irs.name}: the verifier of {prog} {' '.join(args)} died (STALE)")
        if len(out) < len(jobs):
            if time.time() - start > limit:
                die(f"verifications not finished after {limit} s")
            time.sleep(0.3)
    return out


def capture_file(irs, prog, chunk, path, cwd, into, limit=180):
    """irs's own capture of `path`: the verifier of the input (chunk, path) takes it at its first
    open; copy it once written, then forget the program (the verification cannot end: the
    event limit)."""
    r = irs.run(["run", "--no-wait", "--divergence", "stop", "--", prog, str(chunk), path.name], cwd=cwd)
    if r.returncode == 0:
        die(f"{irs.name}: expected `irs run --divergence stop --no-wait` not to run: {r.stderr.strip()}")
    size, start = path.stat().st_size, time.time()
    while True:
        me = this_input(irs.status(prog, [str(chunk), path.name], None, cwd)) or {}
        d = Path(me["files_dir"]) if me.get("files_dir") else None
        datas = [f for f in d.glob("*.data")] if d and d.is_dir() else []
        if datas and datas[0].stat().st_size == size and list(d.glob("*.path")):
            break
        if time.time() - start > limit:
            die(f"no capture of {path} after {limit} s")
        time.sleep(0.2)
    shutil.copytree(d, into)
    forget(irs, prog, cwd)
    data = next(into.glob("*.data"))
    if data.read_bytes() != path.read_bytes() or next(into.glob("*.path")).read_text() != str(path):
        die(f"the capture of {path} in {into} is not the file")
    return into


def forget(irs, prog, cwd):
    r = irs.run(["forget", prog], cwd=cwd, timeout=120)
    return (r.stdout + r.stderr).strip()


def timed(cmd, stdin, env, cwd, timeout=120):
    with open(stdin or os.devnull, "rb") as f:
        t = time.perf_counter()
        r = subprocess.run([str(c) for c in cmd], stdin=f, capture_output=True, text=True, env=env, cwd=cwd, timeout=timeout)
        return time.perf_counter() - t, r


def med(xs):
    return statistics.median(xs) if xs else float("nan")


def iqr_pct(xs):
    if len(xs) < 4:
        return float("nan")
    q = statistics.quantiles(xs, n=4)
    return 100 * (q[2] - q[0]) / q[1]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--irs", default=str(REPO / "target/release/irs"), help="the irs to measure (default: target/release/irs)")
    ap.add_argument("--irs-before", help="the irs before files were input (6b88e02); default: skip that column")
    ap.add_argument("--rounds", type=int, default=15, help="rounds of (b); each runs every configuration once per cell")
    ap.add_argument("--sizes", default="4K,1M,16M", help="data sizes; the first (smallest) is verified end to end")
    ap.add_argument("--chunks", default="64,65536", help="read sizes in bytes")
    ap.add_argument("--repeat", type=int, default=20, help="(c): runs per `irs run --repeat`")
    ap.add_argument("--c-rounds", type=int, default=7, help="(c): rounds")
    ap.add_argument("--wait-limit", type=float, default=300, help="seconds to wait for the verifications")
    ap.add_argument("--out", default=str(REPO / "benchmarks/results/input_check/results.md"))
    ap.add_argument("--keep", action="store_true", help="keep the temporary directory (its verifications are forgotten anyway)")
    a = ap.parse_args()
    sizes = sorted(parse_size(s) for s in a.sizes.split(","))
    chunks = [int(c) for c in a.chunks.split(",")]
    small = sizes[0]
    if small > 48 << 10:
        die("the smallest size must be verifiable end to end (at most 48K: one event per byte, 65,536 events)")
    if sizes[-1] > LIMIT:
        die("sizes above 16M are over irs's capture limit")
    irs_list = [("now", a.irs)] + ([("before", a.irs_before)] if a.irs_before else [])
    for name, exe in irs_list:
        if not Path(exe).is_file() or not (Path(exe).parent / "libirs_runtime.a").is_file():
            die(f"{exe} (with libirs_runtime.a next to it) does not exist")
    cmdline = "python3 benchmarks/input_check/run.py " + " ".join(sys.argv[1:])
    started = datetime.datetime.utcnow()
    load_start = os.getloadavg()
    tmp = Path(tempfile.mkdtemp(prefix="irs-input-check-"))
    irss = {name: Irs(name, exe, tmp / f"store-{name}") for name, exe in irs_list}
    notes, problems = [], []
    try:
        # Data: the same pseudo-random bytes every time.
        data, expect = {}, {}
        for n in sizes:
            p = tmp / f"data_{n}.bin"
            b = random.Random(19 + n).randbytes(n)
            p.write_bytes(b)
            data[n], expect[n] = p, f"bytes={n} sum={sum(b) & 0xffffffff}"
        # Builds.
        progs = {}
        for var, src in [("stdin", CHUNKS_C), ("file", FILE_C)]:
            progs[("plain", var)] = tmp / f"plain_{var}"
            sh(["clang-14", "-O2", "-pthread", "-o", progs[("plain", var)], src])
            for name, irs in irss.items():
                exe = tmp / f"{name}_{var}"
                sh([irs.exe, "cc", "-O2", "-pthread", "-o", exe, src])
                progs[(name, var)] = exe
                irs.programs.append(exe)

        def args_of(var, chunk, n):
            return [str(chunk)] + ([data[n].name] if var == "file" else [])

        def stdin_of(var, n):
            return data[n] if var == "stdin" else None

        # The big files' captures, by irs's verifier (this irs only: the one before had none).
        caps = {}
        for n in sizes[1:]:
            print(f"capturing {size_name(n)} ...", flush=True)
            caps[n] = capture_file(irss["now"], progs[("now", "file")], chunks[-1], data[n], tmp, tmp / f"captures_{n}")
        # Verify the small inputs end to end: every program, chunk and irs.
        jobs = []
        for name, irs in irss.items():
            for var in ["stdin", "file"]:
                for c in chunks:
                    jobs.append((irs, progs[(name, var)], args_of(var, c, small), stdin_of(var, small), tmp))
        print(f"verifying {len(jobs)} inputs of {size_name(small)} ...", flush=True)
        t_verify = time.time()
        for j in jobs:
            verify(*j)
        done = wait_finished(jobs, a.wait_limit)
        if len({d[0] for d in done.values()}) != len(done):
            die("two inputs share a segment (the builds of both irs have the same program id; their input keys must differ)")
        seg, fdir = {}, {}
        for k, (irs, prog, args, _, _) in enumerate(jobs):
            var = "file" if prog.name.endswith("_file") else "stdin"
            seg[(irs.name, var, int(args[0]))] = done[k][0]
            fdir[(irs.name, var, int(args[0]))] = done[k][1]
            notes.append(f"{irs.name}: {prog.name} {' '.join(args)} ({size_name(small)}): verified safe, segment {done[k][0]}")
        notes.append(f"the {len(jobs)} verifications finished {time.time() - t_verify:.0f} s after the first `irs run` began")

        def env_for(name, var, chunk, n, check=True):
            e = dict(BASE_ENV, IRS_MODE="enforce", IRS_PREFIX=seg[(name, var, chunk)], IRS_DIVERGENCE="serial")
            if name == "now":
                e["IRS_CAPTURE_LIMIT"] = str(LIMIT)
                if check:
                    e["IRS_INPUT_FILES"] = fdir[(name, var, chunk)] if (var == "stdin" or n == small) else str(caps[n])
            return e

        # Sanity: the check runs (a changed file is reported), the captured file is served.
        if len(sizes) > 1:
            n, c = sizes[1], chunks[-1]
            orig = data[n].read_bytes()
            data[n].write_bytes(bytes([orig[0] ^ 1]) + orig[1:])
            _, r = timed([progs[("now", "file")], *args_of("file", c, n)], None, env_for("now", "file", c, n), tmp)
            data[n].write_bytes(orig)
            msg = r.stderr.strip().splitlines()
            notes.append(f"sanity: with one byte of the {size_name(n)} file changed, the run under the check printed "
                         f"`{msg[0] if msg else '(nothing)'}`{' ...' if len(msg) > 1 else ''} (exit {r.returncode})")

        # (b): every cell, every configuration, alternating.
        configs = {"stdin": ["plain", "plain again", "now, OFF", "now"] + (["before"] if "before" in irss else []),
                   "file": ["plain", "plain again", "now, OFF", "now", "now, no check"] + (["before"] if "before" in irss else [])}
        cells = [(var, n, c) for var in ["stdin", "file"] for n in sizes for c in chunks]
        wall, work = {}, {}
        print(f"(b): {a.rounds} rounds of {sum(len(configs[v]) for v, _, _ in cells)} runs ...", flush=True)
        for rnd in range(a.rounds):
            for var, n, c in cells:
                cf = configs[var]
                for conf in cf[rnd % len(cf):] + cf[:rnd % len(cf)]:
                    if conf.startswith("plain"):
                        exe, env = progs[("plain", var)], BASE_ENV
                    elif conf == "now, OFF":
                        exe, env = progs[("now", var)], BASE_ENV
                    elif conf == "now, no check":
                        exe, env = progs[("now", var)], env_for("now", var, c, n, check=False)
                    else:
                        exe, env = progs[(conf, var)], env_for(conf, var, c, n)
                    t, r = timed([exe, *args_of(var, c, n)], stdin_of(var, n), env, tmp)
                    lines = r.stdout.split("\n")
                    if r.returncode != 0 or lines[0] != expect[n] or r.stderr.strip():
                        problems.append(f"(b) {var} {size_name(n)} chunk {c} {conf}: exit {r.returncode}, stdout `{lines[0]}` (expected `{expect[n]}`), stderr `{r.stderr.strip()[:200]}`")
                    wall.setdefault((var, n, c, conf), []).append(t * 1e3)
                    if var == "file":
                        w = [l for l in lines if l.startswith("work_us=")]
                        if w:
                            work.setdefault((var, n, c, conf), []).append(int(w[0].split("=")[1]) / 1e3)
            print(f"  round {rnd + 1}/{a.rounds}", flush=True)

        # (c): the whole irs run --repeat R against R plain runs, at the small size.
        ccells = [(var, c) for var in ["stdin", "file"] for c in chunks]
        cconfs = ["plain"] + list(irss)
        whole = {}
        print(f"(c): {a.c_rounds} rounds ...", flush=True)
        for rnd in range(a.c_rounds):
            for var, c in ccells:
                for conf in cconfs[rnd % len(cconfs):] + cconfs[:rnd % len(cconfs)]:
                    args = args_of(var, c, small)
                    if conf == "plain":
                        total = 0.0
                        for _ in range(a.repeat):
                            t, r = timed([progs[("plain", var)], *args], stdin_of(var, small), BASE_ENV, tmp)
                            total += t
                            if r.returncode != 0 or r.stdout.split("\n")[0] != expect[small]:
                                problems.append(f"(c) plain {var} chunk {c}: exit {r.returncode}, `{r.stdout.strip()[:80]}`")
                    else:
                        irs = irss[conf]
                        with open(stdin_of(var, small) or os.devnull, "rb") as f:
                            t0 = time.perf_counter()
                            r = subprocess.run([str(irs.exe), "run", "--repeat", str(a.repeat), "--", str(progs[(conf, var)]), *args],
                                               stdin=f, capture_output=True, text=True, env=irs.env(), cwd=tmp, timeout=600)
                            total = time.perf_counter() - t0
                        outs = [l for l in r.stdout.split("\n") if l.startswith("bytes=")]
                        runs = [l for l in r.stderr.split("\n") if l.startswith("irs run ")]
                        verified = [l for l in runs if "constraints in force" in l]
                        if r.returncode != 0 or outs != [expect[small]] * a.repeat or len(verified) != a.repeat:
                            problems.append(f"(c) {conf} {var} chunk {c}: exit {r.returncode}, {len(outs)} right outputs, "
                                            f"{len(verified)} of {len(runs)} runs under a verification; stderr `{r.stderr.strip()[-300:]}`")
                    whole.setdefault((var, c, conf), []).append(total / a.repeat * 1e3)
            print(f"  round {rnd + 1}/{a.c_rounds}", flush=True)
    finally:
        for irs in irss.values():
            for p in irs.programs:
                if p.exists():
                    notes.append(f"cleanup: {irs.name}: {forget(irs, p, tmp)}")
        left = subprocess.run(["pgrep", "-af", f"irs worker -- {tmp}"], capture_output=True, text=True).stdout.strip()
        if left:
            problems.append(f"irs workers left running: {left}")
        if not a.keep:
            shutil.rmtree(tmp, ignore_errors=True)

    # The report.
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    before = "before" in irss
    md = [f"# The cost of checking a run's input (issue 19)\n",
          f"- Command: `{cmdline}`",
          f"- Date: {started:%Y-%m-%d %H:%M} UTC; machine: nproc={os.cpu_count()}, CPU: {cpu}, kernel {os.uname().release}; load average (1 min) {load_start[0]:.2f} at the start, {os.getloadavg()[0]:.2f} at the end",
          f"- irs now: `{a.irs}`" + (f"; irs before (files not yet input): `{a.irs_before}`" if before else "; irs before: not measured (no --irs-before)"),
          f"- Programs: `tests/programs/inputs/chunks.c` (stdin) and `benchmarks/input_check/chunks_file.c` (open()+read() of a file), "
          f"`clang-14 -O2 -pthread` (plain) and `irs cc -O2 -pthread`; data: pseudo-random bytes in a file in a temporary directory (page cache).",
          f"- (b): {a.rounds} rounds; in each, every configuration of every cell ran once as a separate process, the order rotated each round. "
          f"Medians of whole-process wall times (`time.perf_counter` around `subprocess.run`), ms; ×plain = median / plain's median. "
          f"\"plain again\" is the plain build measured a second time in the same rounds (A/A: the noise).",
          f"- The {size_name(small)} rows are verified end to end (`irs run`, background verifier, finished safe); larger inputs cannot be "
          f"verified by irs (one event per byte summed; 65,536 events per execution), so their rows run under the {size_name(small)} input's "
          f"fully relaxed segment (borrowed segment, †), and the file's capture is the one irs's verifier took of it (see run.py's docstring).\n"]
    for var, title in [("stdin", "standard input (chunks.c): whole-process wall time"), ("file", "a file (chunks_file.c): whole-process wall time")]:
        cf = configs[var]
        md.append(f"## (b) {title}, median ms\n")
        head = "| size | chunk | reads | " + " | ".join(f"{c}" + ("" if c == "plain" else " | ×plain") for c in cf) + " | IQR % (plain / now) |"
        md += [head, "|" + " --- |" * 3 + " ---: |" * (2 * len(cf) - 1 + 1)]
        for n in sizes:
            for c in chunks:
                base = med(wall[(var, n, c, "plain")])
                row = [size_name(n) + ("" if n == small else " †"), str(c), f"{-(-n // c):,}"]
                for conf in cf:
                    m = med(wall[(var, n, c, conf)])
                    row.append(f"{m:.2f}")
                    if conf != "plain":
                        row.append(f"{m / base:.2f}")
                row.append(f"{iqr_pct(wall[(var, n, c, 'plain')]):.0f} / {iqr_pct(wall[(var, n, c, 'now')]):.0f}")
                md.append("| " + " | ".join(row) + " |")
        md.append("")
    cf = configs["file"]
    md.append("## (b) a file (chunks_file.c): in-program work_us (open to last read), median ms\n")
    md += ["| size | chunk | " + " | ".join(f"{c}" + ("" if c == "plain" else " | ×plain") for c in cf) + " |",
           "|" + " --- |" * 2 + " ---: |" * (2 * len(cf) - 1)]
    for n in sizes:
        for c in chunks:
            base = med(work[("file", n, c, "plain")])
            row = [size_name(n) + ("" if n == small else " †"), str(c)]
            for conf in cf:
                m = med(work.get(("file", n, c, conf), []))
                row.append(f"{m:.3f}")
                if conf != "plain":
                    row.append(f"{m / base:.2f}")
            md.append("| " + " | ".join(row) + " |")
    md.append("")
    md.append(f"## (c) the whole `irs run --repeat {a.repeat}` per run, against {a.repeat} plain runs, {size_name(small)}, median ms per run\n")
    md.append(f"{a.c_rounds} rounds, alternating. The irs run figure includes irs run's own start-up (once per command), its read-ahead of "
              f"stdin into a memfd, and its check of the input's files before each run; plain runs are started from Python.\n")
    md += ["| program | chunk | plain | " + " | ".join(f"irs run {n} | ×plain" for n in irss) + " |", "| --- | --- | ---: |" + " ---: | ---: |" * len(irss)]
    for var, c in ccells:
        base = med(whole[(var, c, "plain")])
        md.append(f"| {var} | {c} | {base:.2f} | " + " | ".join(f"{med(whole[(var, c, n)]):.2f} | {med(whole[(var, c, n)]) / base:.2f}" for n in irss) + " |")
    md.append("\n## Notes\n")
    md += [f"- {n}" for n in notes]
    finish_report(md, problems, a.out, 50, "\n## Problems (outputs that differ from plain, stderr output, failures)\n")


if __name__ == "__main__":
    main()
