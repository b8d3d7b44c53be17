#!/usr/bin/env python3
"""Side-by-side comparison of `irs verify` with the stateless model checkers GenMC and Nidhugg
on the QPOR benchmark programs of benchmarks/qpor/ (Fig. 1, MPAT, PI, MPC, POL, DISP).

The peers are not part of this repository: build them yourself (anywhere outside it) and pass
their paths; a tool whose path is not given is skipped. irs defaults to target/release/irs.

    python3 benchmarks/peers/run.py --genmc /tmp/genmc/genmc --nidhugg /tmp/nidhugg/src/nidhugg
    python3 benchmarks/peers/run.py --quick ...               # small instances, 1 repetition
    python3 benchmarks/peers/run.py --only MPAT,FIG1 ...      # families or labels, e.g. 'MPAT(5)'

The programs are the unmodified files of benchmarks/qpor/; the peers only need flags:
  * PI is compiled with -ffp-contract=off for every tool (clang otherwise emits
    llvm.fmuladd, which neither GenMC's nor Nidhugg's interpreter supports);
  * Nidhugg runs with --no-check-mutex-init (it rejects mutexes initialised statically with
    PTHREAD_MUTEX_INITIALIZER instead of by pthread_mutex_init);
  * GenMC runs with --sc (its default model is RC11), --disable-sr (symmetry reduction may
    merge the executions of threads that run the same function with the same argument, e.g.
    POL's workers, and report fewer executions than there are Mazurkiewicz traces),
    --disable-estimation (a state-space estimation pass before the exploration), and, for
    Fig. 1 as printed (RACY=1), --disable-race-detection (otherwise it stops at the first
    non-atomic race).

Each tool is run as its users run it, but in two timed steps:
  * irs:     `irs cc -O1 -D... -o exe prog.c` (compile), `irs verify --json [--k 1] -- exe`;
  * GenMC:   the clang command GenMC itself runs (compile), then
             `genmc OPTS --input-from-bitcode-file prog.ll` (analysis, including its IR passes);
  * Nidhugg: what its `nidhuggc` wrapper runs: `clang -S -emit-llvm -g` and
             `nidhugg OPTS -transform` (compile), then `nidhugg prog.ll OPTS` (analysis).
Every (program, tool, mode) is run --reps times (default 3), the tools alternating within each
repetition; the tables report medians of the wall time of each step and of the CPU time
(user + sys of the process and the children it waited for). irs runs the verifier and the
program's worker in two processes, so it can use two cores; GenMC is also run with
--nthreads=2 (--genmc-threads) for that reason. GenMC is also run with
--disable-instruction-caching (both thread counts; --no-genmc-nocache to skip): its default
instruction caching makes it about 2x slower on MPAT, MPC and DISP but 4x faster on PI, so the
fastest peer is taken over both settings.

Trace counts: for the mutex-only programs every tool must report the program's Mazurkiewicz
trace count (derived in each program's header). For Fig. 1 as printed (data races on c),
irs treats reads of one location as dependent (4N-2 traces) while GenMC and Nidhugg's optimal
DPOR do not (2N); the expectation is per tool.

Writes benchmarks/results/peers/results.md (or --out) and results.csv beside it.
Python 3 standard library only.
"""
import argparse, csv, datetime, json, math, os, platform, re, shutil, signal, statistics, subprocess, sys
import tempfile, threading, time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
QPOR = REPO / "benchmarks" / "qpor"

# ---------------------------------------------------------------------------------------------
# Programs.

def _qpor_counts():
    """The expected trace counts of benchmarks/qpor/run.py (one place for their derivations)."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("qpor_run", QPOR / "run.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.pool_traces, mod.mpc_traces, mod.DISP_TRACES

pool_traces, mpc_traces, DISP_TRACES = _qpor_counts()

class Inst:
    def __init__(self, family, label, source, defines, expected, cflags=(), racy=False, extra_modes=()):
        self.family, self.label, self.source, self.defines = family, label, source, defines
        self.cflags = list(cflags)
        self.racy = racy
        # expected traces per tool: irs counts reads of one location as dependent, the peers not
        self.expected = expected if isinstance(expected, dict) else {"irs": expected, "genmc": expected,
                                                                      "nidhugg": expected}
        self.extra_modes = set(extra_modes)

    @property
    def dflags(self):
        return [f"-D{k}={v}" for k, v in self.defines]

    @property
    def slug(self):
        return re.sub(r"[^A-Za-z0-9]+", "_", self.label).strip("_")

def fig1(n):
    return Inst("FIG1", f"FIG1({n})", "fig1.c", [("N", n)], 2 * n, extra_modes={"irs-k1", "nidhugg-source"})

def fig1_racy(n):
    return Inst("FIG1-RACY", f"FIG1-RACY({n})", "fig1.c", [("N", n), ("RACY", 1)],
                {"irs": 4 * n - 2, "genmc": 2 * n, "nidhugg": 2 * n}, racy=True,
                extra_modes={"irs-k1", "nidhugg-source"})

def mpat(k):
    return Inst("MPAT", f"MPAT({k})", "mpat.c", [("K", k)], math.factorial(k) * 2 ** k)

def pi(n):
    return Inst("PI", f"PI({n})", "pi.c", [("N", n)], math.factorial(n), cflags=["-ffp-contract=off"])

def mpc(p, c=3, items=2):
    return Inst("MPC", f"MPC({p},{c})", "mpc.c", [("PRODUCERS", p), ("CONSUMERS", c), ("ITEMS", items)],
                mpc_traces(p, c, items))

def pol(n, m=3):
    return Inst("POL", f"POL({n},{m})", "pool.c", [("TASKS", n), ("WORKERS", m)], pool_traces(n, m))

def disp(w, jobs=5, res=2):
    return Inst("DISP", f"DISP({jobs},{w})", "disp.c", [("JOBS", jobs), ("WORKERS", w), ("RESOURCES", res)],
                DISP_TRACES[(jobs, res, w)])

FULL = ([fig1(n) for n in (4, 8, 12)] + [fig1_racy(n) for n in (4, 8, 12)] + [mpat(k) for k in (4, 5, 6)]
        + [pi(n) for n in (6, 7, 8)] + [mpc(p) for p in (2, 3)] + [pol(n) for n in (4, 6)]
        + [disp(w) for w in (2, 3)])
QUICK = [fig1(4), fig1(8), fig1_racy(4), mpat(4), pi(5), mpc(2), pol(3), disp(2)]

# ---------------------------------------------------------------------------------------------
# Tools and modes. A mode: (name, tool, list of prepare steps, analysis step), each step a
# command list built from the instance and the working directory.

class Mode:
    def __init__(self, name, tool, prepare, analyse, parse, key=None):
        self.name, self.tool, self.prepare, self.analyse, self.parse = name, tool, prepare, analyse, parse
        self.key = key or name  # for Inst.extra_modes

def parse_irs(out, err):
    for line in reversed(out.strip().splitlines()):
        line = line.strip()
        if line.startswith("{"):
            d = json.loads(line)
            return {"traces": d.get("traces"), "blocked": d.get("ssb"), "tool_seconds": d.get("seconds"),
                    "ok": (d.get("verdict") == "safe" or (d.get("verdict") == "safe-within-bounds" and all(str(b).startswith("no spurious wake-ups") for b in d.get("bounds") or []))) and not d.get("stopped"), "note": d.get("verdict")}
    return {"traces": None, "blocked": None, "tool_seconds": None, "ok": False, "note": "no JSON"}

def parse_peer(text, traces_text, blocked_re, time_re):
    """A peer's report: the trace count found in `traces_text` (the report, minus lines that
    would match too), blocked executions and wall time by regex, and whether it found no error."""
    m = re.search(r"(?:Number of complete executions explored|Trace count): (\d+)", traces_text)
    b = re.search(blocked_re, text)
    t = re.search(time_re, text)
    ok = "No errors were detected" in text
    e = re.search(r"(Error[^\n]*)", text)
    return {"traces": int(m.group(1)) if m else None, "blocked": int(b.group(1)) if b else 0,
            "tool_seconds": float(t.group(1)) if t else None, "ok": ok and m is not None,
            "note": "" if ok else (e.group(1) if e else "failed")}

def parse_genmc(out, err):
    text = out + "\n" + err
    return parse_peer(text, text, r"Number of blocked executions seen: (\d+)", r"Total wall-clock time: ([\d.]+)s")

def parse_nidhugg(out, err):
    text = out + "\n" + err
    counts = text.replace("Sleepset-blocked trace count", "").replace("Assume-blocked trace count", "").replace(
        "Await-blocked trace count", "")
    return parse_peer(text, counts, r"Sleepset-blocked trace count: (\d+)", r"Total wall-clock time: ([\d.]+) s")

def make_modes(a):
    modes = []
    if a.irs:
        def irs_cc(inst, wd):
            return [[a.irs, "cc", "-O1", *inst.dflags, *inst.cflags, "-o", str(wd / f"{inst.slug}.irs"),
                     str(QPOR / inst.source)]]
        for name, key, flags in (("irs", "irs", []), ("irs --k 1", "irs-k1", ["--k", "1"])):
            modes.append(Mode(name, "irs", irs_cc,
                              (lambda flags: lambda inst, wd: [a.irs, "verify", "--json", *flags,
                                                               "--", str(wd / f"{inst.slug}.irs")])(flags),
                              parse_irs, key))
    if a.genmc:
        inc = a.genmc_include or str(Path(a.genmc).resolve().parent / "include")

        def genmc_cc(inst, wd):
            # the command GenMC runs itself (src/main.cpp: buildCompilationArgs), written to a file
            return [[a.clang, "-fno-discard-value-names", "-Xclang", "-disable-O0-optnone", "-g", *inst.dflags,
                     *inst.cflags, "-I" + inc, "-D__CONFIG_GENMC_INODE_DATA_SIZE=64", "-S", "-emit-llvm",
                     "-o", str(wd / f"{inst.slug}.genmc.ll"), str(QPOR / inst.source)]]

        def genmc_opts(inst, threads, nocache):
            o = ["--sc", "--disable-sr", "--disable-estimation"]
            if inst.racy:
                o.append("--disable-race-detection")
            if threads > 1:
                o.append(f"--nthreads={threads}")
            if nocache:
                o.append("--disable-instruction-caching")
            return o
        threads = [1] + ([a.genmc_threads] if a.genmc_threads > 1 else [])
        for nocache in [False] + ([True] if a.genmc_nocache else []):
            for th in threads:
                name = ("genmc" + (f" --nthreads={th}" if th > 1 else "")
                        + (" --disable-instruction-caching" if nocache else ""))
                modes.append(Mode(name, "genmc", genmc_cc,
                                  (lambda th, nc: lambda inst, wd: [a.genmc, *genmc_opts(inst, th, nc),
                                                                    "--input-from-bitcode-file",
                                                                    str(wd / f"{inst.slug}.genmc.ll")])(th, nocache),
                                  parse_genmc, name))
    if a.nidhugg:
        def nidhugg_opts(alg):
            return ["--sc", alg, "--no-check-mutex-init"]
        for name, key, alg in (("nidhugg --optimal", "nidhugg", "--optimal"),
                               ("nidhugg --source", "nidhugg-source", "--source")):
            def prep(inst, wd, alg=alg):
                raw, tr = wd / f"{inst.slug}.nid.ll", wd / f"{inst.slug}.nid{alg}.ll"
                return [[a.clang, "-o", str(raw), "-S", "-emit-llvm", "-g", *inst.dflags, *inst.cflags,
                         str(QPOR / inst.source)],
                        [a.nidhugg, *nidhugg_opts(alg), "-transform", str(tr), str(raw)]]

            def ana(inst, wd, alg=alg):
                return [a.nidhugg, str(wd / f"{inst.slug}.nid{alg}.ll"), *nidhugg_opts(alg)]
            modes.append(Mode(name, "nidhugg", prep, ana, parse_nidhugg, key))
    return modes

def mode_applies(mode, inst):
    if mode.key in ("irs-k1", "nidhugg-source"):
        return mode.key in inst.extra_modes
    return True

# ---------------------------------------------------------------------------------------------
# Running.

def run_cmd(cmd, timeout, out_path, err_path):
    """Run cmd; return (wall seconds, cpu seconds of it and its waited-for children, exit code,
    timed out?)."""
    with open(out_path, "wb") as fo, open(err_path, "wb") as fe:
        t0 = time.monotonic()
        p = subprocess.Popen(cmd, stdout=fo, stderr=fe, stdin=subprocess.DEVNULL, start_new_session=True)
        fired = []

        def kill():
            fired.append(1)
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        timer = threading.Timer(timeout, kill)
        timer.start()
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.monotonic() - t0
        timer.cancel()
        p.returncode = os.waitstatus_to_exitcode(status)
    return wall, ru.ru_utime + ru.ru_stime, p.returncode, bool(fired)

def run_one(mode, inst, wd, timeout, rep):
    rec = {"program": inst.label, "mode": mode.name, "tool": mode.tool, "rep": rep}
    compile_wall = compile_cpu = 0.0
    for i, cmd in enumerate(mode.prepare(inst, wd)):
        w, c, rc, to = run_cmd(cmd, timeout, wd / "prep.out", wd / "prep.err")
        compile_wall += w
        compile_cpu += c
        if rc != 0 or to:
            err = (wd / "prep.err").read_text(errors="replace").strip().splitlines()
            rec.update(ok=False, note=f"compile step {i} failed (rc={rc}): {err[-1] if err else ''}",
                       traces=None, blocked=None, compile_s=compile_wall, analysis_s=None, total_s=None,
                       cpu_s=None, tool_seconds=None)
            return rec
    cmd = mode.analyse(inst, wd)
    w, c, rc, to = run_cmd(cmd, timeout, wd / "ana.out", wd / "ana.err")
    res = mode.parse((wd / "ana.out").read_text(errors="replace"), (wd / "ana.err").read_text(errors="replace"))
    if to:
        res["ok"], res["note"] = False, f"timeout {timeout}s"
    elif rc != 0 and res["ok"]:
        res["ok"], res["note"] = False, f"exit code {rc}"
    rec.update(res)
    rec.update(compile_s=compile_wall, analysis_s=w, total_s=compile_wall + w, cpu_s=compile_cpu + c,
               command=" ".join(cmd))
    return rec

def tool_version(cmd):
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
        return " ".join((out.stdout + out.stderr).split())[:300]
    except Exception as e:  # noqa
        return f"? ({e})"

def git_commit(path):
    try:
        d = Path(path).resolve().parent
        r = subprocess.run(["git", "-C", str(d), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10)
        if r.returncode == 0:
            d2 = subprocess.run(["git", "-C", str(d), "describe", "--tags", "--always"], capture_output=True,
                                text=True, timeout=10)
            return r.stdout.strip() + (f" ({d2.stdout.strip()})" if d2.returncode == 0 else "")
    except Exception:  # noqa
        pass
    return "?"

def machine():
    model = "?"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = "?"
    try:
        for line in open("/proc/meminfo"):
            if line.startswith("MemTotal"):
                mem = f"{int(line.split()[1]) / 1048576:.1f} GiB"
    except OSError:
        pass
    return f"{platform.system()} {platform.release()}, {os.cpu_count()} CPUs ({model}), {mem} RAM"

def loadavg():
    try:
        return open("/proc/loadavg").read().split()[:3]
    except OSError:
        return ["?"] * 3

# ---------------------------------------------------------------------------------------------
# Reporting.

def fmt_s(x):
    if x is None:
        return "—"
    return f"{x:.3f}" if x < 10 else f"{x:.2f}"

def fmt_n(x):
    return "—" if x is None else f"{x:,}"

def summarise(records, inst, mode_names):
    rows = []
    for name in mode_names:
        rs = [r for r in records if r["program"] == inst.label and r["mode"] == name]
        if not rs:
            continue
        ok = [r for r in rs if r["ok"]]
        traces = sorted({r["traces"] for r in rs if r.get("traces") is not None})
        blocked = sorted({r["blocked"] for r in rs if r.get("blocked") is not None})
        med = lambda k: statistics.median([r[k] for r in ok]) if len(ok) == len(rs) and ok else None  # noqa
        tool = rs[0]["tool"]
        exp = inst.expected.get(tool)
        notes = sorted({r.get("note") or "" for r in rs if not r["ok"]} - {""})
        rows.append({"mode": name, "tool": tool, "traces": traces, "blocked": blocked, "expected": exp,
                     "compile": med("compile_s"), "analysis": med("analysis_s"), "total": med("total_s"),
                     "cpu": med("cpu_s"), "ok": len(ok) == len(rs), "n": len(rs), "notes": notes})
    return rows

BUILD_NOTES = """\
## How the peers were built (outside this repository, under /tmp)

Debian 12, LLVM/clang 14 from Debian (`/usr/lib/llvm-14`), g++ 12. Build dependencies:
`apt-get install autoconf automake libtool libboost-dev libboost-system-dev libboost-test-dev
libhwloc-dev libedit-dev libffi-dev zlib1g-dev pkg-config python3`.

- GenMC v0.10.3 (tag `v0.10.3`, commit c26195b35cc3508b803c0382bac5b4ed4c2233f5), from
  https://github.com/MPI-SWS/genmc. The newest release there, v0.11.0, requires a C++23
  compiler (its configure stops with "A compiler with support for C++23 language features is
  required" under g++ 12); v0.10.3 is the newest that builds here and supports LLVM 14:
  `git checkout v0.10.3 && autoreconf --install && ./configure --with-llvm=/usr/lib/llvm-14 &&
  make -j2 genmc` (release build, -O2, about 3.5 min).
- Nidhugg master, commit 0aea4d237eefe492f09df8e23a54cbeba69c42de (`nidhugg --version`:
  Nidhugg 0.4), from https://github.com/nidhugg/nidhugg:
  `autoreconf --install && ./configure --with-llvm=/usr/lib/llvm-14 && make -j2`
  (release build, -O2 -DNDEBUG, about 1.5 min).

Run options (the programs are the unmodified files of benchmarks/qpor/):
- GenMC: `--sc` (SC instead of its default RC11; on small instances of these mutex-only
  programs RC11 gave the same counts), `--disable-sr` (a precaution: symmetry reduction may
  merge the executions of threads that run the same function with the same argument, like POL's
  workers; on small instances it did not change the counts), `--disable-estimation` (skips a sampling pass before the exploration), and for FIG1-RACY
  `--disable-race-detection` (it otherwise reports the data race on `c` as an error and stops).
  Also run with `--nthreads=2`, since irs uses two processes (verifier and program), and with
  `--disable-instruction-caching`, which is faster on some of these programs (MPAT, MPC, DISP)
  and much slower on others (PI); the fastest peer is the best of all these modes.
- Nidhugg: `--sc --optimal` (optimal DPOR) and, for Fig. 1, `--sc --source` (source-DPOR, its
  default); `--no-check-mutex-init` because it rejects mutexes initialised with
  `PTHREAD_MUTEX_INITIALIZER` (it wants `pthread_mutex_init`).
- PI is compiled with `-ffp-contract=off` for all tools: without it clang emits
  `llvm.fmuladd.f64`, which neither peer's interpreter supports ("Code generator does not
  support intrinsic function").
- printf and assert are the libc ones for irs; GenMC compiles against its own headers
  (`-I genmc/include`); Nidhugg treats printf as an external black box.

Trace counts: in the mutex-only programs every shared access is protected by a mutex, so all
three tools' equivalences (Mazurkiewicz traces for irs and Nidhugg; executions up to
reads-from and coherence for GenMC) coincide with the per-mutex orders of critical sections and
must give the count derived in the program's header. FIG1-RACY (Fig. 1 as printed, data races on
`c` and `x[i]`) differs on purpose: irs treats two reads of a location as dependent, so master's
read of `c` can fall before or after each of count's reads (4N-2 traces); GenMC and Nidhugg's
optimal DPOR only distinguish which write the read reads from (2N).
"""

def write_report(records, meta, out):
    mode_names = meta["modes"]
    by_label = {i.label: i for i in FULL + QUICK}
    insts = [by_label[l] for l in meta["labels"] if l in by_label]
    L = []
    L.append("# irs verify vs GenMC and Nidhugg on the QPOR benchmark programs\n")
    L.append(f"Generated by `benchmarks/peers/run.py` from runs on {meta['date']}; raw data in "
             f"`{Path(out).with_suffix('.csv').name}` and `{Path(out).with_suffix('.json').name}`.\n")
    L.append("## Setup\n")
    L.append(f"- Machine: {meta['machine']}; load average before the runs: {' '.join(meta['load_before'])} "
             f"(after: {' '.join(meta['load_after'])}).")
    for k in ("irs", "genmc", "nidhugg", "clang"):
        if meta.get(k):
            L.append(f"- {k}: `{meta[k]['path']}` — {meta[k]['version']}"
                     + (f"; git {meta[k]['commit']}" if meta[k].get("commit") not in (None, "?") else ""))
    L.append(f"- Repetitions: {meta['reps']} per (program, mode), the tools alternating within each "
             f"repetition; medians reported. Per-command time limit {meta['timeout']} s.")
    L.append(f"- Command: `{meta['command']}`\n")
    L.append("Columns: *traces* = what the tool reports as explored (irs: `traces`; GenMC: complete "
             "executions; Nidhugg: `Trace count`); *blocked* = sleep-set-blocked executions (irs `ssb`, "
             "Nidhugg `Sleepset-blocked trace count`, GenMC `blocked executions`); *compile* = the "
             "frontend step (`irs cc -O1`: instrumented native build and link; GenMC: `clang -S -emit-llvm`; "
             "Nidhugg: `clang -S -emit-llvm` + `nidhugg -transform`); *analysis* = wall time of the "
             "exploration command; *total* = compile + analysis; *CPU* = user+sys CPU seconds of both "
             "steps (irs runs the verifier and the program in two processes, so its CPU time can exceed "
             "its wall time; so can GenMC's with --nthreads=2). Seconds, median of the repetitions (each "
             "column separately). Ratios are irs (default optimal mode) / fastest peer mode: below 1 "
             "irs is faster.\n")

    summary, sections = [], []
    for inst in insts:
        rows = summarise(records, inst, mode_names)
        if not rows:
            continue
        S = [f"### {inst.label}\n",
             f"`{inst.source}` {' '.join(inst.dflags + inst.cflags)}; expected traces: "
             + ", ".join(f"{t} {fmt_n(v)}" for t, v in inst.expected.items()) + "\n",
             "| tool / mode | traces | blocked | compile | analysis | total | CPU | notes |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |"]
        for r in rows:
            tr = "/".join(fmt_n(t) for t in r["traces"]) or "—"
            if r["traces"] and (len(r["traces"]) > 1 or r["traces"][0] != r["expected"]):
                tr += f" (expected {fmt_n(r['expected'])})"
            bl = "/".join(fmt_n(b) for b in r["blocked"]) or "—"
            S.append(f"| {r['mode']} | {tr} | {bl} | {fmt_s(r['compile'])} | {fmt_s(r['analysis'])} | "
                     f"{fmt_s(r['total'])} | {fmt_s(r['cpu'])} | {'; '.join(r['notes'])} |")
        irs = next((r for r in rows if r["mode"] == "irs" and r["ok"]), None)
        peers = [r for r in rows if r["tool"] != "irs" and r["ok"]]
        if irs and peers:
            fa = min(peers, key=lambda r: r["analysis"])
            ft = min(peers, key=lambda r: r["total"])
            fc = min(peers, key=lambda r: r["cpu"])
            ra, rt, rc = irs["analysis"] / fa["analysis"], irs["total"] / ft["total"], irs["cpu"] / fc["cpu"]
            S.append(f"\nirs / fastest peer: analysis {ra:.2f} (vs {fa['mode']}, {fmt_s(fa['analysis'])} s), "
                     f"total {rt:.2f} (vs {ft['mode']}, {fmt_s(ft['total'])} s), CPU {rc:.2f} (vs {fc['mode']}, "
                     f"{fmt_s(fc['cpu'])} s).\n")
            summary.append((inst.label, irs, fa, ft, fc, ra, rt, rc))
        else:
            S.append("")
        sections += S
    if summary:
        L += summary_table(summary)
    L.append("## Per program\n")
    L += sections
    L.append(BUILD_NOTES)
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    Path(out).write_text("\n".join(L) + "\n")

def summary_table(summary):
    L = ["## Summary: irs (optimal) against the fastest peer\n",
         "| program | traces | irs analysis | fastest peer (analysis) | ratio | irs total | fastest peer (total) "
         "| ratio | irs CPU | least peer CPU | ratio |",
         "| --- | ---: | ---: | --- | ---: | ---: | --- | ---: | ---: | --- | ---: |"]
    for label, irs, fa, ft, fc, ra, rt, rc in summary:
        L.append(f"| {label} | {'/'.join(fmt_n(t) for t in irs['traces'])} | {fmt_s(irs['analysis'])} | "
                 f"{fa['mode']}: {fmt_s(fa['analysis'])} | {ra:.2f} | {fmt_s(irs['total'])} | {ft['mode']}: "
                 f"{fmt_s(ft['total'])} | {rt:.2f} | {fmt_s(irs['cpu'])} | {fc['mode']}: {fmt_s(fc['cpu'])} | "
                 f"{rc:.2f} |")
    n = len(summary)
    fa_n = sum(1 for s in summary if s[5] < 1)
    ft_n = sum(1 for s in summary if s[6] < 1)
    fc_n = sum(1 for s in summary if s[7] < 1)
    L.append(f"\nirs is faster than the fastest peer on {fa_n} of {n} programs in analysis time, on {ft_n} of "
             f"{n} in total time (compile included) and uses less CPU on {fc_n} of {n}.\n")
    return L

FIELDS = ["program", "mode", "tool", "rep", "traces", "blocked", "compile_s", "analysis_s", "total_s", "cpu_s",
          "tool_seconds", "ok", "note", "command"]

def save(records, meta, out):
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out.with_suffix(".csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS, extrasaction="ignore")
        w.writeheader()
        for r in records:
            w.writerow(r)
    # one record per line: compact but diffable
    body = ",\n".join(json.dumps(r, separators=(",", ":")) for r in records)
    out.with_suffix(".json").write_text('{"meta": ' + json.dumps(meta) + ',\n"records": [\n' + body + "\n]}\n")
    write_report(records, meta, out)

# ---------------------------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--irs", default=str(REPO / "target" / "release" / "irs"),
                    help="irs binary (default: target/release/irs); '' to skip")
    ap.add_argument("--genmc", help="GenMC binary (skipped if not given)")
    ap.add_argument("--genmc-include", help="GenMC's include directory (default: <dir of genmc>/include)")
    ap.add_argument("--genmc-threads", type=int, default=2,
                    help="also run GenMC with --nthreads=N (default 2; 1 to skip)")
    ap.add_argument("--no-genmc-nocache", dest="genmc_nocache", action="store_false",
                    help="do not also run GenMC with --disable-instruction-caching")
    ap.add_argument("--nidhugg", help="nidhugg binary (skipped if not given)")
    ap.add_argument("--clang", default=shutil.which("clang-14") or "clang",
                    help="clang of the LLVM the peers were built with (default: clang-14)")
    ap.add_argument("--reps", type=int, default=None, help="repetitions (default 3; 1 with --quick)")
    ap.add_argument("--timeout", type=float, default=600, help="per-command time limit in seconds")
    ap.add_argument("--only", help="comma-separated families (MPAT) or labels (MPAT(5))")
    ap.add_argument("--quick", action="store_true", help="small instances only")
    ap.add_argument("--out", default=None, help="Markdown output (default: benchmarks/results/peers/results.md,"
                    " quick.md with --quick); .csv and .json beside it")
    ap.add_argument("--workdir", help="scratch directory (default: a fresh one under /tmp)")
    ap.add_argument("--render", metavar="JSON", help="only rewrite the Markdown from a saved .json")
    a = ap.parse_args()
    if a.render:
        d = json.loads(Path(a.render).read_text())
        out = Path(a.out) if a.out else Path(a.render).with_suffix(".md")
        write_report(d["records"], d["meta"], out)
        print(f"wrote {out}")
        return
    if a.reps is None:
        a.reps = 1 if a.quick else 3
    out = Path(a.out) if a.out else REPO / "benchmarks" / "results" / "peers" / ("quick.md" if a.quick else "results.md")
    insts = QUICK if a.quick else FULL
    if a.only:
        want = {w.strip() for w in a.only.split(",") if w.strip()}
        insts = [i for i in insts if i.family in want or i.label in want]
    for k in ("irs", "genmc", "nidhugg"):
        p = getattr(a, k)
        if p and not (os.path.isfile(p) and os.access(p, os.X_OK)):
            sys.exit(f"{k}: {p} is not an executable file")
    modes = make_modes(a)
    if not modes:
        sys.exit("no tool given")
    wd = Path(a.workdir) if a.workdir else Path(tempfile.mkdtemp(prefix="irs-peers-", dir="/tmp"))
    wd.mkdir(parents=True, exist_ok=True)

    meta = {"date": datetime.datetime.now().strftime("%Y-%m-%d %H:%M"), "machine": machine(),
            "load_before": loadavg(), "reps": a.reps, "timeout": a.timeout,
            "modes": [m.name for m in modes], "labels": [i.label for i in insts],
            "command": "python3 benchmarks/peers/run.py " + " ".join(sys.argv[1:])}
    if a.irs:
        meta["irs"] = {"path": a.irs, "version": tool_version([a.irs, "--version"]), "commit": git_commit(REPO / "x")}
    if a.genmc:
        meta["genmc"] = {"path": a.genmc, "version": tool_version([a.genmc, "--version"]), "commit": git_commit(a.genmc)}
    if a.nidhugg:
        meta["nidhugg"] = {"path": a.nidhugg, "version": tool_version([a.nidhugg, "--version"]),
                           "commit": git_commit(a.nidhugg)}
    if a.genmc or a.nidhugg:
        meta["clang"] = {"path": a.clang, "version": tool_version([a.clang, "--version"]).split(" Target")[0]}
    print(f"# machine: {meta['machine']}; load {' '.join(meta['load_before'])}; workdir {wd}", flush=True)

    records = []
    for inst in insts:
        ms = [m for m in modes if mode_applies(m, inst)]
        for rep in range(a.reps):
            for m in ms:
                rec = run_one(m, inst, wd, a.timeout, rep)
                records.append(rec)
                print(f"{inst.label:16} {m.name:24} rep {rep}: traces {rec.get('traces')} blocked "
                      f"{rec.get('blocked')} compile {fmt_s(rec.get('compile_s'))} analysis "
                      f"{fmt_s(rec.get('analysis_s'))} cpu {fmt_s(rec.get('cpu_s'))} "
                      f"{'ok' if rec['ok'] else 'FAILED ' + str(rec.get('note'))}", flush=True)
    meta["load_after"] = loadavg()
    save(records, meta, out)
    if not a.workdir:
        shutil.rmtree(wd, ignore_errors=True)
    print(f"wrote {out} (.csv, .json beside it)")

if __name__ == "__main__":
    main()
