"""What does the front page lose with fewer seeds? Re-analyse the committed default run's records
(``reports/records.tar.gz``) keeping only some seeds, and compare what the page says.

The default profile trains and evaluates each seeded row with ``seeds: [13, 14, 15]``; about five
sixths of a fresh ``dvc repro``'s wall time is per-seed work (docs/cost.md). Before the default is
cut, this script shows what a smaller seed set would have printed from the same run: per plan row
the pooled held-out coverage with its interval and its verdict against its untrained twin (the
front page's "above floor" column), and the "At a glance" box. No training: the subsets are of the
records already committed, so a row's numbers at seed 13 are exactly what a one-seed run of the
same code and params would have recorded (each seed's units run independently of the others).

Usage (from the repository root; about a minute)::

    python benchmarks/seed_subsample.py                       # subsets 13 and 13,14 against all
    python benchmarks/seed_subsample.py --subsets 13 --out benchmarks/results/seed-subsample.md
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import tempfile
from pathlib import Path

from planarena.config import load_params
from planarena.methods import running
from planarena.report import bundle
from planarena.report.leaderboard import analyse
from planarena.report.records import declared_domains, declared_splits, load_inputs
from planarena.report.sections import glance, headline
from planarena.report.traits import method_traits


def page_facts(inputs, traits, seeds: set[int] | None) -> tuple[dict[str, tuple], list[str]]:
    """``({row: (held-out interval text, twin verdict text)}, glance lines)`` from the records of
    ``seeds`` only (every seed when None; rows that run one seed keep it)."""
    records = inputs.records
    if seeds is not None:
        seeds_of: dict[str, set] = {}
        for r in records:
            seeds_of.setdefault(r.method, set()).add(r.seed)
        records = [r for r in records if r.seed in seeds or len(seeds_of[r.method]) == 1]
    analysis = analyse(dataclasses.replace(inputs, records=records))
    rows = {}
    for table in analysis.headline:
        for m in table.methods:
            iv = table.cells.get((m, headline.HELD_OUT))
            if iv is None or not iv.n:
                continue
            rows[m] = (f"{iv.value:.2f} [{iv.low:.2f}, {iv.high:.2f}]", headline.format_twin(table, traits, m))
    return rows, glance.lines(analysis.headline, traits)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--params", default="params.yaml")
    ap.add_argument("--archive", default=str(Path("reports") / bundle.BUNDLE))
    ap.add_argument("--subsets", nargs="+", default=["13", "13,14"], help="comma-separated seed sets")
    ap.add_argument("--out", help="write the markdown here (default: stdout)")
    args = ap.parse_args(argv)
    params = running(dict(load_params(args.params)))
    traits = method_traits(params)
    with tempfile.TemporaryDirectory() as tmp:
        layout = bundle.restore(args.archive, tmp)
        inputs = load_inputs(layout, declared_domains(params), declared_splits(params), traits)
        inputs.records = [r for r in inputs.records if r.method in params["methods"]]
        inputs.seed = int(params.get("seed", 0) or 0)
        subsets = {"all": None, **{s: {int(x) for x in s.split(",")} for s in args.subsets}}
        facts = {name: page_facts(inputs, traits, seeds) for name, seeds in subsets.items()}
    names = list(subsets)
    lines = [f"# Seed subsets of the committed default run ({args.archive})", "",
             "Per plan row: pooled held-out coverage [95 % interval] and the verdict against its untrained "
             "twin, from the records of the named seeds only (rows that run one seed keep it).", "",
             "| row | " + " | ".join(f"seeds {n}" for n in names) + " | twin verdict the same |",
             "|---|" + "---|" * (len(names) + 1)]
    all_rows = facts["all"][0]
    changed = 0
    for m in sorted(all_rows):
        cells = [facts[n][0].get(m, ("-", "-")) for n in names]
        same = len({c[1].split(" (")[0] for c in cells}) == 1
        changed += not same
        lines.append(f"| `{m}` | " + " | ".join(f"{c[0]}; {c[1]}" for c in cells) + f" | {'yes' if same else '**no**'} |")
    lines += ["", f"Rows whose twin verdict differs between the subsets: {changed} of {len(all_rows)}.", ""]
    for n in names:
        lines += [f"## At a glance, seeds {n}", "", *facts[n][1], ""]
    text = "\n".join(lines) + "\n"
    if args.out:
        Path(args.out).write_text(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
