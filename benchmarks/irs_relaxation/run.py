#!/usr/bin/env python3
"""Time to relaxation (issue 6; IRS paper §5: overhead falls as verification advances, "below
50% after 1% of traces"). For each of our versions of the IRS paper's programs
(benchmarks/irs_paper/*.c) this starts `irs verify --publish` and, while it runs, runs the
program over and over under the prefix in force (ENFORCE, the installed segment), each run next
to a run of the plain `clang-14 -O2` build (alternating which goes first). It reports:

- live: the time until the first relaxation, until the live overhead first drops to 10% or
  less (median work time of the runs under IRS vs the plain runs made alongside, per 0.5 s
  window), and until verification finishes; the runs under each published step and their
  overhead (steps that were replaced within milliseconds get no runs);
- per step: every published cutoff measured again after verification, without the verifier
  competing for the CPU: the instrumented build under a prefix file holding that cutoff (made
  with `irs constrain --cut` from the default schedule's trace, which is the verifier's first
  execution) against the plain build, interleaved round by round. Each step is shown with the
  fraction of all traces verified when it was published and its constraint count.

Overhead = the median, over pairs of adjacent runs (one under IRS, one plain, in alternating
order), of the ratio of their work times (the programs print `work_us=`, first create to last
join), minus 1: pairs see the same load, which on a shared machine matters. Busy-waiting programs (dekker, lamport, peterson) have infinite
unfoldings: their verification stops at --spin-limit seconds and has no "fraction of traces".

Writes benchmarks/results/irs_relaxation/{results.md, steps.csv, live.csv,
overhead_vs_traces.svg, live_overhead.svg}. Standard library only; run after
`cargo build --release --workspace`.
"""
import argparse, csv, datetime, json, math, os, statistics, subprocess, sys, tempfile, time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PROGRAMS = REPO / "benchmarks/irs_paper"

# name, -D flags, spins (verification never completes)
SPECS = [
    ("bigshot", [], False),
    ("dekker", [], True),
    ("fibonacci", ["-DROUNDS=4"], False),
    ("indexer", [], False),
    ("lamport", [], True),
    ("last_zero", [], False),
    ("peterson", [], True),
    ("shared_pointer", [], False),
]

def sh(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        sys.exit(f"error: {' '.join(map(str, cmd))}: {(r.stderr or r.stdout).strip().splitlines()[-1:]}")
    return r.stdout

def work_us(stdout):
    for line in reversed(stdout.splitlines()):
        if line.startswith("work_us="):
            return float(line.split("=", 1)[1])
    return None

def median(v):
    return statistics.median(v) if v else None

def overhead(irs, plain):
    return None if irs is None or not plain else (irs / plain - 1) * 100

def fmt(v, spec="{:.1f}", none="–"):
    return none if v is None else spec.format(v)

def program_id(irs, prog):
    """The program id, as `irs status` names it (also when no verifier ever ran)."""
    r = subprocess.run([irs, "status", "--json", prog], capture_output=True, text=True)
    if r.returncode == 0:
        return json.loads(r.stdout)["program_id"]
    if "(program " in r.stderr:
        return r.stderr.split("(program ")[1].split(")")[0]
    sys.exit(f"error: cannot get the program id of {prog}: {r.stderr.strip()}")

def reset(pid):
    for f in [f"/dev/shm/irs-{pid}", f"/dev/shm/irs-{pid}.verifier"]:
        try:
            os.remove(f)
        except FileNotFoundError:
            pass

def read_state(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None

def run_once(cmd, env=None):
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    return r.returncode == 0, work_us(r.stdout)

def live(a, name, prog, plain, tmp, spins):
    """Verification with publishing, and runs under IRS next to plain runs meanwhile."""
    pid = program_id(a.irs, prog)
    reset(pid)
    seg, state = f"/dev/shm/irs-{pid}", f"/dev/shm/irs-{pid}.verifier"
    cmd = [a.irs, "verify", "--publish", "--json", "--status-file", state, "--out-dir", tmp]
    if spins:
        cmd += ["--time-limit", str(a.spin_limit)]
    env = dict(os.environ, IRS_MODE="enforce", IRS_PREFIX="installed")
    t0 = time.monotonic()
    v = subprocess.Popen(cmd + ["--", prog], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    while not (os.path.exists(seg) and read_state(state)) and v.poll() is None:
        time.sleep(0.001)
    runs, rnd, done_at, after = [], 0, None, 0
    while True:
        st = read_state(state) or {}
        row = {"round": rnd, "published": st.get("published", 0), "constraints": st.get("constraints"), "traces": st.get("traces", 0)}
        for kind in (["irs", "plain"] if rnd % 2 == 0 else ["plain", "irs"]):
            t = time.monotonic() - t0
            ok, w = run_once([prog], env) if kind == "irs" else run_once([plain])
            runs.append(dict(row, kind=kind, t=t, ok=ok, work=w))
        rnd += 1
        if done_at is None and v.poll() is not None:
            done_at = time.monotonic()
        if done_at is not None:
            after += 1
            if time.monotonic() - done_at >= a.tail and after >= 30:
                break
    j = json.loads(v.stdout.read().strip().splitlines()[-1])
    final = read_state(state) or {}
    reset(pid)
    return j, runs, final

def per_step(a, prog, plain, log, tmp):
    """Every published cutoff, measured again after verification, round by round."""
    first = Path(tmp) / "first.trace"
    sh([a.irs, "replay", "--schedule-default", "--trace-out", str(first), "--", prog])
    files = []
    for i, step in enumerate(log):
        f = Path(tmp) / f"step{i}.prefix"
        out = sh([a.irs, "constrain", "--trace", str(first), "--cut", ",".join(map(str, step["cut"])), "--out", str(f)])
        got = int(out.split("threads, ")[1].split(" of ")[0])
        if got != step["constraints"]:
            return None, f"the default schedule's table differs from the verifier's ({got} vs {step['constraints']} constraints at step {i})"
        files.append(f)
    # Each step's runs next to a plain run, in alternating order: the ratio of the pair is
    # taken under the same load; the overhead is the median ratio.
    irs_s = {i: [] for i in range(len(files))}
    ratios = {i: [] for i in range(len(files))}
    plain_s = []
    for r in range(a.rounds):
        for i in range(len(files)):
            c = (i + r) % len(files)
            pair = {}
            for kind in (["irs", "plain"] if (r + c) % 2 == 0 else ["plain", "irs"]):
                ok, w = run_once([prog], dict(os.environ, IRS_PREFIX=str(files[c]))) if kind == "irs" else run_once([plain])
                pair[kind] = w if ok else None
            if pair["plain"] is not None:
                plain_s.append(pair["plain"])
            if pair["irs"] is not None:
                irs_s[c].append(pair["irs"])
                if pair["plain"]:
                    ratios[c].append(pair["irs"] / pair["plain"])
    pm = median(plain_s)
    return [(median(irs_s[i]), (median(ratios[i]) - 1) * 100 if ratios[i] else None) for i in range(len(files))], pm

def svg_plot(path, title, xlabel, ylabel, series, xlog, xmin, xmax, ymax, steps=False):
    """One polyline per (name, [(x, y)]), points in the given order; log or linear x. With
    `steps`, each y holds until the next point's x (a value in force until the next one)."""
    W, H, L, R, T, B = 860, 500, 70, 200, 40, 50
    colors = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"]
    ymin = min([0] + [y for _, pts in series for _, y in pts])
    def px(x):
        if xlog:
            x = max(x, xmin)
            return L + (math.log10(x) - math.log10(xmin)) / (math.log10(xmax) - math.log10(xmin)) * (W - L - R)
        return L + (x - xmin) / (xmax - xmin) * (W - L - R)
    def py(y):
        return H - B - (min(y, ymax) - ymin) / (ymax - ymin) * (H - T - B)
    esc = lambda s: s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    o = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="12">',
         f'<rect width="{W}" height="{H}" fill="white"/>',
         f'<text x="{(W - R + L) / 2}" y="22" text-anchor="middle" font-size="15">{esc(title)}</text>']
    step = 10 ** math.floor(math.log10(max(ymax - ymin, 1) / 4))
    step *= 5 if (ymax - ymin) / step > 20 else 2 if (ymax - ymin) / step > 8 else 1
    y = math.ceil(ymin / step) * step
    while y <= ymax + 1e-9:
        o.append(f'<line x1="{L}" x2="{W - R}" y1="{py(y):.1f}" y2="{py(y):.1f}" stroke="{"#999" if y == 0 else "#ddd"}"/>'
                 f'<text x="{L - 6}" y="{py(y) + 4:.1f}" text-anchor="end">{y:g}</text>')
        y += step
    xt = [10 ** e for e in range(math.floor(math.log10(xmin)), math.ceil(math.log10(xmax)) + 1)] if xlog else \
         [xmin + i * (xmax - xmin) / 5 for i in range(6)]
    for x in xt:
        if xmin <= x <= xmax:
            o.append(f'<line x1="{px(x):.1f}" x2="{px(x):.1f}" y1="{T}" y2="{H - B}" stroke="#eee"/>'
                     f'<text x="{px(x):.1f}" y="{H - B + 16}" text-anchor="middle">{x:g}</text>')
    o.append(f'<line x1="{L}" x2="{L}" y1="{T}" y2="{H - B}" stroke="black"/><line x1="{L}" x2="{W - R}" y1="{H - B}" y2="{H - B}" stroke="black"/>')
    o.append(f'<text x="{(W - R + L) / 2}" y="{H - 10}" text-anchor="middle">{esc(xlabel)}</text>')
    o.append(f'<text transform="translate(18,{(H - B + T) / 2}) rotate(-90)" text-anchor="middle">{esc(ylabel)}</text>')
    for i, (name, pts) in enumerate(series):
        c = colors[i % len(colors)]
        line = [q for (x0, y0), (x1, _) in zip(pts, pts[1:]) for q in ((x0, y0), (x1, y0))] + pts[-1:] if steps else pts
        o.append(f'<polyline fill="none" stroke="{c}" stroke-width="2" points="{" ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in line)}"/>')
        o += [f'<circle cx="{px(x):.1f}" cy="{py(y):.1f}" r="2.5" fill="{c}"/>' for x, y in pts]
        ly = T + 10 + i * 18
        o.append(f'<line x1="{W - R + 15}" x2="{W - R + 40}" y1="{ly}" y2="{ly}" stroke="{c}" stroke-width="3"/>'
                 f'<text x="{W - R + 46}" y="{ly + 4}">{esc(name)}</text>')
    o.append("</svg>\n")
    Path(path).write_text("\n".join(o))

def cpu_times():
    """(busy, total) CPU seconds of the whole machine (/proc/stat), and ours (this process and
    its children, getrusage): the difference is what other work took meanwhile."""
    import resource
    f = [int(x) for x in open("/proc/stat").readline().split()[1:]]
    hz = os.sysconf("SC_CLK_TCK")
    total = sum(f[:8]) / hz
    busy = total - (f[3] + f[4]) / hz
    ours = sum(getattr(resource.getrusage(w), a) for w in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN) for a in ("ru_utime", "ru_stime"))
    return busy, total, ours

def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--irs", default=str(REPO / "target/release/irs"))
    ap.add_argument("--only", nargs="*", help="program names (default: all)")
    ap.add_argument("--rounds", type=int, default=60, help="rounds of the per-step measurement")
    ap.add_argument("--tail", type=float, default=1.0, help="seconds of live runs after verification ends")
    ap.add_argument("--spin-limit", type=float, default=10.0, help="verification time limit of the busy-waiting programs")
    ap.add_argument("--out", default=str(REPO / "benchmarks/results/irs_relaxation"))
    a = ap.parse_args()
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    load = open("/proc/loadavg").read().split()[:3]
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    commit = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    started = datetime.datetime.now(datetime.timezone.utc)
    busy0, total0, ours0 = cpu_times()
    summary, sections, step_rows, live_rows = [], [], [], []
    trace_series, live_series = [], []
    with tempfile.TemporaryDirectory() as d:
        for name, defines, spins in SPECS:
            if a.only and name not in a.only:
                continue
            src = PROGRAMS / f"{name}.c"
            prog, plain = str(Path(d) / name), str(Path(d) / f"{name}.plain")
            sh(["clang-14", "-O2", "-pthread", *defines, "-o", plain, str(src)])
            sh([a.irs, "cc", "-O2", "-pthread", *defines, "-o", prog, str(src)])
            print(f"{name}: verifying and running...", flush=True)
            j, runs, final = live(a, name, prog, plain, d, spins)
            log = j["published"]["log"]
            total = j["traces"] if j["verdict"] != "incomplete" else None
            print(f"{name}: {j['verdict']}, {j['traces']} traces in {j['seconds']:.1f} s, {len(log)} steps; measuring each step...", flush=True)
            clean, plain_med = per_step(a, prog, plain, log, d)
            note = None
            if clean is None:
                note, clean = plain_med, [(None, None)] * len(log)
            # Live runs per step (by the log length when the round started); overhead = median
            # of each round's IRS/plain ratio (the two runs of a round are adjacent).
            pairs = {}
            for r in runs:
                pairs.setdefault(r["round"], {})[r["kind"]] = r
            def ratio_oh(rounds):
                rs = [p["irs"]["work"] / p["plain"]["work"] for p in rounds
                      if all(k in p and p[k]["ok"] and p[k]["work"] for k in ("irs", "plain"))]
                return ((median(rs) - 1) * 100 if len(rs) >= 5 else None), len(rs)
            rows = []
            for i, s in enumerate(log):
                live_oh, n = ratio_oh([p for p in pairs.values() if p.get("irs", {}).get("published") == i + 1])
                pct = 100.0 * s["traces"] / total if total else None
                rows.append(dict(step=i + 1, seconds=s["seconds"], traces=s["traces"], pct=pct, constraints=s["constraints"],
                                 cut=s["cut"], runs=n, live=live_oh, clean_us=clean[i][0], clean=clean[i][1]))
            for r in rows:
                step_rows.append([name, r["step"], f"{r['seconds']:.4f}", r["traces"], fmt(r["pct"], "{:.4f}", ""), r["constraints"],
                                  " ".join(map(str, r["cut"])), r["runs"], fmt(r["live"], "{:.1f}", ""), fmt(r["clean_us"], "{:.1f}", ""),
                                  fmt(plain_med if isinstance(plain_med, float) else None, "{:.1f}", ""), fmt(r["clean"], "{:.1f}", "")])
            # Live overhead per 0.5 s window (by when the round started).
            windows = {}
            for p in pairs.values():
                if "irs" in p:
                    windows.setdefault(int(p["irs"]["t"] / 0.5), []).append(p)
            wpts = []
            for w, ps in sorted(windows.items()):
                oh, n = ratio_oh(ps)
                ok = lambda k: [p[k]["work"] for p in ps if k in p and p[k]["ok"] and p[k]["work"]]
                live_rows.append([name, f"{w * 0.5:.1f}", n, fmt(median(ok("irs")), "{:.1f}", ""), fmt(median(ok("plain")), "{:.1f}", ""),
                                  fmt(oh, "{:.1f}", ""), ps[-1]["irs"]["constraints"] if ps[-1]["irs"]["constraints"] is not None else ""])
                if oh is not None:
                    wpts.append((w * 0.5 + 0.25, oh))
            live_series.append((name, wpts))
            if total:
                trace_series.append((name, [(max(r["pct"], 1e-3), r["clean"]) for r in rows if r["clean"] is not None]))
            # Summary.
            first_relax = log[1]["seconds"] if len(log) > 1 else None
            # From when on the overhead stays at most 10%: per step, the first step from which
            # every later step is; live, the first window from which the pairs of all later
            # windows have a median ratio of at most 1.10.
            clean_10 = next((r["seconds"] for i, r in enumerate(rows)
                             if all(q["clean"] is not None and q["clean"] <= 10 for q in rows[i:])), None)
            ordered = sorted(windows.items())
            live_10 = next((w * 0.5 for k, (w, _) in enumerate(ordered)
                            if (lambda oh: oh is not None and oh <= 10)(ratio_oh([p for _, ps in ordered[k:] for p in ps])[0])), None)
            at1 = [r for r in rows if r["pct"] is not None and r["pct"] <= 1.0]
            at1 = at1[-1] if at1 else None
            irs_runs = [r for r in runs if r["kind"] == "irs"]
            failed = sum(not r["ok"] for r in irs_runs)
            threads = len(log[0]["cut"]) - 1
            summary.append([name + (" (ROUNDS=4)" if defines else ""), threads, j["verdict"], j["traces"], f"{j['seconds']:.2f}", len(log),
                            fmt(first_relax, "{:.3f}"), fmt(clean_10, "{:.3f}", "never"), fmt(live_10, "{:.2f}", "never"),
                            f"{at1['constraints']} / {fmt(at1['clean'])}%" if at1 else "–",
                            f"{rows[-1]['constraints']} / {fmt(rows[-1]['clean'])}%", f"{len(irs_runs) - failed}/{len(irs_runs)}"])
            lines = [f"### {name}{' ' + ' '.join(defines) if defines else ''}", "",
                     f"Verification: {j['verdict']}, {j['traces']} traces, {j['executions']} executions in {j['seconds']:.2f} s"
                     + (f" (stopped at the {a.spin_limit:g} s limit: busy-wait loops make the unfolding infinite)" if spins else "") + ". "
                     f"Live: {len(irs_runs)} runs under IRS ({failed} failed), each next to a plain run. "
                     f"Per-step measurement: plain median {fmt(plain_med if isinstance(plain_med, float) else None)} µs.", ""]
            if note:
                lines += [f"Per-step measurement skipped: {note}.", ""]
            lines += ["| step | published at (s) | traces verified | % of all traces | constraints | cutoff | live runs | live overhead % | per-step median µs | per-step overhead % |",
                      "| ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: |"]
            for r in rows:
                lines.append(f"| {r['step']} | {r['seconds']:.3f} | {r['traces']} | {fmt(r['pct'], '{:.3f}')} | {r['constraints']} | {','.join(map(str, r['cut']))} | "
                             f"{r['runs']} | {fmt(r['live'])} | {fmt(r['clean_us'])} | {fmt(r['clean'])} |")
            sections.append("\n".join(lines))
    with open(out / "steps.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["program", "step", "published_s", "traces", "pct_traces", "constraints", "cut", "live_runs", "live_overhead_pct",
                    "step_median_us", "plain_median_us", "step_overhead_pct"])
        w.writerows(step_rows)
    with open(out / "live.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["program", "window_start_s", "irs_runs", "irs_median_us", "plain_median_us", "overhead_pct", "constraints_in_force"])
        w.writerows(live_rows)
    ymax = max([50] + [y for _, p in trace_series + live_series for _, y in p])
    svg_plot(out / "overhead_vs_traces.svg", "Overhead of the prefix in force vs % of traces verified", "% of all traces verified (log; 0 drawn at 0.001)",
             "overhead % (per-step measurement)", trace_series, True, 1e-3, 100, min(ymax, 200), steps=True)
    tmax = max([1] + [x for _, p in live_series for x, _ in p])
    svg_plot(out / "live_overhead.svg", "Live overhead while the verifier runs (median per 0.5 s)", "seconds since the verifier started (log)",
             "overhead %", live_series, True, 0.1, tmax, min(ymax, 200))
    busy1, total1, ours1 = cpu_times()
    others = 100.0 * max(0.0, (busy1 - busy0) - (ours1 - ours0)) / max(total1 - total0, 1e-9)
    cmd = "python3 benchmarks/irs_relaxation/run.py" + (f" --only {' '.join(a.only)}" if a.only else "") + \
          f" --rounds {a.rounds} --tail {a.tail:g} --spin-limit {a.spin_limit:g}"
    head = [
        "# Time to relaxation: IRS end to end on the IRS paper's programs", "",
        f"- Command: `{cmd}` (from the repository root)",
        f"- Date: {started:%Y-%m-%d %H:%M} UTC; commit {commit}",
        f"- Machine: nproc={os.cpu_count()}, CPU: {cpu}, kernel {os.uname().release}, load average before: {' '.join(load)}; "
        f"CPU taken by other work on the machine during the run: {others:.0f}% of its capacity (shared machine: the noise is large)",
        "- Programs: `benchmarks/irs_paper/*.c`, built with `clang-14 -O2 -pthread` (plain) and `irs cc -O2 -pthread`; fibonacci with "
        "-DROUNDS=4 (the default 10 has far too many traces to verify; ROUNDS=5 has 618,157 and takes 65 s).",
        "- Live: `irs verify --publish` runs while the program runs under the installed segment (IRS_MODE=enforce IRS_PREFIX=installed) and the "
        "plain build runs alongside, alternating which goes first. A pair of runs belongs to the step published when it started. Live overhead = "
        "median over the step's (or 0.5 s window's) pairs of IRS work time / plain work time, - 1; steps with fewer than 5 pairs have none. "
        "The verifier takes one of the two cores meanwhile.",
        f"- Per step: after verification, every published cutoff as a prefix file, {a.rounds} runs each, each next to a plain run "
        "(steps in rotating order, round by round), without the verifier running; overhead = median ratio of the pairs - 1.",
        "- Times are the verifier's own (since it started). `≤10% from`: per step, the publication time of the first step from which every "
        "later step's overhead is at most 10%; live, the start of the first 0.5 s window from which the pairs of all later windows have "
        "a median overhead of at most 10% (`never`: not even the last ones).",
        "",
        "| program | threads | verdict | traces | verification s | steps | first relaxation s | ≤10% from (per step) s | ≤10% from (live) s | at 1% of traces: constraints / overhead | last step: constraints / overhead | runs under IRS ok |",
        "| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- | ---: |",
    ]
    head += ["| " + " | ".join(map(str, r)) + " |" for r in summary]
    (out / "results.md").write_text("\n".join(head) + "\n\n## Every step\n\n" + "\n\n".join(sections) + "\n")
    print(f"wrote {out}")

if __name__ == "__main__":
    main()
