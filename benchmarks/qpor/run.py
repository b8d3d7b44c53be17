#!/usr/bin/env python3
"""Reproduce the QPOR paper's experiments with `irs verify` (Nguyen et al., CAV'18, §6):
(a) Fig. 1: the writers/count/master program for n = 2..12 writers, executions, SSB and time
per mode; (b) Table 1: our versions of its program families (DISP, MPAT, MPC, PI, POL) with
maximal configurations (traces) and, per mode, SSB executions and time.

Every instance is built with `irs cc -O1 -D...` into a scratch directory under /tmp and
verified with `irs verify --k K --json --time-limit S` for each mode (k = 1, 2, 3 and
--optimal by default). The JSON object on the last line of stdout is the result. Results go
to benchmarks/results/qpor/ as Markdown (results.md) and CSV (fig1.csv, table1.csv); with
--quick only small instances run and the files are quick.md, quick_fig1.csv, quick_table1.csv.

Standard library only. Run from anywhere after `cargo build --release --workspace`.
"""
import argparse, csv, datetime, json, math, os, platform, shlex, subprocess, sys, tempfile, time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]

# ---------------------------------------------------------------------------------------------
# Expected trace counts (derivations in benchmarks/qpor/README.md and in each program's header).

def pool_traces(n, m):
    """sum over maps f: workers -> tasks of prod_t a_t! (a_t+1)!  =  m! * sum over compositions
    (a_0..a_{n-1}) of m of prod_t (a_t+1)!  (a map with counts a_t exists in m!/prod a_t! ways)."""
    poly = [1] + [0] * m  # poly[s] = sum over the first tasks with s workers of prod (a+1)!
    for _ in range(n):
        new = [0] * (m + 1)
        for s, v in enumerate(poly):
            if v:
                for a in range(m - s + 1):
                    new[s + a] += v * math.factorial(a + 1)
        poly = new
    return math.factorial(m) * poly[m]

def mpc_traces(p, c, items):
    return math.factorial(p * items) // math.factorial(items) ** p * math.factorial(c) * 2 ** min(p * items, c)

# DISP has no closed form: counts of the distinct per-mutex orders of critical sections of a
# model of disp.c, enumerated exhaustively (see README.md). Key: (jobs, resources, workers).
DISP_TRACES = {(5, 2, 1): 15, (5, 2, 2): 250, (5, 2, 3): 4494, (5, 2, 4): 81384, (3, 2, 2): 72, (4, 2, 2): 138}

class Inst:
    def __init__(self, family, label, source, defines, threads, expected):
        self.family, self.label, self.source, self.defines = family, label, source, defines
        self.threads, self.expected = threads, expected  # threads: including main

    @property
    def exe_name(self):
        return self.source.replace(".c", "") + "".join(f"_{k}{v}" for k, v in self.defines)

def fig1(n):
    return Inst("FIG1", f"FIG1({n})", "fig1.c", [("N", n)], n + 3, 2 * n)

def disp(w, jobs=5, res=2):
    return Inst("DISP", f"DISP({jobs},{w})", "disp.c", [("JOBS", jobs), ("WORKERS", w), ("RESOURCES", res)], w + 2,
                DISP_TRACES.get((jobs, res, w)))

def mpat(k):
    return Inst("MPAT", f"MPAT({k})", "mpat.c", [("K", k)], 2 * k + 1, math.factorial(k) * 2 ** k)

def mpc(p, c=3, items=2):
    return Inst("MPC", f"MPC({p},{c})", "mpc.c", [("PRODUCERS", p), ("CONSUMERS", c), ("ITEMS", items)], p + c + 1,
                mpc_traces(p, c, items))

def pi(n):
    return Inst("PI", f"PI({n})", "pi.c", [("N", n)], n + 1, math.factorial(n))

def pol(n, m=3):
    return Inst("POL", f"POL({n},{m})", "pool.c", [("TASKS", n), ("WORKERS", m)], n + m + 2, pool_traces(n, m))

FIG1_FULL = [fig1(n) for n in range(2, 13)]
FIG1_QUICK = [fig1(n) for n in range(2, 6)]
TABLE_FULL = ([disp(w) for w in (1, 2, 3, 4)] + [mpat(k) for k in (3, 4, 5, 6)] + [mpc(p) for p in (1, 2, 3, 4)]
              + [pi(n) for n in (3, 4, 5, 6, 7, 8)] + [pol(n) for n in (4, 6, 8, 10, 12)])
TABLE_QUICK = [disp(1), disp(2), mpat(3), mpat(4), mpc(1), mpc(2), pi(3), pi(4), pi(5), pol(3), pol(4)]

# ---------------------------------------------------------------------------------------------

def machine():
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    mem = next((l.split(":", 1)[1].strip() for l in open("/proc/meminfo") if l.startswith("MemTotal")), "?")
    try:
        rev = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "--untracked-files=no"], capture_output=True, text=True).stdout.strip()
        rev = rev + (" (with uncommitted changes)" if dirty else "")
    except OSError:
        rev = "?"
    return {"nproc": os.cpu_count(), "cpu": cpu, "mem": mem, "kernel": platform.release(), "commit": rev,
            "load": os.getloadavg()[0], "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")}

def build(irs, inst, scratch, log):
    exe = Path(scratch) / inst.exe_name
    if not exe.exists():
        cmd = [irs, "cc", "-O1", *[f"-D{k}={v}" for k, v in inst.defines], "-o", str(exe), str(HERE / inst.source)]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            log(f"error: building {inst.label}: {' '.join(cmd)}\n{r.stderr.strip()}")
            return None
    return exe

def run_verify(irs, exe, mode, time_limit, max_exec, scratch):
    """One `irs verify` run; returns a dict with the JSON fields plus exit_code, wall, rss and error."""
    flag = ["--optimal"] if mode == "optimal" else ["--k", str(mode)]
    cmd = [irs, "verify", *flag, "--json", "--time-limit", str(time_limit), "--out-dir", str(Path(scratch) / "bugs")]
    if max_exec:
        cmd += ["--max-executions", str(max_exec)]
    cmd += ["--", str(exe)]
    with tempfile.TemporaryFile(mode="w+") as out, tempfile.TemporaryFile(mode="w+") as err:
        t0 = time.monotonic()
        p = subprocess.Popen(cmd, stdout=out, stderr=err, text=True)
        deadline = t0 + time_limit + 120  # verify enforces --time-limit itself; this is a backstop
        rusage, status, killed = None, None, False
        while True:
            pid, status, rusage = os.wait4(p.pid, os.WNOHANG)
            if pid == p.pid:
                break
            if time.monotonic() > deadline:
                p.kill()
                killed = True
                _, status, rusage = os.wait4(p.pid, 0)
                break
            time.sleep(0.05)
        p.returncode = os.waitstatus_to_exitcode(status)
        wall = time.monotonic() - t0
        out.seek(0); err.seek(0)
        stdout, stderr = out.read(), err.read()
    res = {"exit_code": p.returncode, "wall": wall, "rss_wait4_kb": rusage.ru_maxrss if rusage else None, "error": ""}
    lines = [l for l in stdout.splitlines() if l.strip()]
    try:
        res.update(json.loads(lines[-1]))
    except (IndexError, ValueError):
        tail = (stderr.strip().splitlines() or stdout.strip().splitlines() or ["no output"])[-1]
        res["error"] = ("killed after %.0f s; " % wall if killed else "") + f"exit {p.returncode}: {tail}"
        res["verdict"] = "error"
    return res

# ---------------------------------------------------------------------------------------------
# Formatting

def fnum(v):
    if v is None or v == "":
        return "–"
    if isinstance(v, float):
        return f"{v:.2f}" if v < 100 else f"{v:.0f}"
    return f"{v:,}" if isinstance(v, int) else str(v)

def timecell(r, time_limit):
    if r is None:
        return "–"
    if r.get("skipped"):
        return "skipped"
    if r.get("verdict") == "error":
        return "error"
    if r.get("verdict") == "incomplete":
        if "executions" in str(r.get("stopped") or ""):
            return "incomplete (max executions)"
        return f"> {time_limit:g} s (timeout)"
    return f"{r.get('seconds', 0):.2f}"

def rss_kb(r):
    v = r.get("peak_rss_kb")
    return v if isinstance(v, (int, float)) and v > 0 else r.get("rss_wait4_kb")

def outside(r):
    """Share of the verification's time not spent running the program (the paper's profile)."""
    secs, prog = r.get("seconds"), r.get("program_seconds")
    if not secs or prog is None:
        return "–"
    return f"{100 * (secs - prog) / secs:.0f}"

def waits(r):
    """Where the program waits for the verifier, in % of the verification's time."""
    secs = r.get("seconds")
    parts = [r.get(k) for k in ("walk_behind_seconds", "backtrack_seconds", "prune_seconds")]
    if not secs or any(p is None for p in parts):
        return "–"
    return " / ".join(f"{100 * p / secs:.0f}" for p in parts)

def mode_name(m):
    return "optimal" if m == "optimal" else f"k={m}"

def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--irs", default=str(REPO / "target/release/irs"))
    ap.add_argument("--modes", default="1,2,3,optimal", help="comma-separated: k values and/or 'optimal' (default 1,2,3,optimal)")
    ap.add_argument("--time-limit", type=float, default=120.0, help="seconds per verify run (default 120)")
    ap.add_argument("--max-executions", type=int, default=None, help="pass --max-executions to verify")
    ap.add_argument("--quick", action="store_true", help="small instances only (smoke test); writes quick*.md/csv")
    ap.add_argument("--only", default="", help="comma-separated families to run: FIG1,DISP,MPAT,MPC,PI,POL")
    ap.add_argument("--no-skip", action="store_true",
                    help="also run a mode on larger instances of a family after it timed out on a smaller one")
    ap.add_argument("--out-dir", default=str(REPO / "benchmarks/results/qpor"))
    ap.add_argument("--keep-build", action="store_true", help="keep the scratch directory of binaries")
    a = ap.parse_args()

    modes = []
    for m in a.modes.split(","):
        m = m.strip().lower()
        if m in ("optimal", "opt", "inf"):
            modes.append("optimal")
        elif m.isdigit() and int(m) >= 1:
            modes.append(int(m))
        elif m:
            ap.error(f"bad mode {m!r}: use positive integers and 'optimal'")
    only = {f.strip().upper() for f in a.only.split(",") if f.strip()}
    fig = [i for i in (FIG1_QUICK if a.quick else FIG1_FULL) if not only or "FIG1" in only]
    table = [i for i in (TABLE_QUICK if a.quick else TABLE_FULL) if not only or i.family in only]
    if not Path(a.irs).exists():
        sys.exit(f"error: {a.irs} not found (cargo build --release --workspace)")
    h = subprocess.run([a.irs, "verify", "--help"], capture_output=True, text=True)
    if h.returncode != 0:
        sys.exit(f"error: `{a.irs} verify` is not available: {(h.stderr or h.stdout).strip().splitlines()[:1]}")

    out_dir = Path(a.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    prefix = "quick" if a.quick else "results"
    csv_prefix = "quick_" if a.quick else ""
    cmdline = "python3 benchmarks/qpor/run.py" + ("" if len(sys.argv) == 1 else " " + shlex.join(sys.argv[1:]))
    mach = machine()
    scratch = tempfile.mkdtemp(prefix="irs-qpor-", dir="/tmp")
    notes = []
    def log(msg):
        print(msg, flush=True)

    results = {}  # (label, mode) -> result dict
    def run_all(insts):
        timed_out = {}  # (family, mode) -> label of the instance that timed out
        for inst in insts:
            exe = build(a.irs, inst, scratch, log)
            for mode in modes:
                key = (inst.label, mode)
                if exe is None:
                    results[key] = {"verdict": "error", "error": "build failed"}
                    continue
                if not a.no_skip and (inst.family, mode) in timed_out:
                    results[key] = {"skipped": True, "verdict": "skipped", "error": f"{timed_out[inst.family, mode]} timed out"}
                    continue
                r = run_verify(a.irs, exe, mode, a.time_limit, a.max_executions, scratch)
                results[key] = r
                if r.get("verdict") == "incomplete" and not a.max_executions:
                    timed_out[inst.family, mode] = inst.label
                flag = ""
                if r.get("verdict") == "safe" and inst.expected is not None and r.get("traces") != inst.expected:
                    flag = f"  MISMATCH: expected {inst.expected} traces"
                    notes.append(f"{inst.label} {mode_name(mode)}: {r.get('traces')} traces, expected {inst.expected}.")
                if r.get("verdict") not in ("safe", "incomplete"):
                    notes.append(f"{inst.label} {mode_name(mode)}: verdict {r.get('verdict')} {r.get('error', '')} {r.get('violations', '')}".strip())
                log(f"{inst.label:<12} {mode_name(mode):<8} verdict={r.get('verdict')} traces={r.get('traces')} "
                    f"ssb={r.get('ssb')} executions={r.get('executions')} time={r.get('seconds', r.get('wall', 0)):.2f}s "
                    f"rss={rss_kb(r)}kB{flag}{'  ' + r['error'] if r.get('error') else ''}")

    try:
        log(f"scratch directory {scratch}; modes {', '.join(mode_name(m) for m in modes)}; time limit {a.time_limit:g} s")
        run_all(fig)
        run_all(table)
    finally:
        if not a.keep_build:
            subprocess.run(["rm", "-rf", scratch])

    fields = ["program", "instance", "threads", "defines", "mode", "expected_traces", "traces", "ssb", "executions", "runs",
              "events", "seconds", "verdict", "exec_per_sec", "executor_seconds", "program_seconds", "walk_behind_seconds", "backtrack_seconds", "prune_seconds",
              "verifier_cpu_seconds", "peak_rss_kb", "rss_wait4_kb",
              "exit_code", "error"]
    def write_csv(path, insts):
        with open(path, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(fields)
            for inst in insts:
                for mode in modes:
                    r = results.get((inst.label, mode), {})
                    row = {"program": inst.source, "instance": inst.label, "threads": inst.threads,
                           "defines": " ".join(f"-D{k}={v}" for k, v in inst.defines), "mode": mode_name(mode),
                           "expected_traces": inst.expected if inst.expected is not None else ""}
                    for k in fields[6:]:
                        row[k] = r.get(k, "")
                    if row["exec_per_sec"] == "" and r.get("executions") and r.get("seconds"):
                        row["exec_per_sec"] = r["executions"] / r["seconds"]
                    w.writerow([row[k] for k in fields])

    md = []
    md.append("# QPOR paper experiments with `irs verify`" + (" (quick smoke test)" if a.quick else "") + "\n")
    md.append(f"- Command: `{cmdline}` (from the repository root)")
    md.append(f"- Date: {mach['date']}; commit {mach['commit']}")
    md.append(f"- Machine: nproc={mach['nproc']}, CPU: {mach['cpu']}, memory {mach['mem']}, Linux {mach['kernel']}, load average before: {mach['load']:.2f}")
    md.append(f"- Each cell: one `irs verify --k K` (or `--optimal`) `--json --time-limit {a.time_limit:g}` run of a binary built with "
              "`irs cc -O1 -D...` from `benchmarks/qpor/`; time is the verifier's own `seconds`. "
              "A run that reaches the time limit is shown as \"> S s (timeout)\"; its counts are those reached. "
              + ("Larger instances of a family are skipped for a mode once a smaller one timed out. " if not a.no_skip else "")
              + "Programs and expected trace counts: `benchmarks/qpor/README.md`.\n")

    if fig:
        md.append("## (a) Fig. 1: n writers, count, master (2n traces)\n")
        hdr = "| n | threads | traces expected | traces | " + " | ".join(f"{mode_name(m)} executions | {mode_name(m)} SSB | {mode_name(m)} s" for m in modes) + " |"
        md.append(hdr)
        md.append("| ---: | ---: | ---: | ---: | " + " | ".join("---: | ---: | ---:" for _ in modes) + " |")
        for inst in fig:
            rs = [results.get((inst.label, m)) or {} for m in modes]
            traces = next((r.get("traces") for r in rs if r.get("verdict") == "safe"), None)
            cells = []
            for r in rs:
                cells += [fnum(r.get("executions")), fnum(r.get("ssb")), timecell(r, a.time_limit)]
            md.append(f"| {inst.defines[0][1]} | {inst.threads} | {inst.expected} | {fnum(traces)} | " + " | ".join(cells) + " |")
        md.append("")
        write_csv(out_dir / f"{csv_prefix}fig1.csv", fig)

    if table:
        md.append("## (b) Table 1: program families (Confs = maximal configurations = traces)\n")
        md.append("| benchmark | Th | Confs expected | Confs | " + " | ".join(f"{mode_name(m)} time (s) | {mode_name(m)} SSB" for m in modes)
                  + " | mem MB (" + mode_name(modes[-1]) + ") |")
        md.append("| --- | ---: | ---: | ---: | " + " | ".join("---: | ---:" for _ in modes) + " | ---: |")
        for inst in table:
            rs = [results.get((inst.label, m)) or {} for m in modes]
            traces = next((r.get("traces") for r in rs if r.get("verdict") == "safe"), None)
            cells = []
            for r in rs:
                cells += [timecell(r, a.time_limit), fnum(r.get("ssb")) if not r.get("skipped") else "–"]
            rk = rss_kb(rs[-1]) if rs else None
            md.append(f"| {inst.label} | {inst.threads} | {fnum(inst.expected)} | {fnum(traces)} | " + " | ".join(cells)
                      + f" | {fnum(rk / 1024 if rk else None)} |")
        md.append("")
        write_csv(out_dir / f"{csv_prefix}table1.csv", table)

    md.append("## Every run\n")
    md.append("| instance | mode | verdict | traces | SSB | executions | runs | events | seconds | exec/s | executor s | program s | outside program % | walk behind / backtracking / pruning % | peak RSS MB |")
    md.append("| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for inst in fig + table:
        for m in modes:
            r = results.get((inst.label, m)) or {}
            if r.get("skipped"):
                continue
            eps = r.get("exec_per_sec")
            if eps is None and r.get("executions") and r.get("seconds"):
                eps = r["executions"] / r["seconds"]
            rk = rss_kb(r)
            md.append(f"| {inst.label} | {mode_name(m)} | {r.get('verdict', '–')} | {fnum(r.get('traces'))} | {fnum(r.get('ssb'))} | "
                      f"{fnum(r.get('executions'))} | {fnum(r.get('runs'))} | {fnum(r.get('events'))} | {fnum(r.get('seconds'))} | "
                      f"{fnum(eps)} | {fnum(r.get('executor_seconds'))} | {fnum(r.get('program_seconds'))} | {outside(r)} | {waits(r)} | {fnum(rk / 1024 if rk else None)} |")
    md.append("")
    md.append("Peak RSS: the verifier's `peak_rss_kb` when it reports one, else `ru_maxrss` of the verify process from `wait4`. "
              "*executor s*: from sending a request to having decoded the execution (the program's run, its transfer and the waits "
              "for the other process); *program s*: the program's runs alone as the fork server timed them (the persistent worker's "
              "memory restores included); *outside program %*: the rest of the verification's time, in % of it; *walk behind / "
              "backtracking / pruning %*: where that time goes, in % of the whole (the walk of a run after the program ended it, "
              "the search for the next alternative, and pruning `U`, which begins as a run starts; see docs/src/verify.md).\n")
    if notes:
        md.append("## Notes (mismatches with the expected trace counts, errors, violations)\n")
        md += [f"- {n}" for n in notes]
        md.append("")
    path = out_dir / f"{prefix}.md"
    path.write_text("\n".join(md))
    log(f"wrote {path}" + (f" ({len(notes)} notes: see its last section)" if notes else ""))
    return 1 if notes else 0

if __name__ == "__main__":
    sys.exit(main())
