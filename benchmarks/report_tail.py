"""The end every benchmark report of `benchmarks/*/run.py` shares: a list of problems (at most
`limit`, then a count), an Analysis heading for the hand-written part, the file written and
printed."""
from pathlib import Path


def finish_report(md, problems, out, limit, heading):
    md.append(heading)
    md += [f"- {p}" for p in problems[:limit]] or ["- none"]
    if len(problems) > limit:
        md.append(f"- ... and {len(problems) - limit} more")
    md.append("\n## Analysis\n\n(written by hand after the run)\n")
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(md) + "\n")
    print("\n".join(md))
    print(f"wrote {out}")
