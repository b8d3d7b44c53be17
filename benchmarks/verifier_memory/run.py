#!/usr/bin/env python3
"""The verifier's memory over a long exploration (docs/src/verifier-memory.md): `irs verify` on a
compressor-shaped program (compressor.c here: worker threads take blocks from a queue under a
mutex and condition variable, encode them into shared arrays, and keep unlocked statistics),
sampling the verifier's resident set (VmRSS of /proc/PID/status) and its executions (from
`--status-file`, updated every 100 ms) twice a second. Writes a CSV per run and one SVG that
plots peak RSS against executions, and a summary table.

Runs, each for --seconds:
- `long`: `--no-race-free-words`, every memory word an object: executions of ~37000 events
  over a few thousand objects, the shape that made the verifier grow by gigabytes (long
  executions, many objects in every event's history);
- `default`: the default options (most words race-free: short executions);
- `limit`: `long` with `--memory-limit` set below what it needs: the exploration must stop with
  `incomplete`, naming the limit.
With `--baseline-irs PATH` (another build, e.g. before the change), `long` is also run with it.

Standard library only. Run from the repository root after `cargo build --release --workspace`.
"""
import argparse, csv, datetime, json, os, subprocess, sys, tempfile, time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd"]


def rss_kb(pid, field="VmRSS"):
    try:
        for line in open(f"/proc/{pid}/status"):
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except OSError:
        pass
    return None


def run_one(irs, exe, flags, seconds, workdir, name):
    """Run one exploration, sampling; returns (samples, last stdout lines)."""
    status = Path(workdir) / f"{name}.status.json"
    cmd = [irs, "verify", "--time-limit", str(seconds), "--status-file", str(status), "--out-dir", str(workdir)] + flags + ["--", str(exe)]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=workdir)
    t0, samples, peak = time.time(), [], 0
    while p.poll() is None:
        time.sleep(0.5)
        kb = rss_kb(p.pid)
        if kb is None:
            continue
        peak = max(peak, kb)
        try:
            execs = json.loads(status.read_text()).get("executions", 0)
        except (OSError, ValueError):
            execs = samples[-1][1] if samples else 0
        samples.append((round(time.time() - t0, 1), execs, round(kb / 1024, 1), round(peak / 1024, 1)))
    out = p.stdout.read()
    return samples, cmd, out


def svg(series, path, title):
    """A line plot of peak RSS (MB) against executions, one polyline per run."""
    w, h, l, r, t, b = 820, 480, 70, 230, 40, 50
    max_x = max([s[-1][1] for _, s in series if s] + [1])
    max_y = max([p[3] for _, s in series for p in s] + [1])
    sx = lambda x: l + (w - l - r) * x / max_x
    sy = lambda y: h - b - (h - t - b) * y / max_y
    o = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="12">',
         f'<rect width="{w}" height="{h}" fill="white"/>',
         f'<text x="{w / 2}" y="20" text-anchor="middle" font-size="14">{title}</text>',
         f'<line x1="{l}" y1="{h - b}" x2="{w - r}" y2="{h - b}" stroke="black"/>',
         f'<line x1="{l}" y1="{t}" x2="{l}" y2="{h - b}" stroke="black"/>',
         f'<text x="{(l + w - r) / 2}" y="{h - 12}" text-anchor="middle">executions</text>',
         f'<text x="16" y="{(t + h - b) / 2}" text-anchor="middle" transform="rotate(-90 16 {(t + h - b) / 2})">peak RSS of the verifier (MB)</text>']
    for i in range(6):
        x, y = max_x * i / 5, max_y * i / 5
        o.append(f'<text x="{sx(x)}" y="{h - b + 16}" text-anchor="middle">{x:.0f}</text>')
        o.append(f'<text x="{l - 6}" y="{sy(y) + 4}" text-anchor="end">{y:.0f}</text>')
        o.append(f'<line x1="{l}" y1="{sy(y)}" x2="{w - r}" y2="{sy(y)}" stroke="#eee"/>')
    for i, (name, s) in enumerate(series):
        c = COLORS[i % len(COLORS)]
        pts = " ".join(f"{sx(p[1]):.1f},{sy(p[3]):.1f}" for p in s)
        o.append(f'<polyline fill="none" stroke="{c}" stroke-width="2" points="{pts}"/>')
        o.append(f'<line x1="{w - r + 10}" y1="{t + 10 + 18 * i}" x2="{w - r + 30}" y2="{t + 10 + 18 * i}" stroke="{c}" stroke-width="2"/>')
        o.append(f'<text x="{w - r + 35}" y="{t + 14 + 18 * i}">{name}</text>')
    o.append("</svg>")
    Path(path).write_text("\n".join(o) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--irs", default=str(REPO / "target/release/irs"))
    ap.add_argument("--baseline-irs", help="another irs build to run `long` with, for comparison")
    ap.add_argument("--seconds", type=float, default=90)
    ap.add_argument("--blocks", type=int, default=256, help="blocks the program compresses (execution length)")
    ap.add_argument("--limit", default="128M", help="the memory limit of the `limit` run")
    ap.add_argument("--out", default=str(REPO / "benchmarks/results/verifier_memory"))
    a = ap.parse_args()
    out = Path(a.out)
    # The runs work in a scratch directory: the builds by absolute path.
    a.irs = str(Path(a.irs).resolve())
    if a.baseline_irs:
        a.baseline_irs = str(Path(a.baseline_irs).resolve())
    out.mkdir(parents=True, exist_ok=True)
    runs = [("long", a.irs, ["--no-race-free-words"]), ("default", a.irs, [])]
    if a.baseline_irs:
        runs.insert(0, ("long, baseline build", a.baseline_irs, ["--no-race-free-words"]))
    runs.append((f"long, --memory-limit {a.limit}", a.irs, ["--no-race-free-words", "--memory-limit", a.limit]))
    series, rows = [], []
    with tempfile.TemporaryDirectory(prefix="irs-verifier-memory-") as d:
        exe = Path(d) / "compressor"
        subprocess.run([a.irs, "cc", "-O1", f"-DNBLOCKS={a.blocks}", "-o", str(exe), str(HERE / "compressor.c")], check=True)
        for name, irs, flags in runs:
            print(f"{name}: {a.seconds:.0f} s ...", file=sys.stderr)
            samples, cmd, text = run_one(irs, exe, flags, a.seconds, d, name.split(",")[0])
            slug = name.replace(", ", "_").replace(" ", "_").replace("-", "")
            with open(out / f"{slug}.csv", "w", newline="") as f:
                wr = csv.writer(f)
                wr.writerow(["seconds", "executions", "rss_mb", "peak_rss_mb"])
                wr.writerows(samples)
            verdict = next((l for l in text.splitlines() if l.startswith("verdict:")), "?")
            events = next((l for l in text.splitlines() if l.startswith("executions:")), "")
            last = samples[-1] if samples else (0, 0, 0, 0)
            # RSS after the first 10% of the executions, against the peak: how much it grew.
            early = next((p[3] for p in samples if p[1] >= last[1] / 10), 0) if samples else 0
            rows.append((name, last[0], last[1], early, last[3], events.split("events:")[-1].strip(), verdict))
            series.append((name, samples))
    svg(series, out / "peak_rss.svg", f"irs verify on compressor.c ({a.blocks} blocks): peak RSS against executions")
    with open(out / "results.md", "w") as f:
        f.write(f"# The verifier's memory over a long exploration\n\n{datetime.date.today()}, `python3 benchmarks/verifier_memory/run.py "
                + " ".join(sys.argv[1:]) + "` (2-core machine shared with other work; see docs/src/verifier-memory.md).\n\n")
        f.write("| run | seconds | executions | peak RSS at 10% of them (MB) | peak RSS (MB) | events (peak in memory) | verdict |\n|---|---|---|---|---|---|---|\n")
        for r in rows:
            f.write("| " + " | ".join(str(x) for x in r) + " |\n")
        f.write("\n![peak RSS against executions](peak_rss.svg)\n")
    print((out / "results.md").read_text())


if __name__ == "__main__":
    main()
