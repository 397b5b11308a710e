#!/usr/bin/env python
"""Compare the results of two pipeline runs (two workspaces), to check a refactor changed no number.

    python scripts/compare_runs.py /path/to/run_a /path/to/run_b

Compares ``reports/metrics.json`` byte for byte, and every result record of ``data/results/*.jsonl``
field by field with the fields that measure time left out (``wall_time``, every ``*_s`` key,
``peak_memory_mb``: they differ between any two runs). Exits 0 when both match, 1 otherwise,
printing the first differences.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

TIME_FIELDS = ("wall_time", "peak_memory_mb")


def _strip(obj):
    if isinstance(obj, dict):
        return {k: _strip(v) for k, v in obj.items() if k not in TIME_FIELDS and not k.endswith("_s")}
    if isinstance(obj, list):
        return [_strip(v) for v in obj]
    return obj


def _records(root: Path) -> dict[str, list[dict]]:
    out = {}
    for f in sorted((root / "data" / "results").glob("*.jsonl")):
        rows = [_strip(json.loads(line)) for line in f.read_text().splitlines() if line.strip()]
        out[f.name] = sorted(rows, key=lambda r: json.dumps(r, sort_keys=True))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("a", type=Path)
    ap.add_argument("b", type=Path)
    args = ap.parse_args()
    problems = []
    ma, mb = (p / "reports" / "metrics.json" for p in (args.a, args.b))
    if ma.read_bytes() != mb.read_bytes():
        problems.append(f"reports/metrics.json differs ({ma} vs {mb})")
    ra, rb = _records(args.a), _records(args.b)
    for name in sorted(set(ra) | set(rb)):
        if name not in ra or name not in rb:
            problems.append(f"data/results/{name}: only in {'b' if name not in ra else 'a'}")
            continue
        if len(ra[name]) != len(rb[name]):
            problems.append(f"data/results/{name}: {len(ra[name])} vs {len(rb[name])} records")
            continue
        diff = [(x, y) for x, y in zip(ra[name], rb[name]) if x != y]
        if diff:
            x, y = diff[0]
            keys = sorted(k for k in set(x) | set(y) if x.get(k) != y.get(k))
            problems.append(f"data/results/{name}: {len(diff)} records differ; first in {keys}: "
                            f"{ {k: x.get(k) for k in keys} } vs { {k: y.get(k) for k in keys} }")
    for p in problems:
        print(p)
    n = sum(len(v) for v in ra.values())
    print("identical" if not problems else f"{len(problems)} differences",
          f"(metrics.json and {n} records of {len(ra)} methods, times left out)")
    return 0 if not problems else 1


if __name__ == "__main__":
    sys.exit(main())
