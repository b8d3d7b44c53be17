#!/usr/bin/env python3
"""Real programs as a benchmark: build, run, `irs run` and `irs verify` over real, widely used
open-source C programs that use threads, checked out outside this repository.

The programs are not part of this repository (never commit their code or binaries): fetch them
anywhere outside it and pass each checkout by path; a program whose path is not given is
skipped, and the table says so. irs defaults to target/release/irs.

    python3 benchmarks/real/run.py --pigz /tmp/real/pigz --thpool /tmp/real/C-Thread-Pool \\
        --threadpool /tmp/real/threadpool --chan /tmp/real/chan
    python3 benchmarks/real/run.py --only pigz,chan --verify-time 10 --reps 3 ...

The programs and their own tests (see benchmarks/real/README.md):
  * pigz (madler/pigz, parallel gzip): `make CC=...`; commands of its `make test` and the
    issue's shapes (compress in place, from stdin as a file and as a pipe, decompress);
  * C-Thread-Pool (Pithikos/C-Thread-Pool): example.c as its README builds it, the test
    programs of tests/src/ as tests/funcs.sh compiles them, with the arguments of tests/*.sh;
  * threadpool (mbrossard/threadpool): `make CC=...` (tests and libraries), its `make test`;
  * chan (tylertreat/chan, Go-like channels, a work queue): `make -f Makefile.orig CC=... test
    example`, its test and its four examples.

Each is built twice from a copy of the checkout, unchanged: with clang-14 (`--cc`) and with
`irs cc` as CC. Each test then runs, every run in its own scratch directory under --scratch
(the data it needs copied in, times kept, so that the input is the same for every mode):
  1. plain:    the clang build;
  2. direct:   the irs build run directly (no `irs run`: the runtime's default mode);
  3. irs run:  `irs run --wait-limit W -- EXE ARGS` (starts the background verifier, waits for
               its first prefix); then --reps repetitions interleaving plain, direct and
               `irs run` (the same scratch path each time, reset between runs, so `irs run`
               sees the same input) for the overhead ratios (medians); then `irs status --json`
               for the verification's state, and `irs forget EXE` (the harness checks that no
               process and no segment of it is left);
  4. verify:   `irs verify --json --time-limit T -- EXE ARGS` in a scratch copy of the data.
Outputs are compared with the plain build's: exit code, standard output (exactly, or for a
test whose output order or thread ids vary by schedule, as sorted lines with numbers masked)
and every file in the scratch directory (byte for byte, e.g. pigz's .gz). The scratch
directories are compared again after the background verifier and after `irs verify` ran:
the verifier of today performs explored executions' file writes for real.

Every command has a timeout (a hang is reported as such and its process group killed) and a
memory guard: a process started here (found by the scratch path in its command line or
environment) whose RSS passes --mem-limit-gb is killed and reported. The environment of every
run is fixed and small (PATH, HOME, LANG, TMPDIR, IRS_STORE under the scratch directory), so
that `irs run`'s input does not depend on the shell that ran this script.

Writes benchmarks/results/real/results.md (or --out) and results.json beside it.
Python 3 standard library only.
"""
import argparse, datetime, hashlib, json, os, platform, re, shlex, shutil, signal, statistics
import subprocess, sys, threading, time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]

# ---------------------------------------------------------------------------------------------
# Programs and their tests.

class Case:
    """One test of a program: a command run in a scratch directory holding `data`."""
    def __init__(self, name, argv, data=(), stdin=None, norm="exact", timeout=None, reps=None,
                 origin="", leaks=False, ignore=None):
        self.name, self.argv, self.data = name, list(argv), list(data)
        self.stdin = stdin          # None | ("file", name) | ("pipe", name)
        # how stdout is compared: "exact"; "sorted" (lines in any order); "masked" (that, with
        # numbers masked: thread ids); "set" (the set of masked lines: a test whose number of
        # lines depends on the schedule)
        self.norm = norm
        self.timeout = timeout      # the plain build's bound (default 60 s); the other modes'
                                    # is max(20 s, 4 x plain + 10 s): a run past it hangs
        self.reps = reps            # overhead repetitions (None: --reps)
        self.origin = origin        # where the test comes from in the program's own files
        self.leaks = leaks          # also the program's leak test: valgrind's allocs == frees
        self.ignore = ignore        # a regex: stdout lines not compared (schedule-dependent)


class Program:
    def __init__(self, key, flag, title, build, cases, prepare=None, fallback=None):
        self.key, self.flag, self.title = key, flag, title
        self.build = build          # function(cc) -> list of (argv, cwd-relative) build steps
        self.cases = cases          # function() -> list of Case
        self.prepare = prepare      # function(plain_build_dir, data_dir) -> None
        # (why, function(cc) -> steps): a changed build, used only when the unchanged one
        # gives binaries without irs instrumentation, and said so in the table
        self.fallback = fallback


def pigz_build(cc):
    return [(["make", f"CC={cc}"], ".")]

def pigz_prepare(plain, data):
    src = (plain / "pigz.c").read_bytes()
    (data / "pigz.c").write_bytes(src)
    (data / "small.txt").write_bytes(src[:1024])
    # the .gz the decompression test reads: made by the plain build, as `make test` does
    tmp = data / "gz"
    tmp.mkdir(exist_ok=True)
    shutil.copy2(data / "pigz.c", tmp / "pigz.c")
    subprocess.run([str(plain / "pigz"), "-kf", "pigz.c"], cwd=tmp, check=True)
    shutil.copy2(tmp / "pigz.c.gz", data / "pigz.c.gz")
    shutil.rmtree(tmp)

def pigz_cases():
    return [
        Case("-kf pigz.c", ["./pigz", "-kf", "pigz.c"], data=["pigz.c"],
             origin="make test (180 KB: two blocks, compressed in parallel)"),
        Case("-kfp 1 pigz.c", ["./pigz", "-kfp", "1", "pigz.c"], data=["pigz.c"],
             origin="make test"),
        Case("small.txt (in place)", ["./pigz", "small.txt"], data=["small.txt"],
             origin="compress 1 KB in place: writes small.txt.gz, removes small.txt"),
        Case("-c < small.txt", ["./pigz", "-c"], data=["small.txt"], stdin=("file", "small.txt"),
             origin="stdin a regular file, gzip to stdout"),
        Case("-c <(pipe) small.txt", ["./pigz", "-c"], data=["small.txt"],
             stdin=("pipe", "small.txt"), origin="stdin a pipe, gzip to stdout"),
        Case("-dc pigz.c.gz", ["./pigz", "-dc", "pigz.c.gz"], data=["pigz.c.gz"],
             origin="decompress to stdout"),
    ]

def thpool_build(cc):
    steps = [([*shlex.split(cc), "example.c", "thpool.c", "-D", "THPOOL_DEBUG", "-pthread", "-o",
               "example"], ".")]
    for t in ["api", "conc_increment", "no_work", "nonzero_heap_stack", "pause_resume", "wait"]:
        # tests/funcs.sh's compile line, one binary per test instead of one `test`
        steps.append(([*shlex.split(cc), f"src/{t}.c", "../thpool.c", "-D", "THPOOL_DEBUG",
                       "-pthread", "-o", t], "tests"))
    return steps

def thpool_cases():
    return [
        Case("example", ["./example"], norm="masked", origin="example.c (README)"),
        Case("conc_increment 100 4", ["./tests/conc_increment", "100", "4"],
             origin="tests/threadpool.sh"),
        Case("conc_increment 1000 8", ["./tests/conc_increment", "1000", "8"],
             origin="tests/threadpool.sh shape, smaller than its 100000 1000"),
        Case("no_work 4", ["./tests/no_work", "4"], reps=2, leaks=True,
             origin="tests/memleaks.sh (valgrind: as many frees as allocs)"),
        Case("nonzero_heap_stack", ["./tests/nonzero_heap_stack"], norm="masked",
             ignore=r"^Thread #", origin="tests/heap_stack_garbage.sh (thpool_destroy drops "
             "queued tasks: how many run, 0 to 20, depends on the schedule; their lines are not "
             "compared)"),
        Case("wait 4 4 0", ["./tests/wait", "4", "4", "0"], reps=2, origin="tests/wait.sh"),
        Case("api", ["./tests/api"], reps=1, ignore=r"^SLEPT$",
             origin="tests/api.sh (main returns 2 s in, as the first pool's 2-second jobs end: "
             "how many print SLEPT, 0 to 4, depends on the timing; their lines are not compared)"),
        Case("pause_resume 4", ["./tests/pause_resume", "4"], reps=1, timeout=30,
             origin="tests/pause_resume.sh (SIGUSR1 pauses the workers)"),
    ]

def threadpool_build(cc):
    return [(["make", f"CC={cc}"], ".")]

def threadpool_cases():
    return [
        Case("shutdown", ["./tests/shutdown"], reps=2, origin="make test"),
        Case("thrdtest", ["./tests/thrdtest"], reps=2, origin="make test"),
        Case("heavy", ["./tests/heavy"], reps=2, origin="make test"),
    ]

def chan_build(cc):
    return [(["make", "-f", "Makefile.orig", f"CC={cc}", "test", "example"], ".")]

CHAN_FALLBACK = ("CFLAGS of Makefile.orig without its `-v` (`irs cc -v` passes through to clang "
                 "uninstrumented)",
                 lambda cc: [(["make", "-f", "Makefile.orig", f"CC={cc}",
                               "CFLAGS=-Ideps -pedantic -std=c99 -Wall -Wextra -lpthread -lrt -O2",
                               "test", "example"], ".")])

def chan_cases():
    return [
        Case("chan_test", ["./test"], origin="make -f Makefile.orig check"),
        Case("buffered", ["./build/examples/buffered"], origin="examples/buffered.c"),
        Case("unbuffered", ["./build/examples/unbuffered"], origin="examples/unbuffered.c"),
        Case("close", ["./build/examples/close"], norm="sorted", origin="examples/close.c"),
        Case("select", ["./build/examples/select"], origin="examples/select.c"),
    ]

PROGRAMS = [
    Program("pigz", "pigz", "pigz (parallel gzip)", pigz_build, pigz_cases, pigz_prepare),
    Program("thpool", "thpool", "C-Thread-Pool", thpool_build, thpool_cases),
    Program("threadpool", "threadpool", "threadpool (mbrossard)", threadpool_build,
            threadpool_cases),
    Program("chan", "chan", "chan (channels / work queue)", chan_build, chan_cases,
            fallback=CHAN_FALLBACK),
]

# ---------------------------------------------------------------------------------------------
# Processes: timeouts and the memory guard.

class Guard:
    """Samples the RSS of every process started here (its command line or environment holds the
    scratch root) twice a second: the peak of the largest one per phase, and a kill for one
    over the limit."""
    def __init__(self, root, limit_kb):
        self.root = str(root).encode()
        self.limit_kb = limit_kb
        self.lock = threading.Lock()
        self.phase, self.peak_kb, self.killed = None, 0, []
        self.stop = False
        self.me = os.getpid()
        threading.Thread(target=self.loop, daemon=True).start()

    def begin(self, phase):
        with self.lock:
            self.phase, self.peak_kb, self.killed = phase, 0, []

    def end(self):
        with self.lock:
            r = (self.peak_kb, list(self.killed))
            self.phase = None
            return r

    def ours(self):
        out = []
        for d in os.listdir("/proc"):
            if not d.isdigit() or int(d) == self.me:
                continue
            try:
                cmd = Path(f"/proc/{d}/cmdline").read_bytes()
                if self.root not in cmd:
                    env = Path(f"/proc/{d}/environ").read_bytes()
                    if self.root not in env:
                        continue
                out.append((int(d), cmd.replace(b"\0", b" ").decode(errors="replace").strip()))
            except OSError:
                continue
        return out

    @staticmethod
    def rss_kb(pid):
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        except (OSError, ValueError):
            pass
        return 0

    def loop(self):
        while not self.stop:
            procs = self.ours()
            for pid, cmd in procs:
                kb = self.rss_kb(pid)
                with self.lock:
                    self.peak_kb = max(self.peak_kb, kb)
                if kb > self.limit_kb:
                    try:
                        os.kill(pid, signal.SIGKILL)
                        with self.lock:
                            self.killed.append(f"pid {pid} at {kb // 1024} MB: {cmd[:120]}")
                    except OSError:
                        pass
            time.sleep(0.5)


def run(argv, cwd, env, stdin=None, timeout=60):
    """Runs argv in its own process group; stdin is None, ("file", path) or ("pipe", bytes)."""
    t0 = time.monotonic()
    fin, data = subprocess.DEVNULL, None
    if stdin and stdin[0] == "file":
        fin = open(stdin[1], "rb")
    elif stdin and stdin[0] == "pipe":
        fin, data = subprocess.PIPE, stdin[1]
    try:
        p = subprocess.Popen(argv, cwd=cwd, env=env, stdin=fin, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, start_new_session=True)
    except OSError as e:
        return {"rc": None, "out": b"", "err": str(e).encode(), "wall": 0.0, "timeout": False}
    timed_out = False
    try:
        out, err = p.communicate(input=data, timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except OSError:
            pass
        out, err = p.communicate()
    wall = time.monotonic() - t0
    if fin not in (subprocess.DEVNULL, subprocess.PIPE):
        fin.close()
    return {"rc": p.returncode, "out": out, "err": err, "wall": wall, "timeout": timed_out}


def tail(b, n=3, width=300):
    lines = [l for l in b.decode(errors="replace").splitlines() if l.strip()]
    return " | ".join(lines[-n:])[-width:]

# ---------------------------------------------------------------------------------------------
# Scratch directories and comparisons.

def snapshot(d):
    """Every file under d: relative path -> sha256 (directories as '<dir>')."""
    snap = {}
    for root, dirs, files in os.walk(d):
        for x in dirs:
            snap[os.path.relpath(os.path.join(root, x), d)] = "<dir>"
        for x in files:
            p = os.path.join(root, x)
            try:
                snap[os.path.relpath(p, d)] = hashlib.sha256(Path(p).read_bytes()).hexdigest()[:16]
            except OSError:
                snap[os.path.relpath(p, d)] = "<unreadable>"
    return snap

def snap_diff(a, b):
    """What changed from snapshot a to b, in words ('' if nothing)."""
    parts = []
    gone = sorted(set(a) - set(b))
    new = sorted(set(b) - set(a))
    changed = sorted(k for k in set(a) & set(b) if a[k] != b[k])
    if gone:
        parts.append("removed " + ", ".join(gone))
    if new:
        parts.append("created " + ", ".join(new))
    if changed:
        parts.append("changed " + ", ".join(changed))
    return "; ".join(parts)

def reset_dir(d, data_dir, names):
    if d.exists():
        shutil.rmtree(d)
    d.mkdir(parents=True)
    for n in names:
        shutil.copy2(data_dir / n, d / n)

def normalise(out, norm, ignore=None):
    if norm == "exact" and not ignore:
        return out
    lines = out.decode(errors="replace").splitlines()
    if ignore:
        lines = [l for l in lines if not re.search(ignore, l)]
    if norm == "exact":
        return "\n".join(lines).encode()
    if norm in ("masked", "set"):
        lines = [re.sub(r"\d+", "N", l) for l in lines]
    if norm == "set":
        lines = set(lines)
    return "\n".join(sorted(lines)).encode()

def same_as(plain, r, norm, plain_files, files, ignore=None):
    """'' when r matches plain (exit code, stdout, files), else what differs."""
    if r["timeout"]:
        return f"TIMEOUT after {r['wall']:.0f} s (hang)"
    diffs = []
    if r["rc"] != plain["rc"]:
        diffs.append(f"exit {r['rc']} (plain {plain['rc']})")
    if normalise(r["out"], norm, ignore) != normalise(plain["out"], norm, ignore):
        diffs.append(f"stdout differs ({len(r['out'])} bytes, plain {len(plain['out'])})")
    fd = snap_diff(plain_files, files)
    if fd:
        diffs.append("files differ from plain's: " + fd)
    return "; ".join(diffs)

def irs_status_line(err):
    """What covered an `irs run` (from its `irs run 1/1: ...` line): constraints in force,
    SERIALISED, UNVERIFIED or not run."""
    for l in err.decode(errors="replace").splitlines():
        if l.startswith("irs run ") and "|" in l:
            parts = [x.strip() for x in l.split("|")]
            keep = [x for x in parts[1:] if "constraints in force" in x or "SERIAL" in x
                    or "UNVERIFIED" in x or "violations found" in x or "not run" in x]
            return ", ".join(keep)
    for l in err.decode(errors="replace").splitlines():
        if "not run" in l:
            return l.strip()[:120]
    return ""


# ---------------------------------------------------------------------------------------------
# The harness.

class Harness:
    def __init__(self, args):
        self.args = args
        self.irs = str(Path(args.irs).resolve())
        self.root = Path(args.scratch)
        self.env = {"PATH": "/usr/bin:/bin", "HOME": str(self.root / "home"), "LANG": "C",
                    "TMPDIR": str(self.root / "tmp"), "IRS_STORE": str(self.root / "store")}
        self.guard = Guard(self.root, int(args.mem_limit_gb * 1024 * 1024))
        self.findings = []      # (program, case, mode, what, reproduce)
        self.used = set()       # irs builds run under `irs run`: forgotten at the end

    def forget_all(self):
        """`irs forget` every program run under `irs run` (also after an interruption)."""
        for exe in sorted(self.used):
            run([self.irs, "forget", exe], self.root, self.env, None, 60)

    def find(self, prog, case, mode, what, repro):
        self.findings.append({"program": prog, "case": case, "mode": mode, "what": what,
                              "reproduce": repro})

    def build(self, prog, src, steps=None, only=None):
        res = {}
        for flavour, cc in (("plain", self.args.cc), ("irs", f"{self.irs} cc")):
            if only and flavour != only:
                continue
            d = self.root / "build" / flavour / prog.key
            if d.exists():
                shutil.rmtree(d)
            shutil.copytree(src, d, symlinks=True, ignore=shutil.ignore_patterns(".git"))
            ok, log, t0 = True, "", time.monotonic()
            for argv, rel in (steps or prog.build)(cc):
                r = run(argv, d / rel, dict(os.environ), timeout=900)
                log += r["err"].decode(errors="replace")[-4000:]
                if r["rc"] != 0:
                    ok = False
                    log = f"`{' '.join(argv)}` exit {r['rc']}: " + tail(r["err"], 5)
                    break
            res[flavour] = {"ok": ok, "dir": str(d), "seconds": time.monotonic() - t0,
                            "log": log if not ok else ""}
            if not ok:
                self.find(prog.key, "-", "build " + flavour, res[flavour]["log"],
                          f"cd {d} && " + " ; ".join(" ".join(a) for a, _ in
                                                     (steps or prog.build)(cc)))
        return res

    @staticmethod
    def uninstrumented(build_dir, cases):
        """The test binaries of an irs build that hold no irs instrumentation."""
        bad = []
        for exe in sorted({c.argv[0] for c in cases}):
            r = subprocess.run(["nm", str(Path(build_dir) / exe)], capture_output=True, text=True)
            if "__irs_" not in r.stdout:
                bad.append(exe)
        return bad

    def case(self, prog, c, plain_dir, irs_dir, data_dir):
        a = self.args
        cdir = self.root / "runs" / prog.key / re.sub(r"[^A-Za-z0-9_.-]+", "_", c.name)
        dirs = {m: cdir / m for m in ("plain", "direct", "run", "verify")}
        exe_plain = str(Path(plain_dir) / c.argv[0])
        exe_irs = str(Path(irs_dir) / c.argv[0])
        args_ = c.argv[1:]

        def stdin_for(d):
            if not c.stdin:
                return None
            if c.stdin[0] == "file":
                return ("file", str(d / c.stdin[1]))
            return ("pipe", (data_dir / c.stdin[1]).read_bytes())

        def one(mode, argv, timeout):
            d = dirs[mode]
            reset_dir(d, data_dir, c.data)
            r = run(argv, d, self.env, stdin_for(d), timeout)
            r["files"] = snapshot(d)
            return r

        shell_in = ""
        if c.stdin:
            shell_in = f" < {c.stdin[1]}" if c.stdin[0] == "file" else ""
        pipe_pre = f"cat {c.stdin[1]} | " if c.stdin and c.stdin[0] == "pipe" else ""
        data_note = f"cp -p {' '.join(str(data_dir / n) for n in c.data)} . && " if c.data else ""
        where = f"mkdir -p /tmp/x && cd /tmp/x && {data_note}"
        rep = {"case": c.name, "origin": c.origin, "argv": c.argv, "norm": c.norm,
               "ignore": c.ignore}
        wait_limit = a.wait_limit
        run_argv = [self.irs, "run", "--wait-limit", str(wait_limit), "--", exe_irs, *args_]

        # 1. plain, 2. direct
        self.guard.begin("plain")
        plain = one("plain", [exe_plain, *args_], c.timeout or 60)
        self.guard.end()
        rep["plain"] = {"rc": plain["rc"], "wall": plain["wall"], "timeout": plain["timeout"],
                        "stdout_bytes": len(plain["out"]), "stderr": tail(plain["err"])}
        if plain["timeout"]:
            rep["plain"]["note"] = "the plain build timed out: the case is not compared"
            return rep
        hang = max(20.0, 4 * plain["wall"] + 10)    # a run of another mode past this hangs
        rep["hang_bound"] = hang
        self.guard.begin("direct")
        direct = one("direct", [exe_irs, *args_], hang)
        direct_peak, _ = self.guard.end()
        d_diff = same_as(plain, direct, c.norm, plain["files"], direct["files"], c.ignore)
        rep["direct"] = {"rc": direct["rc"], "wall": direct["wall"], "diff": d_diff,
                         "stderr": tail(direct["err"]), "peak_rss_kb": direct_peak}
        if d_diff:
            self.find(prog.key, c.name, "direct", d_diff + "; stderr: " + tail(direct["err"]),
                      f"{where}{pipe_pre}{exe_irs} {' '.join(args_)}{shell_in}")

        if c.leaks and shutil.which("valgrind"):
            rep["leaks"] = {}
            for mode, exe in (("plain", exe_plain), ("direct", exe_irs)):
                reset_dir(dirs[mode], data_dir, c.data)
                r = run(["valgrind", "--leak-check=full", exe, *args_], dirs[mode], self.env,
                        stdin_for(dirs[mode]), 300)
                m = re.search(r"total heap usage: ([\d,]+) allocs, ([\d,]+) frees",
                              r["err"].decode(errors="replace"))
                rep["leaks"][mode] = ([int(x.replace(",", "")) for x in m.groups()] if m
                                      else None)
            pl, di = rep["leaks"]["plain"], rep["leaks"]["direct"]
            if pl and di and pl[0] == pl[1] and di[0] != di[1]:
                self.find(prog.key, c.name, "direct (leak test)",
                          f"valgrind: {di[0]} allocs, {di[1]} frees (plain: {pl[0]} and {pl[1]})",
                          f"{where}valgrind --leak-check=full {exe_irs} {' '.join(args_)}")

        # 3. irs run: the first run (starts the background verifier), then interleaved reps
        if not a.no_run:
            self.guard.begin("irs run")
            first = one("run", run_argv, wait_limit + hang)
            self.used.add(exe_irs)
            peak, killed = self.guard.end()
            f_diff = same_as(plain, first, c.norm, plain["files"], first["files"], c.ignore)
            rr = {"first_rc": first["rc"], "first_wall": first["wall"], "first_diff": f_diff,
                  "first_status": irs_status_line(first["err"]), "first_stderr": tail(first["err"], 4)}
            repro_run = (f"{where}{pipe_pre}IRS_STORE=/tmp/x-store {self.irs} run --wait-limit "
                         f"{wait_limit} -- {exe_irs} {' '.join(args_)}{shell_in}")
            if f_diff:
                self.find(prog.key, c.name, "irs run (first)",
                          f_diff + "; stderr: " + tail(first["err"], 8 if first["timeout"] else 4,
                                                       900), repro_run)
            reps = c.reps if c.reps is not None else a.reps
            if first["timeout"]:
                reps = 0        # the later runs would hang as well: no overhead
                rr["first_stderr"] = tail(first["err"], 8, 900)
            times = {"plain": [], "direct": [], "run": []}
            diffs = []
            hangs = 0
            for i in range(reps):
                if hangs >= 2:
                    diffs.append(f"reps {i + 1}..{reps} not run: two hung")
                    break
                for mode, argv in (("plain", [exe_plain, *args_]), ("direct", [exe_irs, *args_]),
                                   ("run", run_argv)):
                    r = one(mode, argv, hang)
                    if not r["timeout"]:        # a hang is reported, not timed
                        times[mode].append(r["wall"])
                    elif mode == "run":
                        hangs += 1
                    if mode == "run":
                        dd = same_as(plain, r, c.norm, plain["files"], r["files"], c.ignore)
                        if dd:
                            diffs.append(f"rep {i + 1}: {dd} [{irs_status_line(r['err'])}]")
                            last_bad = dd + "; stderr: " + tail(r["err"], 4)
                        rr["last_status"] = irs_status_line(r["err"])
            if diffs:
                self.find(prog.key, c.name, f"irs run ({len(diffs)} of {reps} later runs)",
                          last_bad, repro_run)
            med = {m: statistics.median(v) for m, v in times.items() if v}
            rr["median"] = med
            rr["rep_diffs"] = diffs
            if med.get("plain"):
                for m in ("direct", "run"):
                    if m in med:
                        rr[f"overhead_{m}"] = med[m] / med["plain"]
            # what the background verifier did meanwhile, then forget
            after_runs = snapshot(dirs["run"])
            st = run([self.irs, "status", "--json", exe_irs, *args_], dirs["run"], self.env,
                     stdin_for(dirs["run"]), 60)
            rr["status"] = parse_status(st)
            key = rr["status"].get("key")
            if rr["status"].get("violations") and key:
                scheds = sorted((self.root / "store").glob(f"*/{key}/bugs/*.schedule"))
                if scheds:
                    # --input replays the input's own arguments: the program alone after --
                    rp = run([self.irs, "replay", "--input", key, "--schedule", str(scheds[0]),
                              "--", exe_irs], dirs["run"], self.env, None, 120)
                    rr["bug_replay"] = outcome_line(rp)
                    rr["bug_schedule"] = scheds[0].name
                    if not reproduces(rr["bug_replay"]):
                        self.find(prog.key, c.name, "background verifier",
                                  f"its bug ({', '.join(rr['status']['violations'])[:200]}) does not "
                                  f"reproduce: `irs replay --input {key} --schedule "
                                  f"{scheds[0].name}` gives {rr['bug_replay']}", repro_run)
            time.sleep(0.5)
            later = snapshot(dirs["run"])
            bg = snap_diff(after_runs, later)
            rr["verifier_changed_files"] = bg
            if bg:
                self.find(prog.key, c.name, "background verifier",
                          "files of the last run's directory changed after the run ended: " + bg,
                          repro_run)
            fg = run([self.irs, "forget", exe_irs], dirs["run"], self.env, None, 60)
            rr["forget"] = (f"exit {fg['rc']}: {tail(fg['err'])}" if fg["rc"] != 0 else "ok")
            time.sleep(0.5)
            left = [p for p in self.guard.ours() if exe_irs in p[1] or "irs worker" in p[1]]
            rr["left_behind"] = [f"{pid}: {cmd[:100]}" for pid, cmd in left]
            for pid, _ in left:         # ours: started by the `irs run` above
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            seg = rr["status"].get("segment")
            if seg and os.path.exists(seg):
                rr["left_behind"].append(f"segment {seg}")
            if rr["left_behind"] or rr["forget"] != "ok":
                self.find(prog.key, c.name, "irs forget",
                          f"forget: {rr['forget']}; left behind: {rr['left_behind']}", repro_run)
            rr["peak_rss_kb"] = peak
            rr["killed"] = killed
            rep["run"] = rr

        # 4. irs verify
        if not a.no_verify:
            d = dirs["verify"]
            reset_dir(d, data_dir, c.data)
            before = snapshot(d)
            outdir = self.root / "bugs" / prog.key / d.parent.name
            if outdir.exists():
                shutil.rmtree(outdir)
            argv = [self.irs, "verify", "--json", "--time-limit", str(a.verify_time),
                    "--out-dir", str(outdir), "--", exe_irs, *args_]
            self.guard.begin("verify")
            # the time limit plus a grace for the last execution and the report
            r = run(argv, d, self.env, stdin_for(d), a.verify_time + a.verify_grace)
            peak, killed = self.guard.end()
            after = snapshot(d)
            v = parse_verify(r)
            v["peak_rss_kb_sampled"] = peak
            v["killed"] = killed
            v["wall"] = r["wall"]
            if not r["timeout"] and r["wall"] > a.verify_time + 5:
                v["overran"] = r["wall"] - a.verify_time
            v["changed_files"] = snap_diff(before, after)
            rep["verify"] = v
            repro_v = (f"{where}{pipe_pre}{self.irs} verify --time-limit {a.verify_time} -- "
                       f"{exe_irs} {' '.join(args_)}{shell_in}")
            v["reproduce"] = repro_v
            if v["verdict"] == "violation":
                scheds = sorted(outdir.glob("*.schedule")) if outdir.exists() else []
                if scheds:
                    reset_dir(d, data_dir, c.data)
                    rp = run([self.irs, "replay", "--schedule", str(scheds[0]), *(
                        ["--stdin", str(d / c.stdin[1])] if c.stdin else []), "--", exe_irs,
                        *args_], d, self.env, None, 120)
                    v["bug_replay"] = outcome_line(rp)
                    if not reproduces(v["bug_replay"]):
                        v["detail"] = (v.get("detail", "") + f"; replay of {scheds[0].name} "
                                       f"gives {v['bug_replay']}")
            # `safe-within-bounds` on a program that waits on condition variables (spurious
            # wake-ups not explored) is no finding.
            if v["verdict"] not in ("safe", "safe-within-bounds", "incomplete") or killed or r["timeout"]:
                what = v["verdict"] + (f": {v.get('detail')}" if v.get("detail") else "")
                if killed:
                    what += f"; killed by the memory guard ({killed[0]})"
                self.find(prog.key, c.name, "irs verify", what, repro_v)
            if v.get("overran"):
                self.find(prog.key, c.name, "irs verify",
                          f"--time-limit {a.verify_time} not kept: answered after "
                          f"{r['wall']:.0f} s ({v['verdict']})", repro_v)
            if v["changed_files"]:
                self.find(prog.key, c.name, "irs verify",
                          "the verifier changed the data in its working directory: "
                          + v["changed_files"], repro_v)
        return rep

    def program(self, prog, src):
        out = {"program": prog.title, "key": prog.key, "src": str(src)}
        out["commit"] = git_head(src)
        b = self.build(prog, src)
        out["build"] = {k: {"ok": v["ok"], "seconds": v["seconds"], "log": v["log"]}
                        for k, v in b.items()}
        if not (b["plain"]["ok"] and b["irs"]["ok"]):
            out["cases"] = []
            return out
        bad = self.uninstrumented(b["irs"]["dir"], prog.cases())
        if bad:
            why = (f"the unchanged irs build's {', '.join(bad)} hold no irs instrumentation "
                   "(built, but not by the pass)")
            out["build"]["irs"]["uninstrumented"] = why
            self.find(prog.key, "-", "build irs", why,
                      f"cd {b['irs']['dir']} && nm {bad[0]} | grep -c __irs_")
            if prog.fallback:
                note, steps = prog.fallback
                b.update(self.build(prog, src, steps=steps, only="irs"))
                out["build"]["irs_fallback"] = {"ok": b["irs"]["ok"], "note": note,
                                                "seconds": b["irs"]["seconds"]}
                if not b["irs"]["ok"] or self.uninstrumented(b["irs"]["dir"], prog.cases()):
                    out["cases"] = []
                    return out
            else:
                out["cases"] = []
                return out
        data_dir = self.root / "data" / prog.key
        if data_dir.exists():
            shutil.rmtree(data_dir)
        data_dir.mkdir(parents=True)
        if prog.prepare:
            prog.prepare(Path(b["plain"]["dir"]), data_dir)
        cases = prog.cases()
        if self.args.cases:
            cases = [c for c in cases if any(s in c.name for s in self.args.cases.split(","))]
        out["cases"] = []
        for c in cases:
            print(f"[real] {prog.key}: {c.name}", file=sys.stderr, flush=True)
            t0 = time.monotonic()
            try:
                rep = self.case(prog, c, b["plain"]["dir"], b["irs"]["dir"], data_dir)
            except Exception as e:      # a harness bug: say so, and go on with the next test
                import traceback
                traceback.print_exc()
                rep = {"case": c.name, "origin": c.origin, "argv": c.argv, "norm": c.norm,
                       "plain": {"rc": None, "wall": 0.0, "timeout": False},
                       "harness_error": f"{type(e).__name__}: {e}"}
            rep["seconds"] = time.monotonic() - t0
            out["cases"].append(rep)
            print(f"[real]   {summary_line(rep)} ({rep['seconds']:.0f} s)", file=sys.stderr,
                  flush=True)
        return out


def git_head(src):
    """The commit of a checkout: its .git, or the mirror it was archived from (not known)."""
    try:
        r = subprocess.run(["git", "-C", str(src), "rev-parse", "HEAD"], capture_output=True,
                           text=True, timeout=10)
        if r.returncode == 0:
            return r.stdout.strip()
    except (OSError, subprocess.SubprocessError):
        pass
    f = Path(src) / ".commit"
    return f.read_text().strip() if f.exists() else ""


def outcome_line(r):
    """The outcome `irs replay` printed (or why it printed none); the program's own output may
    precede it on the same line (pigz -c writes binary data with no newline)."""
    text = r["out"].decode(errors="replace") + "\n" + r["err"].decode(errors="replace")
    found = re.findall(r"outcome: [^\n]*", text)
    if found:
        return found[-1].strip()
    return f"no outcome (exit {r['rc']}: {tail(r['err'], 2)})"

def reproduces(outcome):
    return outcome.startswith("outcome:") and "exit 0" not in outcome


def last_json(b):
    for l in reversed(b.decode(errors="replace").splitlines()):
        l = l.strip()
        if l.startswith("{"):
            try:
                return json.loads(l)
            except ValueError:
                return None
    return None


def parse_verify(r):
    j = last_json(r["out"])
    v = {"rc": r["rc"], "timeout": r["timeout"]}
    if r["timeout"]:
        v["verdict"] = "TIMEOUT"
        v["detail"] = f"no answer after {r['wall']:.0f} s (killed)"
        return v
    if j is None or "verdict" not in j:
        v["verdict"] = "error"
        v["detail"] = tail(r["err"], 2) or tail(r["out"], 2)
        if r["rc"] is not None and r["rc"] < 0:
            v["detail"] = f"killed by signal {-r['rc']}; " + v["detail"]
        return v
    v["verdict"] = j.get("verdict")
    for k in ("executions", "traces", "ssb", "runs", "events_peak", "peak_rss_kb", "seconds",
              "stopped", "covers"):
        v[k] = j.get(k)
    viol = j.get("violations") or []
    v["violations"] = [f"{x.get('kind')}: {x.get('message')}"[:200] for x in viol[:3]]
    if viol:
        v["detail"] = "; ".join(v["violations"])
    races = j.get("races") or []
    v["races"] = len(races)
    return v


def parse_status(r):
    """This command's input in `irs status --json`: its verifier's state, verdict and bugs."""
    j = last_json(r["out"])
    if not j:
        return {"error": tail(r["err"]) or tail(r["out"])}
    mine = [i for i in j.get("inputs") or [] if i.get("this")]
    if not mine:
        return {"status": j.get("status"), "note": "this command's input not found among "
                f"{len(j.get('inputs') or [])} input(s)"}
    i = mine[0]
    st = i.get("state") or {}
    out = {"key": i.get("key"), "status": i.get("status"), "segment": i.get("segment"),
           "constraints_in_force": i.get("constraints_in_force")}
    for k in ("state", "verdict", "executions", "traces", "published", "error", "violations"):
        if st.get(k) not in (None, [], ""):
            out[k] = st[k]
    return out


def summary_line(rep):
    if rep.get("harness_error"):
        return "harness error: " + rep["harness_error"]
    s = [f"plain rc {rep['plain']['rc']} {rep['plain']['wall']:.2f}s"]
    if "direct" in rep:
        s.append("direct " + (rep["direct"]["diff"] or "same"))
    if "run" in rep:
        rr = rep["run"]
        s.append("irs run " + (rr["first_diff"] or "same") +
                 (f" x{rr['overhead_run']:.2f}" if "overhead_run" in rr else ""))
    if "verify" in rep:
        v = rep["verify"]
        s.append(f"verify {v['verdict']} {v.get('executions', '')}")
    return "; ".join(s)

# ---------------------------------------------------------------------------------------------
# The report.

def fmt_ratio(x):
    return "-" if x is None else f"{x:.2f}×"

def md_cell(s):
    return str(s).replace("|", "\\|").replace("\n", " ")

def write_report(res, out):
    st = res["settings"]
    L = []
    L.append("# Real programs: build, run, `irs run`, `irs verify`\n")
    L.append(f"Produced by `{res['command']}` on {res['date']} ({res['host']}, {res['cpus']} CPUs; "
             f"irs at commit {res['irs_commit']}). See benchmarks/real/README.md for what each "
             "column means.\n")
    L.append(f"Settings: `irs verify --time-limit {st['verify_time']}` (killed "
             f"{st['verify_grace']} s later), `irs run --wait-limit {st['wait_limit']}`, "
             f"{st['reps']} interleaved repetitions for the overheads (fewer for tests that sleep "
             f"for seconds), a run is hung past max(20 s, 4 × plain + 10 s), memory guard "
             f"{st['mem_limit_gb']} GB per process. Whole run: {res['seconds'] / 60:.1f} min.\n")
    L.append("## Programs\n")
    L.append("| program | checkout | commit | plain build (clang) | irs build (`irs cc`) |")
    L.append("|---|---|---|---|---|")
    for p in res["programs"]:
        if p.get("skipped"):
            L.append(f"| {p['program']} | not given (--{p['flag']}) | | skipped | skipped |")
            continue
        b = p["build"]
        cell = lambda x: ("yes" if x["ok"] else "**no**: " + md_cell(x["log"][:200])) + \
            f" ({x['seconds']:.0f} s)"
        irs_cell = cell(b["irs"])
        if b["irs"].get("uninstrumented"):
            irs_cell = "**builds, not instrumented**: " + md_cell(b["irs"]["uninstrumented"])
            fb = b.get("irs_fallback")
            if fb:
                irs_cell += (f"; the tests below use a changed build: {md_cell(fb['note'])} ("
                             + ("yes" if fb["ok"] else "**no**") + ")")
        L.append(f"| {p['program']} | `{p['src']}` | {p['commit'][:12] or '?'} | "
                 f"{cell(b['plain'])} | {irs_cell} |")
    L.append("")
    L.append("## Tests\n")
    L.append("Same = exit code, standard output (`sorted`/`masked`: lines sorted, numbers masked, "
             "for tests whose output order or thread ids depend on the schedule) and every "
             "file of the run's directory equal to the plain build's.\n")
    L.append("| program | test | plain | direct (irs build) | `irs run`: first run | `irs run`: later runs | "
             "overhead irs build | overhead `irs run` | `irs run` state at the end | "
             "`irs verify` verdict | executions | peak RSS | verifier touched files |")
    L.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for p in res["programs"]:
        for c in p.get("cases", []):
            pl = c["plain"]
            if c.get("harness_error"):
                L.append(f"| {p['key']} | `{md_cell(c['case'])}` | harness error: "
                         f"{md_cell(c['harness_error'])} |" + " |" * 11)
                continue
            plain = f"exit {pl['rc']}, {pl['wall']:.2f} s"
            if pl.get("timeout"):
                plain = "**timeout**"
            direct = ("same" if not c.get("direct", {}).get("diff") else
                      "**" + md_cell(c["direct"]["diff"]) + "**") if "direct" in c else "-"
            lk = c.get("leaks") or {}
            if lk.get("plain") and lk.get("direct"):
                bad = lk["direct"][0] != lk["direct"][1]
                direct += ("; **" if bad else "; ") + (f"valgrind {lk['direct'][0]} allocs / "
                                                       f"{lk['direct'][1]} frees (plain "
                                                       f"{lk['plain'][0]} / {lk['plain'][1]})")
                direct += "**" if bad else ""
            rr = c.get("run")
            if rr:
                first = "same" if not rr["first_diff"] else "**" + md_cell(rr["first_diff"]) + "**"
                first += f" ({rr['first_wall']:.1f} s; {md_cell(rr['first_status'] or '')})"
                later = ("-" if not rr.get("median") else "same" if not rr["rep_diffs"] else
                         "**" + md_cell("; ".join(rr["rep_diffs"])[:300]) + "**")
                if rr.get("last_status"):
                    later += f" ({md_cell(rr['last_status'])})"
                med = rr.get("median") or {}
                od = fmt_ratio(rr.get("overhead_direct"))
                orun = fmt_ratio(rr.get("overhead_run"))
                if med.get("plain") and med.get("direct"):
                    od += f" ({med['plain'] * 1000:.0f} → {med['direct'] * 1000:.0f} ms)"
                if med.get("plain") and med.get("run"):
                    orun += f" ({med['plain'] * 1000:.0f} → {med['run'] * 1000:.0f} ms)"
                if rr["rep_diffs"] and orun != "-":
                    orun += " (runs differ: not comparable)"
                st = rr.get("status", {})
                state = md_cell(", ".join(f"{k} {v}" for k, v in st.items()
                                          if k in ("status", "state", "verdict",
                                                   "constraints_in_force") and v is not None)
                                or st.get("error", ""))
                if rr.get("left_behind"):
                    state += "; **left behind: " + md_cell(", ".join(rr["left_behind"]))[:200] + "**"
                if rr.get("verifier_changed_files"):
                    state += "; **background verifier changed: " + md_cell(rr["verifier_changed_files"]) + "**"
                if rr.get("killed"):
                    state += "; **memory guard killed: " + md_cell(rr["killed"][0])[:200] + "**"
            else:
                first = later = od = orun = state = "-"
            v = c.get("verify")
            if v:
                verdict = v["verdict"]
                if verdict not in ("safe", "safe-within-bounds", "incomplete"):
                    verdict = f"**{verdict}**"
                if v.get("detail"):
                    verdict += ": " + md_cell(v["detail"])[:250]
                elif v.get("stopped"):
                    verdict += f" ({md_cell(v['stopped'])[:120]})"
                if v.get("overran"):
                    verdict += f" **after {v['wall']:.0f} s**"
                elif v["verdict"] == "TIMEOUT":
                    verdict += " (killed)"
                ex = "-" if v.get("executions") is None else f"{v['executions']}"
                if v.get("events_peak") is not None:
                    ex += f" (events_peak {v['events_peak']})"
                rss = v.get("peak_rss_kb") or v.get("peak_rss_kb_sampled") or 0
                rss = f"{rss / 1024:.0f} MB"
                if v.get("killed"):
                    rss += " **killed**"
                touched = "**" + md_cell(v["changed_files"]) + "**" if v["changed_files"] else "no"
            else:
                verdict, ex, rss, touched = "-", "-", "-", "-"
            name = f"`{md_cell(c['case'])}`" + (f" ({c['norm']})" if c["norm"] != "exact" else "")
            if c.get("ignore"):
                name += f", lines `{md_cell(c['ignore'])}` not compared"
            L.append(f"| {p['key']} | {name} | {plain} | {direct} | {first} | "
                     f"{later} | {od} | {orun} | {state} | {verdict} | {ex} | {rss} | {touched} |")
    L.append("")
    L.append("## Failures seen in this run, with a reproduction\n")
    if not res["findings"]:
        L.append("None.\n")
    for f in res["findings"]:
        L.append(f"- **{f['program']} / {md_cell(f['case'])} / {f['mode']}**: {md_cell(f['what'])[:600]}  ")
        L.append(f"  `{f['reproduce']}`")
    L.append("")
    out.write_text("\n".join(L) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    for p in PROGRAMS:
        ap.add_argument(f"--{p.flag}", metavar="DIR", help=f"checkout of {p.title}")
    ap.add_argument("--irs", default=str(REPO / "target" / "release" / "irs"))
    ap.add_argument("--cc", default="clang-14", help="the plain build's compiler")
    ap.add_argument("--scratch", default="/tmp/irs-real", help="scratch root (wiped first)")
    ap.add_argument("--verify-time", type=int, default=10, help="irs verify --time-limit")
    ap.add_argument("--verify-grace", type=int, default=20,
                    help="seconds past --verify-time after which irs verify is killed")
    ap.add_argument("--wait-limit", type=int, default=30, help="irs run --wait-limit")
    ap.add_argument("--reps", type=int, default=5, help="interleaved repetitions (overheads)")
    ap.add_argument("--mem-limit-gb", type=float, default=6.0,
                    help="kill a process started here whose RSS passes this")
    ap.add_argument("--only", help="programs, comma-separated (pigz,thpool,threadpool,chan)")
    ap.add_argument("--cases", help="only tests whose name contains one of these (comma-separated)")
    ap.add_argument("--no-run", action="store_true", help="skip the `irs run` step")
    ap.add_argument("--no-verify", action="store_true", help="skip the `irs verify` step")
    ap.add_argument("--out", default=str(REPO / "benchmarks" / "results" / "real" / "results.md"))
    ap.add_argument("--from-json", metavar="FILE",
                    help="only write the markdown again from a results.json")
    args = ap.parse_args()
    if args.from_json:
        write_report(json.loads(Path(args.from_json).read_text()), Path(args.out))
        return 0

    if not os.access(args.irs, os.X_OK):
        print(f"error: no irs at {args.irs} (build it: cargo build --release --workspace)",
              file=sys.stderr)
        return 2
    if shutil.which(args.cc) is None:
        print(f"error: no compiler {args.cc}", file=sys.stderr)
        return 2
    root = Path(args.scratch)
    if not str(root.resolve()).startswith("/tmp/"):
        print("error: --scratch must be under /tmp (the verifier writes files for real)",
              file=sys.stderr)
        return 2
    if root.exists():
        shutil.rmtree(root)
    for sub in ("home", "tmp", "store"):
        (root / sub).mkdir(parents=True)
    for p in PROGRAMS:
        src = getattr(args, p.flag)
        if src and not Path(src).is_dir():
            print(f"error: --{p.flag} {src}: not a directory", file=sys.stderr)
            return 2
    h = Harness(args)
    only = set(args.only.split(",")) if args.only else None
    res = {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
           "host": platform.node(), "cpus": os.cpu_count(),
           "irs_commit": subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"],
                                        capture_output=True, text=True).stdout.strip(),
           "programs": [],
           "command": "python3 benchmarks/real/run.py " + " ".join(shlex.quote(a)
                                                                   for a in sys.argv[1:]),
           "settings": {k: getattr(args, k) for k in ("verify_time", "verify_grace", "wait_limit",
                                                      "reps", "mem_limit_gb")}}
    t0 = time.monotonic()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(3))
    try:
        run_programs(h, args, only, res)
    finally:
        h.forget_all()
        h.guard.stop = True
    res["findings"] = h.findings
    res["seconds"] = time.monotonic() - t0
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    write_report(res, out)
    out.with_suffix(".json").write_text(json.dumps(res, indent=1, default=str) + "\n")
    print(f"[real] {len(h.findings)} failures; {res['seconds']:.0f} s; wrote {out}",
          file=sys.stderr)
    return 0


def run_programs(h, args, only, res):
    for p in PROGRAMS:
        src = getattr(args, p.flag)
        if only and p.key not in only:
            continue
        if not src:
            print(f"[real] {p.title}: skipped (no --{p.flag} given)", file=sys.stderr)
            res["programs"].append({"program": p.title, "flag": p.flag, "skipped": True})
            continue
        res["programs"].append(h.program(p, Path(src).resolve()))


if __name__ == "__main__":
    sys.exit(main())
