#!/usr/bin/env python3
"""A program whose objects and threads come and go, run for a long time under each of the
runtime's modes outside EXPLORE, its resident memory sampled as it goes: it must stay flat
(docs/runtime-memory.md).

    python3 benchmarks/runtime_memory/churn_rss.py --minutes 60 --out benchmarks/results/runtime_memory/churn_rss.md

Builds tests/programs/memory/object_churn.c with target/release/irs (after `cargo build
--release --workspace`) into a scratch dir, starts it in every mode at once (niced) with more
rounds than it can finish, samples VmRSS every 10 s, and writes a table: RSS at each sample and
the CPU time each has used."""
import argparse, os, shutil, subprocess, sys, tempfile, time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
MODES = {
    "direct (OFF)": {},
    "serialised (IRS_MODE=enforce IRS_SERIAL=1)": {"IRS_MODE": "enforce", "IRS_SERIAL": "1"},
    "shaken (IRS_CHAOS=1)": {"IRS_CHAOS": "1"},
}

def rss_kb(pid):
    try:
        for line in open(f"/proc/{pid}/status"):
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        return None

def cpu_seconds(pid):
    # CPU time the process has used so far (user + system): that it kept working.
    try:
        f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
        return round((int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK"), 1)
    except (OSError, ValueError, IndexError):
        return None

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--minutes", type=float, default=60)
    ap.add_argument("--every", type=float, default=10, help="seconds between samples")
    ap.add_argument("--irs", default=str(REPO / "target/release/irs"))
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    d = Path(tempfile.mkdtemp(prefix="irs-churn-"))
    exe = d / "churn"
    subprocess.run([a.irs, "cc", "-O1", "-pthread", "-o", str(exe), str(REPO / "tests/programs/memory/object_churn.c")], check=True)
    procs = {m: subprocess.Popen(["nice", "-n", "10", str(exe), "2000000000"], env={**os.environ, **env}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for m, env in MODES.items()}
    rows, start = [], time.time()
    try:
        while time.time() - start < a.minutes * 60:
            time.sleep(a.every)
            rows.append((time.time() - start, {m: (rss_kb(p.pid), cpu_seconds(p.pid)) for m, p in procs.items()}))
            print(f"{rows[-1][0]:7.0f} s " + "  ".join(f"{v[0]} KB" for v in rows[-1][1].values()), file=sys.stderr, flush=True)
    finally:
        alive = {m: p.poll() is None for m, p in procs.items()}
        for p in procs.values():
            p.kill()
            p.wait()
        shutil.rmtree(d, ignore_errors=True)
    out = Path(a.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "w") as f:
        f.write("# Resident memory of a program whose objects and threads come and go\n\n")
        f.write(f"Command: `python3 benchmarks/runtime_memory/churn_rss.py --minutes {a.minutes:g} --out {a.out}`\n\n")
        f.write("`tests/programs/memory/object_churn.c` with more rounds than it can finish (each round: a mutex, "
                "a condition variable, a semaphore, an rwlock and a barrier in a fresh heap block, two threads waiting "
                "on them, joined, everything destroyed and freed), the three modes at once, niced, on a 2-core machine "
                "shared with other jobs. CPU s: the time the process has used so far (user + system).\n\n")
        f.write("Still running at the end (none may have died): " + ", ".join(f"{m}: {'yes' if v else 'NO'}" for m, v in alive.items()) + "\n\n")
        f.write("| time (s) | " + " | ".join(f"{m} RSS (KB) | CPU s" for m in MODES) + " |\n")
        f.write("|---:|" + "---:|---:|" * len(MODES) + "\n")
        pick = rows if len(rows) <= 40 else [rows[i * (len(rows) - 1) // 39] for i in range(40)]
        for t, v in pick:
            f.write(f"| {t:.0f} | " + " | ".join(f"{v[m][0]} | {v[m][1]}" for m in MODES) + " |\n")
        for m in MODES:
            xs = [v[m][0] for _, v in rows if v[m][0]]
            if xs:
                f.write(f"\n{m}: RSS min {min(xs)} KB, max {max(xs)} KB, first {xs[0]} KB, last {xs[-1]} KB")
        f.write("\n")

if __name__ == "__main__":
    main()
