#!/usr/bin/env python3
"""`irs verify` on real-world-shaped programs that use condition variables, semaphores, rwlocks,
barriers and C11 atomics (benchmarks/sync_programs/*.c), optionally side by side with the
stateless model checkers GenMC and Nidhugg.

    python3 benchmarks/sync_programs/run.py                          # irs only
    python3 benchmarks/sync_programs/run.py --genmc /tmp/genmc/genmc --nidhugg /tmp/nidhugg/src/nidhuggc
    python3 benchmarks/sync_programs/run.py --only bounded_buffer,stencil --reps 1 ...
    python3 benchmarks/sync_programs/run.py --render benchmarks/results/sync_programs/results.json

Every program is run in its correct form (expected verdict: safe) and with -DBUG (a classic
bug of its family, described in the program's header; expected verdict: violation), and
bounded_buffer also with -DPRODUCERS=2. Each (instance, tool) is run --reps times (default 3),
the tools alternating within a repetition; counts must agree across repetitions, times are
medians. Each command gets the same time limit (--time-limit, default 120 s). Commands:

  * irs:     `irs cc -O1 -pthread -D... -o EXE PROG.c` (timed apart), then
             `irs verify --json --time-limit T --out-dir DIR -- EXE` (the JSON object on the last
             line of stdout is the result: verdict, traces, discarded, executions, seconds,
             peak_rss_kb);
  * GenMC:   `genmc --sc --disable-estimation -- [-D...] PROG.c` (its own clang step included);
             "Number of complete executions explored: N" is its count;
  * Nidhugg: `nidhuggc [-D...] -- PROG.c --sc --optimal` (the wrapper compiles with clang and
             runs nidhugg); "Trace count: N" is its count.

The peers do not model every primitive (GenMC v0.10.3: mutexes, barriers, atomics, but no
condition variables, rwlocks or semaphores; Nidhugg 0.4: mutexes, condition variables,
atomics, but no rwlocks, semaphores or barriers: it calls them as black boxes). Where a peer
lacks a primitive the program uses, it is run on the same source with the stand-ins of
peer_sync.h force-included (`-include peer_sync.h -DSHIM_...`, see that file), and the table
says so ("shim"). With --native-unsupported (default on; --no-native-unsupported to skip) each
such peer is also run once on the native primitive, under --unsupported-time-limit (default
30 s), to record what happens (a compile error, a black box that deadlocks or blocks for real,
or a wrong verdict).

Trace counts differ by design and are reported, never compared as equal: irs models
semaphores, barriers and rwlocks as events of their own, whose commuting operations (posts,
arrivals and departures, readers' operations) are independent, and builds condition variables
and `pthread_once` from internal locks and choices, counting the orders of those internal
events (docs/src/synchronisation.md; two reads of one word commute, the default; each instance
also runs once with `--equivalence mazurkiewicz`, every access to a word and every operation on
a primitive dependent); the peers model their primitives natively, or here through the
spin-wait stand-ins, and GenMC counts executions up to reads-from.

A tool process still running at the time limit is killed with its whole process group (each
command runs in a session of its own); irs enforces --time-limit itself and is killed only as a
backstop 60 s later.

Writes benchmarks/results/sync_programs/results.md (or --out) and results.json beside it
(every record, for --render). Python 3 standard library only.
"""
import argparse, datetime, json, os, platform, re, shlex, shutil, signal, statistics, subprocess, sys
import tempfile, threading, time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
SHIM = HERE / "peer_sync.h"

# ---------------------------------------------------------------------------------------------
# Programs.

# what each program synchronises with (beyond create/join), and what each peer models natively
PRIMITIVES = {
    "bounded_buffer": {"mutex", "cond"},
    "thread_pool": {"mutex", "cond"},
    "rw_cache": {"rwlock"},
    "stencil": {"barrier"},
    "treiber_stack": {"atomics"},
    "sem_pipeline": {"sem"},
    "thpool_like": {"mutex", "cond"},
}
MODELS = {
    "genmc": {"mutex", "barrier", "atomics"},
    "nidhugg": {"mutex", "cond", "atomics"},
}
SHIM_FLAG = {"cond": "SHIM_COND", "rwlock": "SHIM_RWLOCK", "sem": "SHIM_SEM", "barrier": "SHIM_BARRIER"}

DESCRIPTION = {
    "bounded_buffer": "ring of 2 under a mutex, condvars not_full/not_empty; 1 producer, 1 consumer, 3 items",
    "bounded_buffer -DPRODUCERS=2": "as above with 2 producers (6 items)",
    "bounded_buffer -DPROBE_RESUMED": "the correct buffer with an assertion some runs falsify (a consumer finds the ring full after a producer resumed from a wait): does the tool explore them",
    "bounded_buffer -DBUG": "`if` instead of `while` around the waits; 1 producer, 2 consumers, 2 items",
    "thread_pool": "2 workers, mutex + condvar queue, main submits 3 tasks, shutdown flag + broadcast",
    "thread_pool -DBUG": "a woken worker honours the shutdown before draining the queue",
    "rw_cache": "pthread_rwlock: 2 readers (1 lookup each), 1 writer (2 updates of a two-field entry)",
    "rw_cache -DBUG": "the writer takes the read lock",
    "stencil": "2 threads, 4 cells, 2 phases, pthread_barrier_wait after each phase",
    "stencil -DBUG": "barrier initialised with THREADS-1",
    "treiber_stack": "C11 compare_exchange push, 2 threads x 2 pushes, main pops all",
    "treiber_stack -DBUG": "push = atomic load + atomic store (no compare_exchange)",
    "sem_pipeline": "2 stages, channel of 1 slot with semaphores slots/items, 3 items",
    "sem_pipeline -DBUG": "stage 2 posts `slots` before reading the slot",
    "thpool_like -DWORKERS=1 -DJOBS=2": "C-Thread-Pool's shape (job queue, binary semaphore from mutex + condvar, keepalive, thpool_wait on an idle condvar), 1 worker, 2 jobs",
    "thpool_like -DWORKERS=2 -DJOBS=1": "the same, 2 workers, 1 job",
    "thpool_like -DWORKERS=2 -DJOBS=2": "the same, 2 workers, 2 jobs",
    "thpool_like -DWORKERS=1 -DJOBS=2 -DBUG": "a worker counts itself idle before its job runs (thpool_wait returns early)",
}

class Inst:
    def __init__(self, program, defines=(), bug=False, expected=None):
        self.program, self.defines, self.bug = program, list(defines), bug
        self.source = HERE / f"{program}.c"
        self.expected = expected or ("violation" if bug else "safe")

    @property
    def dflags(self):
        return [f"-D{k}" if v is None else f"-D{k}={v}" for k, v in self.defines] + (["-DBUG"] if self.bug else [])

    @property
    def label(self):
        return " ".join([self.program] + self.dflags)

    @property
    def slug(self):
        return re.sub(r"[^A-Za-z0-9]+", "_", self.label).strip("_")

    def peer_mode(self, tool):
        """('native', []) or ('shim', [flags]) for a peer."""
        missing = sorted(p for p in PRIMITIVES[self.program] if p not in MODELS[tool])
        if not missing:
            return "native", []
        return "shim", ["-include", str(SHIM)] + [f"-D{SHIM_FLAG[p]}" for p in missing]

    def missing(self, tool):
        return sorted(p for p in PRIMITIVES[self.program] if p not in MODELS[tool])

INSTANCES = []
for _p in ("bounded_buffer", "thread_pool", "rw_cache", "stencil", "treiber_stack", "sem_pipeline"):
    INSTANCES.append(Inst(_p))
    if _p == "bounded_buffer":
        INSTANCES.append(Inst(_p, [("PRODUCERS", 2)]))
        INSTANCES.append(Inst(_p, [("PROBE_RESUMED", None)], expected="violation"))
    INSTANCES.append(Inst(_p, bug=True))
for _w, _j in ((1, 2), (2, 1), (2, 2)):
    INSTANCES.append(Inst("thpool_like", [("WORKERS", _w), ("JOBS", _j)]))
INSTANCES.append(Inst("thpool_like", [("WORKERS", 1), ("JOBS", 2)], bug=True))

# ---------------------------------------------------------------------------------------------
# Running.

def run_cmd(cmd, timeout, cwd, kill_after=None):
    """Run cmd in a session of its own; at `kill_after` seconds (default: timeout) SIGKILL its
    process group. Returns dict(out, err, rc, wall, maxrss_kb, cpu, killed)."""
    kill_after = timeout if kill_after is None else kill_after
    with tempfile.TemporaryFile() as fo, tempfile.TemporaryFile() as fe:
        t0 = time.monotonic()
        p = subprocess.Popen(cmd, stdout=fo, stderr=fe, stdin=subprocess.DEVNULL, cwd=str(cwd),
                             start_new_session=True)
        fired = []

        def kill():
            fired.append(1)
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        timer = threading.Timer(kill_after, kill)
        timer.start()
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.monotonic() - t0
        timer.cancel()
        # whatever the leader left behind in its group (a compiler, an interpreter's child) goes too
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        p.returncode = os.waitstatus_to_exitcode(status)
        fo.seek(0)
        fe.seek(0)
        out, err = fo.read().decode(errors="replace"), fe.read().decode(errors="replace")
    return {"out": out, "err": err, "rc": p.returncode, "wall": wall, "maxrss_kb": ru.ru_maxrss,
            "cpu": ru.ru_utime + ru.ru_stime, "killed": bool(fired)}

def first_line(text, pattern):
    m = re.search(pattern, text, re.M)
    return m.group(1).strip() if m else None

def run_irs(a, inst, wd, equivalence=None):
    """irs on one instance; `equivalence`: `--equivalence NAME` (recorded as tool `irs-NAME`)."""
    exe = wd / f"{inst.slug}.irs"
    rec = {"tool": "irs" if equivalence is None else f"irs-{equivalence}", "how": "native"}
    cc = [a.irs, "cc", "-O1", "-pthread", *inst.dflags, "-o", str(exe), str(inst.source)]
    r = run_cmd(cc, a.time_limit, wd)
    rec["compile_s"] = r["wall"]
    if r["rc"] != 0 or r["killed"]:
        tail = (r["err"].strip().splitlines() or ["?"])[-1]
        rec.update(verdict="error", note=f"irs cc failed (rc {r['rc']}): {tail}", command=shlex.join(cc))
        return rec
    bugs = wd / "bugs"
    eq = ["--equivalence", equivalence] if equivalence else []
    cmd = [a.irs, "verify", "--json", "--time-limit", f"{a.time_limit:g}", *eq, "--out-dir", str(bugs), "--", str(exe)]
    r = run_cmd(cmd, a.time_limit, wd, kill_after=a.time_limit + 60)
    rec.update(command=shlex.join(cmd), wall=r["wall"], total_s=rec["compile_s"] + r["wall"],
               maxrss_wait4_kb=r["maxrss_kb"], rc=r["rc"])
    d = None
    for line in reversed(r["out"].strip().splitlines()):
        if line.startswith("{"):
            try:
                d = json.loads(line)
            except ValueError:
                pass
            break
    if d is None:
        tail = (r["err"].strip().splitlines() or r["out"].strip().splitlines() or ["no output"])[-1]
        rec.update(verdict="error", note=("killed at the time limit; " if r["killed"] else "") + f"rc {r['rc']}: {tail}")
        return rec
    rec.update({k: d.get(k) for k in ("traces", "discarded", "executions", "ssb", "seconds", "peak_rss_kb",
                                      "racy_words", "restarts", "stopped", "runs", "events")})
    rec["verdict"] = "timeout" if d.get("verdict") == "incomplete" and "time limit" in str(d.get("stopped")) \
        else d.get("verdict")
    # Waits on condition variables make the verdict `safe-within-bounds` (no spurious wake-up
    # explored); neither peer explores them: compared as `safe`, and said in the row's note.
    if rec["verdict"] == "safe-within-bounds" and all(str(b).startswith("no spurious wake-ups") for b in d.get("bounds") or []):
        rec["verdict"] = "safe"
        rec["bounded"] = "no spurious wake-ups explored"
    rec["races"] = len(d.get("races") or [])
    v = d.get("violations") or []
    rec["found"] = [f"{x.get('kind')}: {x.get('message')}" for x in v]
    rec["blocked"] = d.get("ssb")
    return rec

def parse_peer(tool, r):
    text = r["out"] + "\n" + r["err"]
    rec = {"rc": r["rc"], "wall": r["wall"], "maxrss_wait4_kb": r["maxrss_kb"], "cpu": r["cpu"]}
    if tool == "genmc":
        n = first_line(text, r"Number of complete executions explored: (\d+)")
        b = first_line(text, r"Number of blocked executions seen: (\d+)")
        rec["traces"] = int(n) if n else None
        rec["blocked"] = int(b) if b else (0 if n else None)
    else:
        n = first_line(text, r"Trace count: (\d+)")  # case-sensitive: not "Sleepset-blocked trace count"
        blocked = 0
        for kind in ("Sleepset-blocked", "Assume-blocked", "Await-blocked"):
            b = first_line(text, kind + r" trace count: (\d+)")
            blocked += int(b) if b else 0
        rec["traces"] = int(n) if n else None
        rec["blocked"] = blocked if n else None
    blackbox = sorted(set(re.findall(r"Calling unknown external function (\w+) as blackbox", text)) - {"printf"})
    unsupported = sorted(set(re.findall(r"Unsupported pthread function: (\w+)", text)))
    notes = []
    if blackbox:
        notes.append("called as black box: " + ", ".join(blackbox))
    elif unsupported:
        notes.append("unsupported: " + ", ".join(unsupported))
    if r["killed"]:
        rec["verdict"] = "timeout"
        cpu = r["cpu"]
        notes.append(f"killed at the time limit ({cpu:.1f} s CPU: " + ("blocked, not exploring)" if cpu < 0.5 * r["wall"]
                                                                     else "exploring)"))
    elif "No errors were detected" in text:
        rec["verdict"] = "safe"
    else:
        err = None
        if tool == "genmc":
            kind = first_line(text, r"^Error: (.*)$")
            what = first_line(text, r"^(Assertion violation: .*)$")
            if kind:
                err = kind + (" " + what if what else "")
        else:
            err = first_line(text, r"^\s*Error: (.*)$")
        comp = first_line(text, r"(error: .*)$")
        if err and err.startswith("Nondeterminism detected"):
            rec["verdict"] = "tool error"
            notes.append(err[:160])
        elif err:
            rec["verdict"] = "violation"
            rec["found"] = [err[:200]]
        elif comp:
            rec["verdict"] = "compile error"
            notes.append(comp[:160])
        else:
            rec["verdict"] = "error"
            tail = (r["err"].strip().splitlines() or r["out"].strip().splitlines() or ["no output"])[-1]
            notes.append(f"rc {r['rc']}: {tail[:160]}")
    rec["note"] = "; ".join(notes)
    return rec

def peer_cmd(a, tool, inst, extra):
    if tool == "genmc":
        return [a.genmc, "--sc", "--disable-estimation", "--", *extra, *inst.dflags, str(inst.source)]
    return [a.nidhugg, *extra, *inst.dflags, "--", str(inst.source), "--sc", "--optimal"]

def run_peer(a, tool, inst, wd, native=False, limit=None):
    how, extra = ("native", []) if native else inst.peer_mode(tool)
    cmd = peer_cmd(a, tool, inst, extra)
    r = run_cmd(cmd, limit or a.time_limit, wd)
    rec = {"tool": tool, "how": how, "command": shlex.join(cmd)}
    rec.update(parse_peer(tool, r))
    return rec

# ---------------------------------------------------------------------------------------------
# Reporting.

def machine():
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    mem = next((l.split(":", 1)[1].strip() for l in open("/proc/meminfo") if l.startswith("MemTotal")), "?")
    return f"{platform.system()} {platform.release()}, {os.cpu_count()} CPUs ({cpu}), {mem} RAM"

def git_rev():
    try:
        rev = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True,
                             text=True, timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10).stdout.strip()
        return rev + (" (with uncommitted changes)" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        return "?"

def version(cmd):
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
        return " ".join((r.stdout + r.stderr).split())[:200]
    except (OSError, subprocess.SubprocessError) as e:
        return f"? ({e})"

def fs(x):
    if x is None:
        return "—"
    return f"{x:.3f}" if x < 10 else f"{x:.1f}"

def fn(x):
    return "—" if x is None else f"{x:,}"

def fmb(kb):
    return "—" if not kb else f"{kb / 1024:.0f}"

def merge(recs):
    """One row from the repetitions of an (instance, tool): counts and verdicts as sets, times
    as medians."""
    if not recs:
        return None
    row = dict(recs[-1])
    for k in ("traces", "blocked", "discarded", "executions", "verdict"):
        vals = sorted({str(r.get(k)) for r in recs})
        if len(vals) > 1:
            row[k] = "/".join(vals)
    for k in ("seconds", "wall", "compile_s", "total_s", "peak_rss_kb", "maxrss_wait4_kb"):
        vals = [r[k] for r in recs if isinstance(r.get(k), (int, float))]
        row[k] = statistics.median(vals) if vals else None
    row["n"] = len(recs)
    return row

def msg(text):
    """A tool's message for a Markdown table cell: no directories, no backticks or pipes."""
    return str(text).replace(str(HERE) + "/", "").replace("`", "'").replace("|", "\\|")

def vcell(row, expected):
    if row is None:
        return "—"
    v = str(row.get("verdict"))
    return f"**{v}**" if v != expected else v

def write_report(records, meta, out):
    tools = meta["tools"]
    labels = meta["labels"]
    by = {}
    for r in records:
        by.setdefault((r["instance"], r["tool"], r.get("native_probe", False)), []).append(r)
    L = ["# Real programs with condition variables, semaphores, rwlocks, barriers and atomics\n"]
    L.append(f"Generated by `benchmarks/sync_programs/run.py` from runs on {meta['date']}; every record in "
             f"`{Path(out).with_suffix('.json').name}`.\n")
    L.append(f"- Command: `{meta['command']}` (from the repository root)")
    L.append(f"- Date: {meta['date']}; repository at {meta['commit']}")
    L.append(f"- Machine: {meta['machine']}; load average before: {meta['load_before']}, after: "
             f"{meta.get('load_after', '?')}")
    for t in ("irs", "genmc", "nidhugg"):
        if meta.get(t):
            L.append(f"- {t}: `{meta[t]['path']}` ({meta[t]['version']})")
    L.append(f"- Time limit per command: {meta['time_limit']:g} s; {meta['reps']} repetition(s) per (instance, tool), "
             "the tools alternating; times are medians, counts and verdicts must agree across repetitions "
             "(a cell with `a/b` shows they did not).\n")
    L.append("## What the numbers mean\n")
    L.append("- *verdict*: irs's `verdict` (`safe`: every execution explored, none failed, shown also for "
             "`safe-within-bounds` whose one bound is that no spurious wake-up of a condition-variable wait was explored, "
             "which neither peer explores either; `violation`; `timeout`: "
             "stopped at the time limit); GenMC and Nidhugg: `safe` = \"No errors were detected\", `violation` = the "
             "error they report (an assertion, or GenMC's \"Non-atomic race\"), `timeout` = killed at the limit. "
             "**Bold**: not the expected verdict (correct programs `safe`, `-DBUG` variants `violation`).")
    L.append("- *traces*: irs `traces` (complete executions that are not sleep-set blocked, one per trace with "
             "reads of a word commuting, the default; *irs traces, Mazurkiewicz*: the same with "
             "`--equivalence mazurkiewicz`, every access to a word dependent, one run); GenMC \"Number of complete executions explored\"; Nidhugg \"Trace count\". *blocked*: "
             "irs `ssb`; GenMC \"blocked executions seen\"; Nidhugg sleep-set + assume + await-blocked traces "
             "(with the stand-ins, mostly spin-waits cut short by an assume). *discarded*: irs's executions "
             "ended by a failed assumption or with a thread halted in a spin-wait (none of these programs spins). "
             "*executions*: irs's explored leaves (traces + SSB).")
    L.append("- *irs s*: the verifier's own `seconds`; *irs cc s*: the `irs cc -O1 -pthread` step (compile, "
             "instrument, link); *irs cc + verify s*: the wall time of both commands; peers' *s*: the wall time of "
             "the whole command, their clang step included (so compare it with *irs cc + verify s*). "
             "*MB*: peak memory (irs: the verifier's `peak_rss_kb`; peers: `ru_maxrss` of the command and the "
             "children it waited for, from `wait4`).")
    L.append("- *how*: `native` = the peer ran the program as written; `shim` = with the spin-wait stand-ins of "
             "`peer_sync.h` for the primitives it does not model (`-include peer_sync.h -DSHIM_...`).")
    L.append("- On a `-DBUG` variant irs explores every execution and reports every distinct bug (so its count "
             "and time cover the whole space), while GenMC and Nidhugg stop at the first error: their counts "
             "there are what they explored before it, and the times are not comparable.\n")
    L.append("Trace counts differ by design and are not expected to be equal: irs models semaphores, barriers "
             "and rwlocks as events of their own (posts, arrivals and departures, and readers' operations "
             "commute) and builds condition variables and `pthread_once` from internal locks and choices "
             "(docs/src/synchronisation.md), counting the orders of those internal events (two reads of one "
             "word commute, as for Nidhugg); the peers model their primitives natively, or here through spin-wait stand-ins whose "
             "extra reads and blocked executions are their own, and GenMC counts executions up to reads-from "
             "(two reads of the same write are not ordered).\n")

    L.append("## Side by side\n")
    hdr = "| instance | expected | irs verdict | irs traces | irs traces, Mazurkiewicz | irs s | irs cc + verify s |"
    sep = "| --- | --- | --- | ---: | ---: | ---: | ---: |"
    for t in tools:
        if t == "irs":
            continue
        name = {"genmc": "GenMC", "nidhugg": "Nidhugg"}[t]
        hdr += f" {name} how | {name} verdict | {name} traces | {name} blocked | {name} s |"
        sep += " --- | --- | ---: | ---: | ---: |"
    L += [hdr, sep]
    for lab in labels:
        exp = meta["expected"][lab]
        irs = merge(by.get((lab, "irs", False), []))
        mz = merge(by.get((lab, "irs-mazurkiewicz", False), []))
        mz_cell = fn(mz and mz.get("traces")) + (" (timeout)" if mz and mz.get("verdict") == "timeout" else "")
        line = (f"| `{lab}` | {exp} | {vcell(irs, exp)} | {fn(irs and irs.get('traces'))} | {mz_cell} | "
                f"{fs(irs and irs.get('seconds'))} | {fs(irs and irs.get('total_s'))} |")
        for t in tools:
            if t == "irs":
                continue
            p = merge(by.get((lab, t, False), []))
            if p is None:
                line += " — | — | — | — | — |"
            else:
                line += (f" {p['how']} | {vcell(p, exp)} | {fn(p.get('traces'))} | {fn(p.get('blocked'))} | "
                         f"{fs(p.get('wall'))} |")
        L.append(line)
    L.append("")

    if "irs" in tools:
        L.append("## irs in detail\n")
        L.append("| instance | what | verdict | traces | discarded | executions | SSB | irs s | irs cc s | MB | racy words | found |")
        L.append("| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
        for lab in labels:
            r = merge(by.get((lab, "irs", False), []))
            if r is None:
                continue
            found = "; ".join(f"`{msg(f)}`" for f in (r.get("found") or [])) or msg(r.get("note") or "")
            L.append(f"| `{lab}` | {DESCRIPTION.get(lab, '')} | {vcell(r, meta['expected'][lab])} | {fn(r.get('traces'))} | "
                     f"{fn(r.get('discarded'))} | {fn(r.get('executions'))} | {fn(r.get('ssb'))} | {fs(r.get('seconds'))} | "
                     f"{fs(r.get('compile_s'))} | {fmb(r.get('peak_rss_kb'))} | {fn(r.get('racy_words'))} | {found} |")
        L.append("")
        L.append("*racy words*: memory words irs found accessed by two threads in an order no synchronisation fixes "
                 "(data races, atomics, and reads no synchronisation orders: the readers of `rw_cache` and the "
                 "neighbours' boundary cells of `stencil` read the same words concurrently, which is not a data "
                 "race); irs reports each with a `race:` line and counts their accesses as events.\n")

    peers = [t for t in tools if t != "irs"]
    if peers:
        L.append("## The peers in detail\n")
        L.append("| instance | tool | how | verdict | traces | blocked | s | MB | found / notes |")
        L.append("| --- | --- | --- | --- | ---: | ---: | ---: | ---: | --- |")
        for lab in labels:
            for t in peers:
                p = merge(by.get((lab, t, False), []))
                if p is None:
                    continue
                found = "; ".join(f"`{msg(f)}`" for f in (p.get("found") or []))
                note = "; ".join(x for x in (found, msg(p.get("note") or "")) if x)
                L.append(f"| `{lab}` | {t} | {p['how']} | {vcell(p, meta['expected'][lab])} | {fn(p.get('traces'))} | "
                         f"{fn(p.get('blocked'))} | {fs(p.get('wall'))} | {fmb(p.get('maxrss_wait4_kb'))} | {note} |")
        L.append("")
        probes = [r for r in records if r.get("native_probe")]
        if probes:
            L.append("## The peers on the primitives they do not model\n")
            L.append(f"Each peer run once on the program as written where it lacks a primitive the program uses "
                     f"(time limit {meta['unsupported_time_limit']:g} s). This is why the tables above use the "
                     "stand-ins for those.\n")
            L.append("| instance | tool | lacks | verdict | traces | s | CPU s | what happened |")
            L.append("| --- | --- | --- | --- | ---: | ---: | ---: | --- |")
            for r in probes:
                found = "; ".join(f"`{msg(f)}`" for f in (r.get("found") or []))
                note = "; ".join(x for x in (found, msg(r.get("note") or "")) if x)
                L.append(f"| `{r['instance']}` | {r['tool']} | {', '.join(r.get('lacks', []))} | "
                         f"{vcell(r, meta['expected'][r['instance']])} | {fn(r.get('traces'))} | {fs(r.get('wall'))} | "
                         f"{fs(r.get('cpu'))} | {note} |")
            L.append("")

    # data-driven summary
    L.append("## Summary (computed from the records)\n")
    for t in tools:
        rows = [(lab, merge(by.get((lab, t, False), []))) for lab in labels]
        rows = [(lab, r) for lab, r in rows if r]
        if not rows:
            continue
        ok = sum(1 for lab, r in rows if r.get("verdict") == meta["expected"][lab])
        bad = [f"`{lab}`: {r.get('verdict')}" for lab, r in rows if r.get("verdict") != meta["expected"][lab]]
        shim = sum(1 for _, r in rows if r.get("how") == "shim")
        L.append(f"- {t}: expected verdict on {ok} of {len(rows)} instances" + (f" ({shim} with the stand-ins)" if shim else "")
                 + (("; not: " + ", ".join(bad)) if bad else "") + ".")
    L.append("")
    if meta.get("analysis"):
        L.append("## Analysis\n")
        L.append(meta["analysis"].rstrip() + "\n")
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    Path(out).write_text("\n".join(L) + "\n")

def save(records, meta, out):
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    body = ",\n".join(json.dumps(r, separators=(",", ":")) for r in records)
    out.with_suffix(".json").write_text('{"meta": ' + json.dumps(meta) + ',\n"records": [\n' + body + "\n]}\n")
    write_report(records, meta, out)

# ---------------------------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--irs", default=str(REPO / "target" / "release" / "irs"), help="irs binary ('' to skip irs)")
    ap.add_argument("--genmc", help="GenMC binary (skipped if not given)")
    ap.add_argument("--nidhugg", help="nidhuggc wrapper script (skipped if not given)")
    ap.add_argument("--time-limit", type=float, default=120.0, help="seconds per command (default 120)")
    ap.add_argument("--reps", type=int, default=3, help="repetitions per (instance, tool) (default 3)")
    ap.add_argument("--only", help="comma-separated programs (bounded_buffer) or instance labels")
    ap.add_argument("--no-native-unsupported", dest="native_unsupported", action="store_false",
                    help="do not run the peers on the native primitives they lack")
    ap.add_argument("--unsupported-time-limit", type=float, default=30.0,
                    help="time limit of those runs (default 30 s)")
    ap.add_argument("--out", default=str(REPO / "benchmarks" / "results" / "sync_programs" / "results.md"))
    ap.add_argument("--analysis", help="a Markdown file whose text goes into the report as its Analysis section")
    ap.add_argument("--workdir", help="scratch directory (default: a fresh one under /tmp, removed at the end)")
    ap.add_argument("--render", metavar="JSON", help="only rewrite the Markdown from a saved .json "
                    "(with --analysis: replace its analysis)")
    a = ap.parse_args()
    analysis = Path(a.analysis).read_text() if a.analysis else None
    if a.render:
        d = json.loads(Path(a.render).read_text())
        if analysis is not None:
            d["meta"]["analysis"] = analysis
            save(d["records"], d["meta"], a.out)
        else:
            write_report(d["records"], d["meta"], a.out)
        print(f"wrote {a.out}")
        return 0

    tools = [t for t in ("irs", "genmc", "nidhugg") if getattr(a, t)]
    for t in tools:
        p = getattr(a, t)
        if not (os.path.isfile(p) and os.access(p, os.X_OK)):
            sys.exit(f"{t}: {p} is not an executable file")
    if not tools:
        sys.exit("no tool given")
    insts = INSTANCES
    if a.only:
        want = {w.strip() for w in a.only.split(",") if w.strip()}
        insts = [i for i in insts if i.program in want or i.label in want]
    wd = Path(a.workdir) if a.workdir else Path(tempfile.mkdtemp(prefix="irs-sync-", dir="/tmp"))
    wd.mkdir(parents=True, exist_ok=True)
    meta = {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "machine": machine(), "commit": git_rev(), "load_before": " ".join(f"{x:.2f}" for x in os.getloadavg()),
            "time_limit": a.time_limit, "unsupported_time_limit": a.unsupported_time_limit, "reps": a.reps,
            "tools": tools, "labels": [i.label for i in insts], "expected": {i.label: i.expected for i in insts},
            "command": "python3 benchmarks/sync_programs/run.py" + ("" if len(sys.argv) == 1 else " " + shlex.join(sys.argv[1:]))}
    if a.irs:
        meta["irs"] = {"path": a.irs, "version": version([a.irs, "--version"])}
    if a.genmc:
        meta["genmc"] = {"path": a.genmc, "version": version([a.genmc, "--version"])}
    if a.nidhugg:
        meta["nidhugg"] = {"path": a.nidhugg, "version": version([a.nidhugg, "--version"])}
    if analysis is not None:
        meta["analysis"] = analysis
    print(f"# {meta['machine']}; load {meta['load_before']}; workdir {wd}", flush=True)

    records = []

    def show(inst, rec, rep):
        extra = f" [{rec['how']}]" if rec["tool"] != "irs" else ""
        secs = rec.get("seconds") if rec["tool"] == "irs" else rec.get("wall")
        print(f"{inst.label:32} {rec['tool'] + extra:18} rep {rep}: {str(rec.get('verdict')):13} traces "
              f"{rec.get('traces')} blocked {rec.get('blocked')} {fs(secs)} s"
              + (f"  {rec['note']}" if rec.get("note") else "")
              + (f"  {rec['found'][0][:90]}" if rec.get("found") else ""), flush=True)

    try:
        for inst in insts:
            for rep in range(a.reps):
                for t in tools:
                    rec = run_irs(a, inst, wd) if t == "irs" else run_peer(a, t, inst, wd)
                    rec.update(instance=inst.label, rep=rep)
                    records.append(rec)
                    show(inst, rec, rep)
            if "irs" in tools:
                # The same instance with every access to a word dependent, once: the count the
                # reads-commute default is compared with.
                rec = run_irs(a, inst, wd, equivalence="mazurkiewicz")
                rec.update(instance=inst.label, rep=0)
                records.append(rec)
                show(inst, rec, 0)
            if a.native_unsupported:
                for t in tools:
                    if t != "irs" and inst.missing(t):
                        rec = run_peer(a, t, inst, wd, native=True, limit=a.unsupported_time_limit)
                        rec.update(instance=inst.label, rep=0, native_probe=True, lacks=inst.missing(t))
                        records.append(rec)
                        show(inst, rec, "native")
    finally:
        meta["load_after"] = " ".join(f"{x:.2f}" for x in os.getloadavg())
        save(records, meta, a.out)
        if not a.workdir:
            shutil.rmtree(wd, ignore_errors=True)
    print(f"wrote {a.out} and {Path(a.out).with_suffix('.json').name} beside it")
    return 0

if __name__ == "__main__":
    sys.exit(main())
