#!/usr/bin/env python3
"""The long differential campaign of `irs verify` against the brute-force oracle (issue 18,
item 4), and optionally the same programs side by side with Nidhugg and GenMC.

    python3 benchmarks/differential/run.py                       # 3000 programs from seed 1000 (~11 min, 2 cores)
    python3 benchmarks/differential/run.py --programs 200 --first 5000
    python3 benchmarks/differential/run.py --nidhugg /tmp/nidhugg/src/nidhugg --genmc /tmp/genmc/genmc
    python3 benchmarks/differential/run.py --reuse --nidhugg ... # peers only, on the last campaign's programs

The campaign is the test tests/differential.rs run with a range of seeds (one place generates
and checks the programs; see tests/common/program_gen.rs for what they contain):

    IRS_DIFF_FIRST=S IRS_DIFF_SEEDS=N IRS_DIFF_KEEP=DIR cargo test --release --test differential \\
        irs_verify -- --nocapture

Every program is built with `irs cc -O1 -pthread`, explored by the oracle (every interleaving,
grouped into traces under both equivalences) and by `irs verify` in six modes (`--optimal
--no-snapshots`, `--optimal --snapshot-gap 1`, `--k 1`, `--k 2`, `--optimal --no-race-free-words`,
with reads commuting, and `--optimal --equivalence mazurkiewicz`), comparing the
verdict, the set of bugs (every violation's schedule replayed) and the traces (every
`--schedules-out` line replayed). The test writes each program's source (`seed_N.c`) and one
JSON line per program (`results.jsonl`) into DIR (--keep, default target/differential-campaign),
which this script reads to write benchmarks/results/differential/results.md: the command, date,
machine, programs tried, features, traces, time and every disagreement with its seed, the modes
that disagree and how (a disagreement is never hidden: the script exits 1 when there is one).

With --nidhugg and/or --genmc (built outside the repository, never committed; see
benchmarks/peers/run.py for how they were built), every program of the campaign is also run by
  * GenMC:   clang-14 -S -emit-llvm (the command GenMC runs itself, with -I<genmc>/include), then
             genmc --sc --disable-sr --disable-estimation --disable-race-detection
             --input-from-bitcode-file prog.ll
             (--disable-race-detection: the programs race on plain ints on purpose; GenMC would stop
             at the first race otherwise);
  * Nidhugg: clang-14 -S -emit-llvm -g, nidhugg --sc --optimal --no-check-mutex-init -transform,
             then nidhugg prog.ll --sc --optimal --no-check-mutex-init;
and its verdict (a bug found or not) is compared with the oracle's (ground truth) and with irs's
(`--optimal --no-snapshots`). The peers get the same source with one shim inserted after the
includes: `calloc` as `malloc` plus zeroing (GenMC's headers have no `calloc`). Constructs a peer
does not model are reported as "unsupported by peer", not as disagreements: a program is
unsupported by a peer when it uses what the peer cannot run (`exit`/`_exit` anywhere, which both
treat as an unknown external function or crash on, and `pthread_detach`, which neither has) or
when the peer's output says so (an unknown external function, an unsupported call, an LLVM error,
no verdict). Trace counts use other equivalences (GenMC: reads-from; Nidhugg's optimal DPOR: its
own), so they are compared only as information. Neither peer reports deadlocks as errors (GenMC
counts blocked executions, Nidhugg traces), so programs whose only bugs are deadlocks are counted
apart; and every verdict disagreement is run again with the globals `_Atomic int` (GenMC, with race
detection off, need not explore every order of racing non-atomic writes, which are undefined
behaviour in its model). Writes benchmarks/results/differential/peers.md.

Python 3 standard library only.
"""
import argparse, collections, datetime, json, os, platform, re, shlex, shutil, signal, subprocess, sys, time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
OUT = REPO / "benchmarks" / "results" / "differential"
MODES = ["optimal-nosnap", "optimal-gap1", "k1", "k2", "optimal-all-words", "optimal-mazurkiewicz"]
MODE_ARGS = {
    "optimal-nosnap": "--optimal --no-snapshots",
    "optimal-gap1": "--optimal --snapshot-gap 1",
    "k1": "--k 1",
    "k2": "--k 2",
    "optimal-all-words": "--optimal --no-race-free-words",
    "optimal-mazurkiewicz": "--optimal --equivalence mazurkiewicz",
}
RACE_FREE_MODES = {"optimal-nosnap", "optimal-gap1", "k1", "k2"}


def env():
    e = dict(os.environ)
    e.setdefault("LLVM_SYS_140_PREFIX", "/usr/lib/llvm-14")
    return e


def machine():
    cpu = "unknown"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{os.cpu_count()} cores (nproc), {cpu}, {platform.system()} {platform.release()}"


def git_rev():
    try:
        rev = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=REPO, capture_output=True,
                               text=True).stdout.strip()
        return (rev + (" (with uncommitted changes)" if dirty else "")) if rev else "unknown"
    except OSError:
        return "unknown"


# ---------------------------------------------------------------------------------------------
# The campaign.

def build():
    for cmd in (["cargo", "build", "--release"], ["cargo", "test", "--release", "--test", "differential", "--no-run"]):
        print("+", " ".join(cmd), flush=True)
        r = subprocess.run(cmd, cwd=REPO, env=env())
        if r.returncode != 0:
            sys.exit(f"build failed: {' '.join(cmd)}")


def campaign(a, keep):
    keep.mkdir(parents=True, exist_ok=True)
    e = env()
    e.update(IRS_DIFF_FIRST=str(a.first), IRS_DIFF_SEEDS=str(a.programs), IRS_DIFF_KEEP=str(keep),
             IRS_DIFF_JOBS=str(a.jobs))
    cmd = ["cargo", "test", "--release", "--test", "differential", "irs_verify", "--", "--nocapture"]
    shown = f"IRS_DIFF_FIRST={a.first} IRS_DIFF_SEEDS={a.programs} IRS_DIFF_JOBS={a.jobs} IRS_DIFF_KEEP={keep} " + " ".join(cmd)
    print("+", shown, flush=True)
    log = keep / "campaign.log"
    t0 = time.monotonic()
    with open(log, "w") as f:
        p = subprocess.Popen(cmd, cwd=REPO, env=e, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        n = 0
        for line in p.stdout:
            f.write(line)
            if line.startswith("seed "):
                n += 1
                if "DISAGREEMENT" in line or n % 100 == 0:
                    print(f"  [{n}/{a.programs}, {time.monotonic() - t0:.0f} s] {line.rstrip()[:150]}", flush=True)
            elif line.startswith(("TOTAL", "====", "features:", "verdicts", "oracle:")):
                print("  " + line.rstrip(), flush=True)
        rc = p.wait()
    seconds = time.monotonic() - t0
    meta = {"command": shown, "argv": ["python3", "benchmarks/differential/run.py", *sys.argv[1:]], "seconds": seconds, "exit": rc, "date": datetime.datetime.now().isoformat(timespec="seconds"),
            "machine": machine(), "rev": a.revision or git_rev(), "first": a.first, "programs": a.programs, "jobs": a.jobs}
    (keep / "campaign.json").write_text(json.dumps(meta, indent=1))
    return meta


def load(keep):
    rows = []
    with open(keep / "results.jsonl") as f:
        for line in f:
            line = line.strip()
            if line:
                rows.append(json.loads(line))
    rows.sort(key=lambda r: r["seed"])
    return rows


def norm_failure(text):
    """A failure message without the seed, numbers and schedules: its kind."""
    h = text.split("\n")[0]
    h = re.sub(r"^seed_\d+ \[[^\]]+\]: ", "", h)
    h = re.sub(r"^seed \d+: ", "", h)
    h = re.sub(r"`[^`]*`", "`…`", h)
    h = re.sub(r"\[[\d,]*\]", "[…]", h)
    h = re.sub(r"\{[^}]*\}", "{…}", h)
    h = re.sub(r"\d+", "N", h)
    return h[:140]


KINDS = [
    (r"misses the trace|misses \d+ of the oracle", "misses traces"),
    (r"traces = \d+, the oracle has", "trace count differs"),
    (r"verdict `", "wrong verdict"),
    (r"misses the bug", "misses a bug"),
    (r"exit code", "wrong exit code"),
    (r"a trace the oracle does not have", "a trace the oracle does not have"),
    (r"explored more than once", "a trace explored twice"),
    (r"expected 0 in optimal mode", "SSB in optimal mode"),
    (r"irs verify failed", "irs verify failed"),
    (r"\[oracle\]", "the oracle failed"),
    (r"does not build|executor does not start", "does not build or start"),
    (r"which the oracle never saw", "a bug the oracle never saw"),
    (r"replays to|replaying", "a schedule does not replay to what it should"),
]


def failure_kind(text):
    head = text.split("\n")[0]
    for pat, kind in KINDS:
        if re.search(pat, head):
            return kind
    return norm_failure(text)


def classify(row):
    """(which modes disagree, in words; the kinds of failure)."""
    bad = [m for m in MODES if not row["modes"].get(m, {}).get("ok", False)]
    if not row["modes"]:
        where = "before irs ran (build, executor or oracle)"
    elif set(bad) == set(MODES):
        where = "every mode"
    elif set(bad) == RACE_FREE_MODES:
        where = "race-free-word modes only (`--no-race-free-words` agrees)"
    elif "k1" not in bad and set(bad) == set(MODES) - {"k1"}:
        where = "every mode but `--k 1`"
    else:
        where = "only " + ", ".join(bad)
    kinds = sorted({failure_kind(f) for f in row["failures"]})
    if "misses traces" in kinds and "trace count differs" in kinds:
        kinds.remove("trace count differs")
    wrong_verdict = any("verdict `" in f for f in row["failures"])
    return where, kinds, wrong_verdict


def summarize(rows):
    s = {}
    s["programs"] = len(rows)
    s["traces"] = sum(r["traces"] for r in rows)
    s["interleavings"] = sum(r["interleavings"] for r in rows)
    s["buggy"] = sum(1 for r in rows if r["bugs"])
    s["deadlock"] = sum(1 for r in rows if "deadlock" in r["bugs"])
    s["safe"] = sum(1 for r in rows if r["traces"] > 0 and not r["bugs"])
    s["features"] = collections.Counter(f for r in rows for f in r["features"])
    s["threads"] = collections.Counter(r["threads"] for r in rows)
    s["disagreements"] = [r for r in rows if not r["ok"]]
    s["above_model"] = [r["seed"] for r in rows if r["interleavings"] > r["estimate"]]
    s["mode_traces"] = {m: sum(r["modes"].get(m, {}).get("traces", 0) or 0 for r in rows) for m in MODES}
    s["mode_ssb"] = {m: sum(r["modes"].get(m, {}).get("ssb", 0) or 0 for r in rows) for m in MODES}
    s["mode_seconds"] = {m: sum(r["modes"].get(m, {}).get("seconds", 0) or 0 for r in rows) for m in MODES}
    s["oracle_seconds"] = sum(r["oracle_seconds"] for r in rows)
    s["max_interleavings"] = max((r["interleavings"] for r in rows), default=0)
    s["max_traces"] = max((r["traces"] for r in rows), default=0)
    return s


# The feature names of tests/common/program_gen.rs (ALL_FEATURES), in its order.
FEATURE_ORDER = ["mutex", "nested-locks", "trylock", "branch", "incr", "heap-main", "heap-main-arg",
                 "heap-main-global", "heap-own", "heap-publish", "asserts", "assert-may-fail", "main-check",
                 "nested-create", "joined", "detached", "never-joined", "child-joined", "child-detached",
                 "child-never-joined", "thread-return", "thread-pthread-exit", "thread-exit", "thread-_exit",
                 "thread-end-if", "main-return", "main-pthread-exit", "main-exit", "atexit", "sync", "cond",
                 "cond-no-predicate", "cond-broadcast", "cond-two-waiters", "cond-signal-unlocked",
                 "cond-signal-early", "sem", "sem-init-0", "sem-init-1", "sem-init-2", "sem-trywait", "once",
                 "barrier", "barrier-short", "rwlock", "rwlock-try", "rwlock-mutex-nested", "recursive",
                 "recursive-trylock", "recursive-unbalanced", "spin", "spin-conditional", "spin-never-set",
                 "spin-mutual", "atomics", "atomics-init", "atomics-init-plain", "atomics-no-store",
                 "atomics-two-words", "atomics-cas", "atomics-cas-lock", "atomics-xchg", "atomics-add", "atomics-idle"]


def write_results(path, meta, rows, s):
    L = []
    L.append("# Differential campaign: `irs verify` against the brute-force oracle")
    L.append("")
    L.append("Generated by `benchmarks/differential/run.py` (issue 18, item 4). Each program is a random small")
    L.append("concurrent C program (`tests/common/program_gen.rs`, a function of its seed), built with")
    L.append("`irs cc -O1 -pthread`, explored by the oracle (`tests/common/oracle.rs`: every interleaving,")
    L.append("grouped into traces with reads commuting and into Mazurkiewicz traces) and by `irs verify` in six modes (the last under Mazurkiewicz, checked against those), each report checked by")
    L.append("`tests/common/verify_check.rs` (verdict, exit code, the set of bugs with every violation's schedule")
    L.append("replayed; optimal modes: exactly the oracle's traces, each once, no SSB; `--k` modes: every")
    L.append("oracle trace covered; every `--schedules-out` line replayed).")
    L.append("")
    argv = meta.get("argv") or ["python3", "benchmarks/differential/run.py", "--programs", str(meta["programs"]),
                                "--first", str(meta["first"])]
    L.append(f"- command: `{shlex.join(argv)}`, which ran")
    L.append(f"  `{meta['command']}`")
    L.append(f"- date: {meta['date']}; revision: {meta['rev']}")
    L.append(f"- machine: {meta['machine']}")
    L.append(f"- time: {meta['seconds']:.0f} s wall for the campaign ({meta['jobs']} programs at a time; building")
    L.append(f"  each program with `irs cc` included), {meta['seconds'] / max(1, s['programs']):.2f} s per program")
    L.append("")
    L.append("## Result")
    L.append("")
    L.append(f"**programs tried: {s['programs']}, disagreements: {len(s['disagreements'])}**")
    L.append("")
    L.append(f"- oracle: {s['interleavings']:,} interleavings in all (at most {s['max_interleavings']:,} in one program), "
             f"**{s['traces']:,} traces** (at most {s['max_traces']} in one program), {s['oracle_seconds']:.0f} s")
    L.append(f"- verdicts (oracle): {s['buggy']} programs with bugs ({s['deadlock']} with a deadlock), {s['safe']} safe")
    L.append("- `irs verify`, per mode (traces reported, SSB, time of the `irs verify` runs):")
    L.append("")
    L.append("| mode | arguments | traces | SSB | seconds | programs that disagree |")
    L.append("| --- | --- | ---: | ---: | ---: | ---: |")
    for m in MODES:
        nbad = sum(1 for r in rows if not r["modes"].get(m, {}).get("ok", False))
        L.append(f"| {m} | `{MODE_ARGS[m]}` | {s['mode_traces'][m]:,} | {s['mode_ssb'][m]} | {s['mode_seconds'][m]:.0f} | {nbad} |")
    L.append("")
    if s["above_model"]:
        L.append(f"Programs with more interleavings than the generator's model: {len(s['above_model'])} "
                 f"(seeds {', '.join(map(str, s['above_model'][:20]))}).")
        L.append("")
    earlier = sorted(p.name for p in path.parent.glob("results-*.md"))
    if earlier:
        L.append("Earlier runs of the same programs at other revisions: " + ", ".join(f"[`{e}`]({e})" for e in earlier) + ".")
        L.append("")
    L.append("## What the programs exercise")
    L.append("")
    L.append("Threads besides main: " + ", ".join(f"{t}: {n}" for t, n in sorted(s["threads"].items())) + " programs.")
    L.append("")
    L.append("| feature | programs |")
    L.append("| --- | ---: |")
    for f in FEATURE_ORDER:
        L.append(f"| {f} | {s['features'].get(f, 0)} |")
    L.append("")
    L.append("## Disagreements")
    L.append("")
    if not s["disagreements"]:
        L.append("None.")
    else:
        L.append("Every program on which some mode of `irs verify` disagrees with the oracle. Reproduce one with")
        L.append("`IRS_DIFF_FIRST=SEED IRS_DIFF_SEEDS=1 cargo test --release --test differential -- --nocapture`")
        L.append("(its source is written to target/test-scratch/differential/seed_SEED.c and named in the message).")
        L.append("")
        groups = collections.defaultdict(list)
        for r in s["disagreements"]:
            where, kinds, wrong = classify(r)
            groups[where].append((r, kinds, wrong))
        L.append("| where | programs | of which a wrong verdict | seeds |")
        L.append("| --- | ---: | ---: | --- |")
        for where, lst in sorted(groups.items(), key=lambda kv: -len(kv[1])):
            seeds = ", ".join(str(r["seed"]) for r, _, _ in lst)
            L.append(f"| {where} | {len(lst)} | {sum(1 for _, _, w in lst if w)} | {seeds} |")
        L.append("")
        wrong = [r for r in s["disagreements"] if classify(r)[2]]
        L.append(f"Wrong verdicts ({len(wrong)}){':' if wrong else '.'}")
        if wrong:
            L.append("")
        for r in wrong:
            modes = [m for m in MODES if any(f"[{m}]: verdict `" in f for f in r["failures"])]
            bugs = sorted({re.sub(r"^.*/", "", m) for f in r["failures"] if "verdict `" in f
                           for m in re.findall(r'message: "([^"]*)"', f)})
            L.append(f"- seed {r['seed']} ({' '.join(r['features'])}): `safe` in {', '.join(modes)}; the oracle's "
                     f"bugs: {'; '.join(bugs)}")
        L.append("")
        L.append(f"Each program, with the oracle's counts, every mode's traces and the kinds of mismatch: "
                 f"[`disagreements.md`](disagreements.md).")
        if (path.parent / "reproducers" / "README.md").exists():
            L.append("Minimised programs for each kind, with what they show: "
                     "[`reproducers/README.md`](reproducers/README.md).")
    L.append("")
    path.write_text("\n".join(L))
    print(f"wrote {path}")


def write_disagreements(path, meta, s):
    L = ["# Differential campaign: every disagreement", "",
         f"The programs of `results.md` (`{meta['command']}`) on which some mode of `irs verify` disagrees",
         "with the oracle: the oracle's interleavings, traces and bugs; every mode's trace count (✗: that",
         "mode disagrees); which modes disagree; the kinds of mismatch. Reproduce one with",
         "`IRS_DIFF_FIRST=SEED IRS_DIFF_SEEDS=1 cargo test --release --test differential -- --nocapture`.", ""]
    for r in s["disagreements"]:
        where, kinds, wrong = classify(r)
        modes = ", ".join(f"{m} {r['modes'][m].get('traces', '?')}" + ("" if r["modes"][m].get("ok") else "✗")
                          for m in MODES if m in r["modes"])
        L.append(f"- seed {r['seed']} ({' '.join(r['features'])}): oracle {r['interleavings']} interleavings, "
                 f"{r['traces']} traces, bugs [{', '.join(r['bugs'])}]; {modes}; {where}; {'; '.join(kinds)}"
                 + ("; **wrong verdict**" if wrong else ""))
    L.append("")
    path.write_text("\n".join(L))
    print(f"wrote {path}")


# ---------------------------------------------------------------------------------------------
# Peers.

SHIM = """
/* differential campaign: calloc for the peers (GenMC's headers have none) */
static void *diff_calloc(unsigned long n, unsigned long size) {
  int *p = malloc(n * size);
  for (unsigned long i = 0; i < n * size / sizeof(int); i++)
    p[i] = 0;
  return p;
}
#define calloc diff_calloc
"""

STATIC_UNSUPPORTED = {
    # feature: why (for both peers)
    "thread-exit": "exit() from a thread",
    "thread-_exit": "_exit()",
    "main-exit": "exit() from main",
    "detached": "pthread_detach",
    "child-detached": "pthread_detach",
}


def peer_source(src):
    lines = src.split("\n")
    last = max(i for i, l in enumerate(lines) if l.startswith("#include"))
    return "\n".join(lines[:last + 1] + [SHIM] + lines[last + 1:])


def run(cmd, timeout, cwd=None):
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=cwd,
                         start_new_session=True, errors="replace")
    try:
        out, _ = p.communicate(timeout=timeout)
        to = False
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, _ = p.communicate()
        to = True
    return p.returncode, out, time.monotonic() - t0, to


def peer_verdict(tool, rc, out, timed_out):
    """(verdict: 'bug' | 'safe' | None, traces, note)."""
    if timed_out:
        return None, None, "timeout"
    if tool == "genmc":
        m = re.search(r"Number of complete executions explored: (\d+)", out)
        traces = int(m.group(1)) if m else None
        if re.search(r"LLVM ERROR|not supported|Unsupported|unsupported|Segmentation|Aborted", out) or rc in (-11, 139, -6, 134):
            return None, traces, "unsupported: " + (first_line(out, r"LLVM ERROR|not supported|nsupported|WARNING") or f"exit {rc}")
        if "No errors were detected" in out:
            return "safe", traces, ""
        if "Verification unsuccessful" in out or "Error:" in out:
            return "bug", traces, first_line(out, r"Error|violation|[Dd]eadlock") or ""
        return None, traces, "no verdict: " + (first_line(out, r"ERROR|Error|WARNING") or f"exit {rc}")
    else:
        m = re.search(r"^Trace count: (\d+)", out, re.M)
        traces = int(m.group(1)) if m else None
        if re.search(r"unknown external function|Unsupported pthread function|not supported|LLVM ERROR", out):
            return None, traces, "unsupported: " + (first_line(out, r"unknown external|Unsupported|not supported|LLVM ERROR") or "")
        if "No errors were detected" in out:
            return "safe", traces, ("crashed after its verdict" if rc not in (0,) else "")
        if "Error detected" in out or rc == 42:
            return "bug", traces, first_line(out, r"Error:") or ""
        return None, traces, f"no verdict (exit {rc})"


def first_line(out, pat):
    for l in out.splitlines():
        if re.search(pat, l):
            return l.strip()[:120]
    return None


def run_peer_on(tool, path, seed, src, work, a):
    d = work / tool
    d.mkdir(parents=True, exist_ok=True)
    c = d / f"seed_{seed}.c"
    c.write_text(peer_source(src))
    t0 = time.monotonic()
    if tool == "genmc":
        inc = str(Path(path).resolve().parent / "include")
        ll = d / f"seed_{seed}.ll"
        rc, out, _, to = run([a.clang, "-fno-discard-value-names", "-Xclang", "-disable-O0-optnone", "-g", "-I" + inc,
                              "-D__CONFIG_GENMC_INODE_DATA_SIZE=64", "-S", "-emit-llvm", "-w", "-o", str(ll), str(c)], a.peer_timeout)
        if rc != 0 or to:
            return {"verdict": None, "traces": None, "note": "unsupported: does not compile with its headers: " + (first_line(out, "error") or ""), "seconds": time.monotonic() - t0}
        rc, out, _, to = run([path, "--sc", "--disable-sr", "--disable-estimation", "--disable-race-detection",
                              "--input-from-bitcode-file", str(ll)], a.peer_timeout)
    else:
        raw, tr = d / f"seed_{seed}.raw.ll", d / f"seed_{seed}.ll"
        opts = ["--sc", "--optimal", "--no-check-mutex-init"]
        rc, out, _, to = run([a.clang, "-S", "-emit-llvm", "-g", "-w", "-o", str(raw), str(c)], a.peer_timeout)
        if rc == 0 and not to:
            rc, out2, _, to = run([path, *opts, "-transform", str(tr), str(raw)], a.peer_timeout)
            out = out + out2
        if rc != 0 or to:
            v, t, note = peer_verdict(tool, rc, out, to)
            return {"verdict": None, "traces": None, "note": note if note.startswith("unsupported") else "unsupported: transform failed: " + (first_line(out, "rror|nsupported") or f"exit {rc}"), "seconds": time.monotonic() - t0}
        rc, out3, _, to = run([path, str(tr), *opts], a.peer_timeout)
        out = out + out3
    v, t, note = peer_verdict(tool, rc, out, to)
    (d / f"seed_{seed}.out").write_text(out)
    return {"verdict": v, "traces": t, "note": note, "seconds": time.monotonic() - t0}


def peers(a, keep, rows):
    tools = [(n, p) for n, p in (("nidhugg", a.nidhugg), ("genmc", a.genmc)) if p]
    work = keep / "peers"
    if work.exists():
        shutil.rmtree(work)
    sel = rows if not a.peer_programs else rows[:a.peer_programs]
    results = {}
    t0 = time.monotonic()

    def job(item):
        r, (tool, path) = item
        src = (keep / f"seed_{r['seed']}.c").read_text()
        return r["seed"], tool, run_peer_on(tool, path, r["seed"], src, work, a)

    def confirm(item):
        """A disagreeing verdict again, with the globals atomic (racing plain ints are undefined
        behaviour for the peers' memory models)."""
        r, (tool, path) = item
        src = (keep / f"seed_{r['seed']}.c").read_text().replace("\nint g0, g1, g2;", "\n_Atomic int g0, g1, g2;")
        return r["seed"], tool, run_peer_on(tool, path, f"{r['seed']}_atomic", src, work, a)

    items = [(r, t) for r in sel for t in tools]
    done = 0
    with ThreadPoolExecutor(max_workers=a.jobs) as ex:
        for seed, tool, res in ex.map(job, items):
            results[(seed, tool)] = res
            done += 1
            if done % 200 == 0:
                print(f"  peers: {done}/{len(items)} runs, {time.monotonic() - t0:.0f} s", flush=True)
        again = [(r, t) for r, t in items if results[(r["seed"], t[0])]["verdict"] is not None
                 and (results[(r["seed"], t[0])]["verdict"] == "bug") != bool(r["bugs"])
                 and not (results[(r["seed"], t[0])]["verdict"] == "safe" and set(r["bugs"]) == {"deadlock"})]
        for seed, tool, res in ex.map(confirm, again):
            results[(seed, tool)]["atomic_verdict"] = res["verdict"] or res["note"][:40]
    return sel, tools, results, time.monotonic() - t0


def write_peers(path, meta, sel, tools, results, seconds, a):
    L = []
    L.append("# Differential campaign: the same programs side by side with Nidhugg and GenMC")
    L.append("")
    L.append("Generated by `benchmarks/differential/run.py` (see its header for exactly how each tool runs).")
    L.append("The programs are those of the campaign in `results.md` (same seeds, same sources; the peers get")
    L.append("`calloc` as `malloc` plus zeroing). Ground truth is the oracle: a program has a bug when some")
    L.append("interleaving fails an assertion or deadlocks. irs's verdict is that of `irs verify --optimal")
    L.append("--no-snapshots`.")
    L.append("")
    L.append(f"- command: `{shlex.join(['python3', 'benchmarks/differential/run.py', *sys.argv[1:]])}` (programs of the "
             f"campaign run by `{shlex.join(meta.get('argv') or ['run.py'])}`)")
    L.append(f"- date: {datetime.datetime.now().isoformat(timespec='seconds')}; machine: {meta['machine']}")
    vers = []
    for t, p in tools:
        rc, out, _, _ = run([p, "--version"], 30)
        vers.append(f"{t}: " + " ".join(out.strip().splitlines()[:2]).replace("\t", " ")[:120])
    L.append("- versions: " + "; ".join(vers))
    L.append(f"- programs: {len(sel)}; time {seconds:.0f} s for all peer runs ({a.jobs} at a time)")
    L.append("")
    L.append("Programs that use `exit`/`_exit` (from any thread, main included) or `pthread_detach` are")
    L.append("*unsupported by peer* beforehand: both tools treat `exit` as an unknown external function (Nidhugg")
    L.append("stops with an error, GenMC crashes or warns that it is not thread-safe), and neither has")
    L.append("`pthread_detach` (GenMC's headers do not declare it; Nidhugg calls it as an unknown black box).")
    L.append("The peers are still run on them, and what they said is listed for information. Semantics that")
    L.append("differ without changing verdicts: when main returns, irs ends the process and cuts off the")
    L.append("other threads (every event of theirs can happen before the end or not at all), while the peers")
    L.append("let them run on; every failure the peers can reach, the threads can reach before main's end in")
    L.append("irs too, so verdicts are comparable. Deadlocks: neither peer, run as here, reports one as an")
    L.append("error (GenMC counts the execution as blocked, Nidhugg as a trace without error), so programs")
    L.append("whose only bugs are deadlocks are counted apart. Racing plain ints: the programs race on purpose;")
    L.append("GenMC runs with `--disable-race-detection`, and since a race on non-atomic accesses is undefined")
    L.append("behaviour in its model, it need not then explore every order of racing writes. Every verdict")
    L.append("disagreement is therefore run again with the globals declared `_Atomic int`.")
    L.append("")
    for tool, _ in tools:
        sup, unsup_static, unsup_dyn = [], [], []
        for r in sel:
            res = results[(r["seed"], tool)]
            static = [why for f, why in STATIC_UNSUPPORTED.items() if f in r["features"]]
            if static:
                unsup_static.append((r, res, sorted(set(static))))
            elif res["verdict"] is None:
                unsup_dyn.append((r, res))
            else:
                sup.append((r, res))
        def irs_verdict(r):
            return r["modes"].get("optimal-nosnap", {}).get("verdict", "?")

        def irs_ok(r):
            # Safe is `safe`, or `safe-within-bounds` where the program waited on a condition
            # variable (spurious wake-ups not explored, by the oracle either; the test checks
            # the exact verdict).
            return irs_verdict(r) in (("violation",) if r["bugs"] else ("safe", "safe-within-bounds"))

        agree = [(r, res) for r, res in sup if (res["verdict"] == "bug") == bool(r["bugs"])]
        deadlock_only = [(r, res) for r, res in sup
                         if res["verdict"] == "safe" and r["bugs"] and set(r["bugs"]) == {"deadlock"}]
        dis = [(r, res) for r, res in sup if (res["verdict"] == "bug") != bool(r["bugs"])
               and not (res["verdict"] == "safe" and r["bugs"] and set(r["bugs"]) == {"deadlock"})]
        L.append(f"## {tool}")
        L.append("")
        L.append(f"- supported and run to a verdict: {len(sup)} programs; **the verdict agrees with the oracle on "
                 f"{len(agree)}; {len(deadlock_only)} more whose only bugs are deadlocks, which {tool} does not "
                 f"report as errors; disagrees on {len(dis)}**")
        L.append(f"- unsupported by peer (construct): {len(unsup_static)}; unsupported by peer (its output): {len(unsup_dyn)}")
        irs_wrong = [(r, res) for r, res in sup if not irs_ok(r)]
        L.append(f"- on the same supported programs, irs's verdict disagrees with the oracle on {len(irs_wrong)}"
                 + (f" (seeds {', '.join(str(r['seed']) for r, _ in irs_wrong)}; {tool} says "
                    f"{', '.join(str(res['verdict']) for _, res in irs_wrong)})" if irs_wrong else ""))
        eq = sum(1 for r, res in sup if res["traces"] is not None and res["traces"] == r["traces"])
        L.append(f"- trace counts (information: other equivalences): equal to the oracle's on {eq} of {len(sup)}; "
                 f"{sum((res['traces'] or 0) for _, res in sup):,} in all against the oracle's "
                 f"{sum(r['traces'] for r, _ in sup):,}; time {sum(res['seconds'] for r, res in sup):.0f} s")
        if unsup_static:
            said = collections.Counter((res["verdict"] or res["note"].split(":")[0] or "?") for _, res, _ in unsup_static)
            L.append(f"- what it said on the programs it does not support: " + ", ".join(f"{k} {v}" for k, v in said.most_common()))
        if unsup_dyn:
            notes = collections.Counter(re.sub(r"\d+", "N", res["note"])[:100] for _, res in unsup_dyn)
            L.append("- its reasons on the others: " + "; ".join(f"{k} ({v})" for k, v in notes.most_common(6)))
        L.append("")
        if deadlock_only:
            L.append(f"Deadlock-only programs {tool} calls safe (seeds): "
                     + ", ".join(str(r["seed"]) for r, _ in deadlock_only) + ".")
            L.append("")
        if dis:
            L.append("Verdict disagreements (the oracle is ground truth; *with `_Atomic` globals*: the peer run")
            L.append("again on the program with `int g0, g1, g2` declared `_Atomic int`):")
            L.append("")
            L.append("| seed | oracle | " + tool + " | with `_Atomic` globals | irs | who agrees with the oracle | features |")
            L.append("| ---: | --- | --- | --- | --- | --- | --- |")
            for r, res in dis:
                oracle = "bug (" + ", ".join(r["bugs"]) + ")" if r["bugs"] else "safe"
                who = "irs" if irs_ok(r) else "neither"
                L.append(f"| {r['seed']} | {oracle} | {res['verdict']} {res['note'][:60]} | {res.get('atomic_verdict', '')} | "
                         f"{irs_verdict(r)} | {who} | {' '.join(r['features'])} |")
            L.append("")
        peer_right = [(r, res) for r, res in irs_wrong if (res["verdict"] == "bug") == bool(r["bugs"])]
        if peer_right:
            L.append(f"Programs where {tool} agrees with the oracle and irs does not: "
                     + ", ".join(f"seed {r['seed']} (oracle {', '.join(r['bugs']) or 'safe'}, irs {irs_verdict(r)}, "
                                 f"{tool} {res['verdict']})" for r, res in peer_right) + ".")
            L.append("")
    path.write_text("\n".join(L))
    print(f"wrote {path}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--programs", type=int, default=3000, help="programs to generate and check (default 3000)")
    ap.add_argument("--first", type=int, default=1000, help="first seed (default 1000; the test's slice is 0..80)")
    ap.add_argument("--jobs", type=int, default=2, help="programs checked at once (default 2)")
    ap.add_argument("--keep", default=str(REPO / "target" / "differential-campaign"),
                    help="where the programs and results.jsonl go (default target/differential-campaign)")
    ap.add_argument("--out", default=str(OUT), help="results directory (default benchmarks/results/differential)")
    ap.add_argument("--reuse", action="store_true",
                    help="do not run the campaign: rewrite the results from the last one in --keep (and run the peers)")
    ap.add_argument("--no-build", action="store_true", help="do not run cargo build first")
    ap.add_argument("--revision", help="what to call the revision tested in results.md (default: git rev-parse)")
    ap.add_argument("--nidhugg", help="nidhugg binary (e.g. /tmp/nidhugg/src/nidhugg)")
    ap.add_argument("--genmc", help="genmc binary (e.g. /tmp/genmc/genmc)")
    ap.add_argument("--clang", default=shutil.which("clang-14") or "clang", help="clang for the peers (default clang-14)")
    ap.add_argument("--peer-timeout", type=float, default=120, help="per peer command time limit (s)")
    ap.add_argument("--peer-programs", type=int, default=0, help="run the peers on the first N programs only (default all)")
    a = ap.parse_args()
    keep = Path(a.keep).resolve()
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    if a.reuse:
        meta = json.loads((keep / "campaign.json").read_text())
    else:
        if not a.no_build:
            build()
        if (keep / "results.jsonl").exists():
            (keep / "results.jsonl").unlink()
        for old in keep.glob("seed_*.c") if keep.exists() else []:
            old.unlink()
        meta = campaign(a, keep)
    rows = load(keep)
    s = summarize(rows)
    write_results(out / "results.md", meta, rows, s)
    if s["disagreements"]:
        write_disagreements(out / "disagreements.md", meta, s)
    elif (out / "disagreements.md").exists():
        (out / "disagreements.md").unlink()
    print(f"programs tried: {s['programs']}, traces: {s['traces']}, disagreements: {len(s['disagreements'])}")
    if a.nidhugg or a.genmc:
        sel, tools, results, seconds = peers(a, keep, rows)
        write_peers(out / "peers.md", meta, sel, tools, results, seconds, a)
    if len(rows) != meta["programs"]:
        print(f"warning: {meta['programs']} programs asked, {len(rows)} in results.jsonl (did the test stop early?)")
    return 1 if s["disagreements"] or len(rows) != meta["programs"] else 0


if __name__ == "__main__":
    sys.exit(main())
