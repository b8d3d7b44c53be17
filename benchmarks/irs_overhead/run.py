#!/usr/bin/env python3
"""ENFORCE overhead per constraint count (the IRS paper's evaluation, our way), against the
plain build (clang -O2) in the same run, with `irs bench overhead` for each program: the first
trace under a policy (`default`: few preemptions; `round-robin`: many), then every prefix from
all its constraints down to none, each run as a separate process, interleaved round by round.

Three sets of programs, each written to its own files in the output directory:

- `paper`: our versions of the IRS paper's programs (benchmarks/irs_paper/*.c); they print the
  time of their threads' work (`work_us=`), which is what is compared. Both policies (or those
  `--policies` names; `natural`: the order of events of a run with real threads, as `irs verify
  --publish --anchor natural` anchors its prefixes).
  Files: results.md, overhead_{default,round_robin}.{csv,svg}.
- `sync`: the synchronisation benchmarks (benchmarks/sync_programs/*.c) with a workload large
  enough that a run is not only the process's start (sizes below); the process's wall time is
  compared, start-up included, as a user measures it. Default policy.
  Files: sync.md, overhead_sync.{csv,svg}.
- `real`: real programs checked out outside the repository (given by path, never committed),
  built unchanged by clang and by `irs cc`, run on a small input: pigz compressing a 1 MB file
  (`--pigz`), C-Thread-Pool's `example` (`--thpool`). Process wall time. Default policy.
  Files: real.md, overhead_real.{csv,svg}.

`--points 0` (the default) measures every constraint count; `--points N` at most N of them,
evenly spread (always all and none).

Standard library only; run from the repository root after `cargo build --release --workspace`:

  python3 benchmarks/irs_overhead/run.py --set paper --runs 200
  python3 benchmarks/irs_overhead/run.py --set sync --runs 60
  python3 benchmarks/irs_overhead/run.py --set real --runs 40 --pigz /tmp/real/pigz --thpool /tmp/real/C-Thread-Pool
"""
import argparse, datetime, os, shutil, subprocess, sys, tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PAPER = REPO / "benchmarks/irs_paper"
SYNC = REPO / "benchmarks/sync_programs"

# The synchronisation benchmarks' workloads for timing (their defaults are sized for
# exhaustive verification, a fraction of a millisecond of work).
SYNC_SIZES = {
    "bounded_buffer": ["-DPRODUCERS=2", "-DCONSUMERS=2", "-DITEMS=90", "-DCAPACITY=8"],
    "rw_cache": ["-DREADERS=3", "-DREADS=300", "-DUPDATES=100"],
    "sem_pipeline": ["-DITEMS=600", "-DSLOTS=4"],
    "stencil": ["-DTHREADS=3", "-DN=30", "-DPHASES=40"],
    "thread_pool": [],
    "thpool_like": ["-DWORKERS=2", "-DJOBS=100"],
    "treiber_stack": [],
}


def sh(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        sys.exit(f"error: {' '.join(map(str, cmd))}: {(r.stderr or r.stdout).strip().splitlines()[-1:]}")
    return r.stdout


def bench(a, plain, inst, name, policy, csv, svg, args=(), cwd=None):
    cmd = [a.irs, "bench", "overhead", "--plain", str(plain), "--runs", str(a.runs), "--policy", policy, "--name", name,
           "--csv", str(csv), "--svg", str(svg)]
    if a.points:
        cmd += ["--points", str(a.points)]
    return sh(cmd + ["--", str(inst), *args], cwd=cwd)


def header(a, title, what):
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    extra = "".join(f" --{k} {v}" for k, v in (("pigz", a.pigz), ("thpool", a.thpool)) if v and a.set == "real")
    points = f" --points {a.points}" if a.points else ""
    points += f" --policies {','.join(a.policies)}" if a.policies else ""
    return (f"# {title}\n\n- Date: {datetime.datetime.utcnow():%Y-%m-%d %H:%M} UTC; irs at "
            f"{sh(['git', 'rev-parse', '--short', 'HEAD'], cwd=REPO).strip()}\n"
            f"- Command: `python3 benchmarks/irs_overhead/run.py --set {a.set} --runs {a.runs}{points}{extra}`\n"
            f"- Machine: nproc={os.cpu_count()}, CPU: {cpu}, kernel {os.uname().release}; load average before: {os.getloadavg()[0]:.1f}\n"
            f"- Each configuration (the plain build, and the irs build under each prefix) ran {a.runs} times as separate processes, "
            f"interleaved round by round; figures are medians of {what}.\n\n")


def summary(csv_texts):
    """A table of each series of the CSVs: the overhead under the whole first trace, under none,
    the median and the largest over every count measured, and how many counts are above 10%."""
    import csv as csvmod, io, statistics
    rows = [r for t in csv_texts for r in csvmod.DictReader(io.StringIO(t))]
    series = {}
    for r in rows:
        series.setdefault((r["program"], r["policy"]), []).append((int(r["constraints"]), float(r["overhead_pct"])))
    lines = ["| program | first trace | counts measured | all constraints | none | median over counts | largest (at count) | counts above 10% |",
             "|---|---|---:|---:|---:|---:|---:|---:|"]
    for (prog, pol), v in series.items():
        v.sort()
        worst = max(v, key=lambda x: x[1])
        none = next((o for c, o in v if c == 0), float("nan"))
        lines.append(f"| {prog} | {pol} | {len(v)} | {v[-1][1]:.1f}% ({v[-1][0]}) | {none:.1f}% | {statistics.median(o for _, o in v):.1f}% "
                     f"| {worst[1]:.1f}% ({worst[0]}) | {sum(1 for _, o in v if o > 10)} of {len(v)} |")
    return "Summary (overhead over the plain build in the same run; the tables below give every count):\n\n" + "\n".join(lines) + "\n\n"


def paper(a, out, d):
    sources = sorted(p for p in PAPER.glob("*.c") if not a.only or p.stem in a.only)
    md = []
    for policy in a.policies or ["default", "round-robin"]:
        tag = policy.replace("-", "_")
        csv = d / f"{tag}.csv"
        for src in sources:
            plain, inst = d / f"{src.stem}.plain", d / src.stem
            if not inst.exists():
                sh(["clang-14", "-O2", "-pthread", "-o", str(plain), str(src)])
                sh([a.irs, "cc", "-O2", "-pthread", "-o", str(inst), str(src)])
            print(f"{src.stem} ({policy})...", flush=True)
            md.append(bench(a, plain, inst, src.stem, policy, csv, out / f"overhead_{tag}.svg"))
        (out / f"overhead_{tag}.csv").write_text(csv.read_text())
    head = header(a, "ENFORCE overhead per constraint count: the IRS paper's programs",
                  "the programs' own work time (first create to last join, `work_us=`)")
    head += ("- First trace: `default` = the controlled execution with the default policy (few preemptions), `round-robin` = the next thread at every step (many), "
             "`natural` = the program's own order of events (one isolated run with real threads, followed), `auto` = the cheaper of `default` and `natural`, timed "
             "(what `irs verify --publish` and `irs run` anchor on unless told).\n\n")
    head += summary([(out / f"overhead_{p.replace('-', '_')}.csv").read_text() for p in (a.policies or ["default", "round-robin"])])
    (out / "results.md").write_text(head + "\n".join(md))


def sync(a, out, d):
    md = []
    csv = d / "sync.csv"
    for src in sorted(p for p in SYNC.glob("*.c") if not a.only or p.stem in a.only):
        sizes = SYNC_SIZES.get(src.stem, [])
        plain, inst = d / f"{src.stem}.plain", d / src.stem
        sh(["clang-14", "-O2", "-pthread", *sizes, f"-I{SYNC}", "-o", str(plain), str(src)])
        sh([a.irs, "cc", "-O2", "-pthread", *sizes, f"-I{SYNC}", "-o", str(inst), str(src)])
        print(f"{src.stem} {' '.join(sizes)}...", flush=True)
        for policy in a.policies or ["default"]:
            md.append(f"Built with `{' '.join(sizes) or '(its defaults)'}`.\n\n" + bench(a, plain, inst, src.stem, policy, csv, out / "overhead_sync.svg"))
    (out / "overhead_sync.csv").write_text(csv.read_text())
    (out / "sync.md").write_text(header(a, "ENFORCE overhead per constraint count: the synchronisation benchmarks",
                                        "each process's wall time (its start included)") + summary([csv.read_text()]) + "\n".join(md))


def real(a, out, d):
    md = []
    csv = d / "real.csv"

    def copy(src, where):
        shutil.copytree(src, where, ignore=shutil.ignore_patterns(".git"))
        return where

    if a.pigz:
        data = d / "pigz-data"
        data.mkdir()
        # 1 MB of text: pigz's own source repeated.
        text = (Path(a.pigz) / "pigz.c").read_bytes()
        (data / "input.txt").write_bytes((text * (1_000_000 // len(text) + 1))[:1_000_000])
        exes = {}
        for kind, cc in (("plain", "clang-14"), ("irs", f"{a.irs} cc")):
            w = copy(a.pigz, d / f"pigz-{kind}")
            subprocess.run(["make", "-s", "clean"], cwd=w, capture_output=True)
            sh(["make", "-s", f"CC={cc}"], cwd=w)
            exes[kind] = w / "pigz"
        print("pigz...", flush=True)
        for policy in a.policies or ["default"]:
            md.append("pigz (madler/pigz): `pigz -c -p 2 input.txt` (1 MB of text to standard output, two compression threads).\n\n"
                      + bench(a, exes["plain"], exes["irs"], "pigz", policy, csv, out / "overhead_real.svg", ["-c", "-p", "2", "input.txt"], cwd=data))
    if a.thpool:
        exes = {}
        for kind, cc in (("plain", "clang-14"), ("irs", f"{a.irs} cc")):
            w = copy(a.thpool, d / f"thpool-{kind}")
            sh([*cc.split(), "-O2", "-pthread", "-o", "example", "example.c", "thpool.c"], cwd=w)
            exes[kind] = w / "example"
        print("thpool example...", flush=True)
        for policy in a.policies or ["default"]:
            md.append("C-Thread-Pool (Pithikos/C-Thread-Pool): its `example` (4 workers, 40 jobs that print).\n\n"
                      + bench(a, exes["plain"], exes["irs"], "thpool_example", policy, csv, out / "overhead_real.svg", cwd=d))
    if not md:
        sys.exit("error: --set real needs --pigz and/or --thpool")
    (out / "overhead_real.csv").write_text(csv.read_text())
    (out / "real.md").write_text(header(a, "ENFORCE overhead per constraint count: real programs",
                                        "each process's wall time (its start included)") + summary([csv.read_text()]) + "\n".join(md))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--set", choices=["paper", "sync", "real"], default="paper")
    ap.add_argument("--irs", default=str(REPO / "target/release/irs"))
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--points", type=int, default=0, help="at most this many constraint counts per program (0: every one)")
    ap.add_argument("--only", nargs="*", help="program names to run (default: all of the set)")
    ap.add_argument("--policies", type=lambda v: v.split(","), help="first traces to cut the prefixes from, comma-separated: default, round-robin, natural (default: default,round-robin for paper, default otherwise)")
    ap.add_argument("--pigz", help="a pigz checkout (--set real)")
    ap.add_argument("--thpool", help="a C-Thread-Pool checkout (--set real)")
    ap.add_argument("--out", default=str(REPO / "benchmarks/results/irs_overhead"))
    a = ap.parse_args()
    a.irs = str(Path(a.irs).resolve())
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as d:
        {"paper": paper, "sync": sync, "real": real}[a.set](a, out, Path(d))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
