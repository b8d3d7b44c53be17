#!/usr/bin/env python3
"""`irs verify` over the concurrency tasks of the SV-COMP benchmark set (sosy-lab/sv-benchmarks),
tabulated per folder against each task's expected verdict for `unreach-call` (issue 18, item 5).

The tasks are not part of this repository (the set is far too large, and not ours): copy the
folders' files (each task's .yml and the input file it names) to a directory outside the
repository, keeping the repository's paths (DIR/c/pthread/..., DIR/c/pthread-ext/..., ...), and
give its path:

    python3 benchmarks/svcomp/run.py --tasks /tmp/svcomp
    python3 benchmarks/svcomp/run.py --tasks /tmp/svcomp --only pthread-atomic,pthread-lit
    python3 benchmarks/svcomp/run.py --tasks /tmp/svcomp --genmc /tmp/genmc/genmc --nidhugg /tmp/nidhugg/src/nidhugg

Each task is built unchanged with `irs cc -O1 -w` (no prelude: the SV-COMP functions are irs's
own, see docs/src/sv-comp.md) and verified with `irs verify --json --svcomp --first-bug
--time-limit T` (default 30 s; `--timeout 2` per execution; `--svcomp`: SV-COMP's conventions,
`abort()` ends an execution the task rules out; `--first-bug`: stop at the first bug); when
that stops at a bug that is no `unreach-call` answer (a deadlock, a livelock of a spin-wait, a
crash), once more without `--first-bug` in the time left. What irs says is read as SV-COMP reads
a tool's answer for `unreach-call`:
  * `false` (an error is reachable): irs found a violation that is a call of `reach_error` or
    `__VERIFIER_error`, or a failed `__VERIFIER_assert` or `assert` (tasks define `reach_error`
    as a failing assertion);
  * `true`: the verdict is plain `safe` (every execution explored, no bound);
  * no answer: `safe-within-bounds` (every execution explored for the values irs gives
    `__VERIFIER_nondet_*`, not every value: a bounded result, column `bounded`), `incomplete`
    (a limit stopped it; column `out of time`, with why), an error (column `unsupported`, with
    the construct irs named, or `error`). Bugs of other kinds (a deadlock, a livelock, a crash)
    are not `unreach-call` answers; with no reach_error found and the exploration complete (no
    limit hit, and no execution that did not end: a timeout or the event limit) the answer is
    still `true`. (SV-COMP tasks write assumptions as infinite loops, `while (c) {};`: irs
    reports the hang as a livelock, which is no error for `unreach-call`.)
A task that creates more threads than EXPLORE's capacity (`while (1) pthread_create(...)`) gets
`irs verify`'s default thread bound (each thread creates at most 2 threads; an execution about
to create more ends there), then `--max-threads 3`, 4, ... each in the time left: a reach_error
found within a bound is `false`; otherwise the largest bound explored to its end is a bounded
result (column `bounded`), never `true`.
A `true` where the task expects `false`, or `false` where it expects `true`, is *wrong*: the
column must be 0 (a wrong `true` is the worst bug irs can have).

Peers (built outside the repository, see benchmarks/peers/run.py): each task also runs with
GenMC (`genmc --sc --disable-estimation --disable-sr FILE`) and Nidhugg (`nidhuggc -- FILE --sc
--optimal --no-check-mutex-init`) under the same time limit, their answers read from their
output ("No errors were detected" is `true`, an error report of a failing assertion `false`,
anything else none, with the peer's error line: a peer that calls `abort()` after an empty
`reach_error()` crashes, which is no answer). GenMC cannot run a preprocessed task
(`.i`: glibc's pthread.h inlined where GenMC needs its own; it crashes even on a trivial program
preprocessed so), so it runs only the `.c` tasks. Nidhugg gets the task with
`__VERIFIER_atomic_begin/end` defined as one global mutex when the task only declares them
(Nidhugg implements `__VERIFIER_atomic_*` functions, but not that pair).

Writes benchmarks/results/svcomp/results.md (or --out) and results.csv beside it.
Python 3 standard library only.
"""
import argparse, csv, datetime, json, os, platform, re, signal, subprocess, sys, time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
FOLDERS = ["pthread", "pthread-atomic", "pthread-ext", "pthread-lit", "pthread-complex", "pthread-nondet", "pthread-divine",
           "pthread-C-DAC"]


def expected_verdict(yml_text):
    """(input file, expected verdict for unreach-call or None) of a task definition."""
    inp = None
    m = re.search(r"input_files:\s*(?:\[\s*)?'?\"?([^'\"\]\n]+)", yml_text)
    if m:
        inp = m.group(1).strip()
    verdict = None
    for block in re.split(r"\n\s*-\s*property_file:", yml_text):
        if "unreach-call" in block.split("\n")[0]:
            v = re.search(r"expected_verdict:\s*(true|false)", block)
            if v:
                verdict = v.group(1) == "true"
    return inp, verdict


def tasks(root, only):
    out = []
    for folder in FOLDERS:
        if only and folder not in only:
            continue
        d = root / "c" / folder
        if not d.is_dir():
            continue
        for yml in sorted(d.glob("*.yml")):
            inp, verdict = expected_verdict(yml.read_text(errors="replace"))
            if inp is None or verdict is None or not (d / inp).exists():
                continue
            out.append((folder, yml.stem, d / inp, verdict))
    return out


def run(cmd, timeout, cwd=None):
    """(exit code or None on timeout, stdout, stderr, seconds). The command runs in a session of
    its own, killed whole at the time limit: nidhuggc, a script, leaves nidhugg running otherwise."""
    t = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=cwd,
                         start_new_session=True, errors="replace")
    try:
        out, err = p.communicate(timeout=timeout)
        return p.returncode, out, err, time.monotonic() - t
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, err = p.communicate()
        return None, out or "", "", time.monotonic() - t


def last_line(text):
    lines = [l for l in text.strip().splitlines() if l.strip()]
    return lines[-1] if lines else ""


REACH = {"reach_error", "assert"}


def irs_answer(irs, src, work, limit):
    """(answer, column, why, seconds): answer True/False/None."""
    exe = work / src.stem
    rc, out, err, _ = run([irs, "cc", "-O1", "-w", "-o", str(exe), str(src)], 300)
    if rc != 0:
        first = next((l for l in (err + out).splitlines() if "error" in l), last_line(err))
        return None, "unsupported", f"does not build: {first.strip()[:160]}", 0.0
    answer = irs_verify_answer(irs, exe, work, limit, [])
    # Unbounded thread creation (`irs verify` then applies a default thread bound of 2 by
    # itself): deepen the bound in the time left.
    default_bounded = answer[1] == "bounded" and "a default bound" in answer[2]
    if not (default_bounded or (answer[1] == "unsupported" and "more than 64 threads" in answer[2])):
        return answer
    secs, best = answer[3], (2 if default_bounded else None)
    for n in range(3 if default_bounded else 1, 64):
        if limit - secs < 1:
            break
        a = irs_verify_answer(irs, exe, work, limit - secs, ["--max-threads", str(n)])
        secs += a[3]
        if a[0] is False:
            return False, None, "", secs
        if a[1] != "bounded":
            if best is None:
                return a[0], a[1], f"with --max-threads {n}: {a[2]}"[:200], secs
            break
        best = n
    if best is None:
        return None, "out of time", f"creates threads without end; no thread bound explored to its end in {limit} s", secs
    return None, "bounded", f"each thread creates at most {best} thread{'' if best == 1 else 's'} (--max-threads {best}): no error within that bound", secs


def irs_verify_answer(irs, exe, work, limit, extra):
    """(answer, column, why, seconds) of `irs verify` with the flags `extra`."""
    # First with --first-bug (a false task's first reach_error ends it early); when that stops at
    # a bug of another kind (a deadlock, a livelock, a crash: no unreach-call answer), again
    # without it, in the time left, to see whether any reach_error is reachable at all.
    secs = 0.0
    for first_bug in (True, False):
        left = max(1, int(limit - secs))
        flags = ["--first-bug"] if first_bug else []
        rc, out, err, took = run([irs, "verify", "--json", "--svcomp", *flags, *extra, "--time-limit", str(left), "--timeout", "2", "--out-dir", str(work),
                                  "--", str(exe)], left + 60, cwd=work)
        secs += took
        if rc is None:
            return None, "out of time", f"no answer within {left + 60} s", secs
        try:
            j = json.loads(last_line(out))
        except json.JSONDecodeError:
            msg = last_line(err).removeprefix("irs: verify: ").strip()
            col = "unsupported" if msg.startswith("unsupported") else "error"
            return None, col, msg[:200], secs
        kinds = {v.get("kind") for v in j.get("violations", [])}
        if kinds & REACH:
            return False, None, "", secs
        if not (first_bug and j.get("verdict") == "violation" and j.get("stopped")):
            break
    verdict = j.get("verdict")
    if verdict == "safe":
        return True, None, "", secs
    if verdict == "safe-within-bounds":
        return None, "bounded", "; ".join(j.get("bounds", []))[:200], secs
    unended = kinds & {"timeout", "event-limit"}
    if verdict == "violation" and not j.get("stopped") and not unended and j.get("thread_bound_cuts"):
        # Bugs of other kinds only, but executions were cut at the thread bound: what lies past
        # the cuts is not explored.
        return None, "bounded", "other bugs only, within the thread bound", secs
    if verdict == "violation" and not j.get("stopped") and not unended and j.get("bounds"):
        # Bugs of other kinds only, every execution explored within bounds (the values of a
        # nondet call, no spurious wake-ups of condition-variable waits): no answer.
        return None, "bounded", "other bugs only, within: " + "; ".join(j["bounds"])[:180], secs
    if verdict == "violation" and not j.get("stopped") and not unended:
        # Bugs, none of them an unreach-call answer, every execution explored to its end: no
        # error reachable.
        return True, None, "", secs
    if verdict == "violation" and j.get("stopped"):
        return None, "out of time", f"stopped ({j.get('stopped')}) after bugs of another kind: {', '.join(sorted(kinds))}"[:200], secs
    why = j.get("stopped") or next((v.get("message", "") for v in j.get("violations", []) if v.get("kind") in ("timeout", "event-limit")), "")
    return None, "out of time", (why or "incomplete")[:200], secs


def peer_answer(name, cmd, limit, cwd):
    """(answer, note, seconds) of a peer: `true` on "No errors were detected", `false` on an error
    report that is an assertion failing (Nidhugg's "Assertion violation", GenMC's "Safety
    violation"), anything else (another error, a crash) no answer, with the peer's error line."""
    rc, out, err, secs = run(cmd, limit, cwd=cwd)
    text = out + err
    if rc is None:
        return None, "out of time", secs
    if "No errors were detected" in text:
        return True, "", secs
    if "Error detected" in text and re.search(r"Error: Assertion violation|Safety violation", text):
        return False, "", secs
    if rc is not None and rc < 0:
        return None, f"crashed (signal {-rc})", secs
    note = next((l.strip() for l in text.splitlines() if re.search(r"ERROR|Error|error:", l)), last_line(text))
    return None, note[:120], secs


# Nidhugg implements __VERIFIER_atomic_* functions, __VERIFIER_nondet_int/uint and
# __VERIFIER_assume, but not the __VERIFIER_atomic_begin/end pair: the peer gets a copy of the
# task with the pair defined as one global mutex (as GenMC's own copies of these tasks do), which
# makes blocks exclusive among themselves only. irs itself gets the task unchanged.
NIDHUGG_PRELUDE = """
static pthread_mutex_t __peer_atomic_lock;
void __peer_block_begin(void) { pthread_mutex_lock(&__peer_atomic_lock); }
void __peer_block_end(void) { pthread_mutex_unlock(&__peer_atomic_lock); }
"""


def nidhugg_input(src, work):
    text = src.read_text(errors="replace")
    if "__VERIFIER_atomic_begin" not in text or re.search(r"void\s+__VERIFIER_atomic_begin\s*\([^;]*\{", text):
        return src
    # Renamed: Nidhugg would run a function named __VERIFIER_atomic_* as one atomic step.
    copy = work / ("nidhugg-" + src.stem + ".c")
    copy.write_text("#define __VERIFIER_atomic_begin __peer_block_begin\n#define __VERIFIER_atomic_end __peer_block_end\n"
                    + text + NIDHUGG_PRELUDE)
    return copy


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tasks", required=True, type=Path, help="directory holding c/pthread*/ of sv-benchmarks")
    ap.add_argument("--irs", default=str(REPO / "target" / "release" / "irs"))
    ap.add_argument("--time-limit", type=int, default=30)
    ap.add_argument("--only", default="", help="comma-separated folders (e.g. pthread-atomic)")
    ap.add_argument("--genmc", default=None)
    ap.add_argument("--nidhugg", default=None, help="path of the nidhugg binary (its nidhuggc beside it is used)")
    ap.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results" / "svcomp" / "results.md")
    ap.add_argument("--work", type=Path, default=Path("/tmp/irs-svcomp-work"))
    a = ap.parse_args()
    only = set(x for x in a.only.split(",") if x)
    todo = tasks(a.tasks, only)
    if not todo:
        sys.exit(f"no tasks under {a.tasks}/c/pthread*/ (each needs a .yml with an unreach-call property and its input file)")
    a.work.mkdir(parents=True, exist_ok=True)
    rows = []
    started = time.time()
    for i, (folder, name, src, expected) in enumerate(todo):
        work = a.work / folder / name
        work.mkdir(parents=True, exist_ok=True)
        answer, column, why, secs = irs_answer(a.irs, src, work, a.time_limit)
        if answer is not None:
            column = f"correct {str(answer).lower()}" if answer == expected else "WRONG"
        row = {"folder": folder, "task": name, "expected": str(expected).lower(), "irs": column, "why": why, "seconds": f"{secs:.1f}"}
        if a.genmc:
            if src.suffix == ".i":
                # A preprocessed task holds glibc's pthread.h; GenMC needs its own (it crashes
                # even on a trivial program preprocessed so), so it cannot run these tasks.
                ans, note, s = None, "cannot run a preprocessed task (.i)", 0.0
            else:
                ans, note, s = peer_answer("genmc", [a.genmc, "--sc", "--disable-estimation", "--disable-sr", str(src)], a.time_limit, work)
            row["genmc"] = ("correct" if ans == expected else "WRONG") if ans is not None else (note or "no answer")
            row["genmc_seconds"] = f"{s:.1f}"
        if a.nidhugg:
            nidhuggc = str(Path(a.nidhugg).parent / "nidhuggc")
            ans, note, s = peer_answer("nidhugg", [nidhuggc, "--", str(nidhugg_input(src, work)), "--sc", "--optimal", "--no-check-mutex-init"], a.time_limit, work)
            row["nidhugg"] = ("correct" if ans == expected else "WRONG") if ans is not None else (note or "no answer")
            row["nidhugg_seconds"] = f"{s:.1f}"
        rows.append(row)
        print(f"[{i + 1}/{len(todo)}] {folder}/{name}: expected {row['expected']}, irs {column} {why[:80]} ({secs:.1f} s)"
              + (f"; genmc {row['genmc']}" if a.genmc else "") + (f"; nidhugg {row['nidhugg']}" if a.nidhugg else ""), flush=True)
    write(a, rows, time.time() - started)


def write(a, rows, wall):
    a.out.parent.mkdir(parents=True, exist_ok=True)
    with open(a.out.with_suffix(".csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)
    cols = ["correct true", "correct false", "WRONG", "bounded", "unsupported", "out of time", "error"]
    lines = ["# `irs verify` on SV-COMP's concurrency tasks", "",
             f"Command: `python3 benchmarks/svcomp/run.py --tasks DIR --time-limit {a.time_limit}"
             + (f" --only {a.only}" if a.only else "") + (" --genmc GENMC" if a.genmc else "")
             + (" --nidhugg NIDHUGG" if a.nidhugg else "") + "`", "",
             f"Run on {datetime.datetime.now().strftime('%Y-%m-%d %H:%M')}, {platform.node()}, {os.cpu_count()} cores; "
             f"{len(rows)} tasks in {wall / 60:.1f} min. Tasks: sosy-lab/sv-benchmarks, each task's expected verdict "
             "for unreach-call from its .yml. irs compiles every task as LP64 (SV-COMP declares most of these ILP32).", "",
             "## Per folder", "", "| folder | tasks | " + " | ".join(cols) + " | irs seconds |", "|---" * (len(cols) + 3) + "|"]
    folders = sorted(set(r["folder"] for r in rows), key=lambda f: FOLDERS.index(f))
    total = {c: 0 for c in cols}
    for f in folders:
        rs = [r for r in rows if r["folder"] == f]
        counts = {c: sum(1 for r in rs if r["irs"] == c) for c in cols}
        for c in cols:
            total[c] += counts[c]
        secs = sum(float(r["seconds"]) for r in rs)
        lines.append(f"| {f} | {len(rs)} | " + " | ".join(str(counts[c]) for c in cols) + f" | {secs:.0f} |")
    lines.append(f"| **all** | {len(rows)} | " + " | ".join(f"**{total[c]}**" for c in cols)
                 + f" | {sum(float(r['seconds']) for r in rows):.0f} |")
    for peer in ("genmc", "nidhugg"):
        if peer in rows[0]:
            right = sum(1 for r in rows if r[peer] == "correct")
            wrong = sum(1 for r in rows if r[peer] == "WRONG")
            lines += ["", f"{peer}: {right} correct, {wrong} wrong, {len(rows) - right - wrong} without an answer "
                          f"({sum(float(r[peer + '_seconds']) for r in rows):.0f} s)."]
    reasons = {}
    for r in rows:
        if r["irs"] in ("unsupported", "error", "out of time", "bounded"):
            key = (r["irs"], re.sub(r" at [^ ]+:\d+(:\d+)?", "", r["why"]))
            reasons.setdefault(key, []).append(f"{r['folder']}/{r['task']}")
    lines += ["", "## Why irs gave no answer", "", "| column | why | tasks |", "|---|---|---|"]
    for (col, why), ts in sorted(reasons.items(), key=lambda x: (-len(x[1]), x[0])):
        lines.append(f"| {col} | {why.replace('|', '/')} | {len(ts)}: {', '.join(ts[:6])}{' …' if len(ts) > 6 else ''} |")
    lines += ["", "## Every task", "", "| task | expected | irs | why | s |" + (" genmc |" if "genmc" in rows[0] else "")
              + (" nidhugg |" if "nidhugg" in rows[0] else ""),
              "|---|---|---|---|---|" + ("---|" if "genmc" in rows[0] else "") + ("---|" if "nidhugg" in rows[0] else "")]
    for r in rows:
        lines.append(f"| {r['folder']}/{r['task']} | {r['expected']} | {r['irs']} | {r['why'].replace('|', '/')[:120]} | {r['seconds']} |"
                     + (f" {r['genmc']} |" if "genmc" in r else "") + (f" {r['nidhugg']} |" if "nidhugg" in r else ""))
    a.out.write_text("\n".join(lines) + "\n")
    print(f"wrote {a.out}; wrong: {total['WRONG']}")


if __name__ == "__main__":
    main()
