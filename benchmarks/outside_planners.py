#!/usr/bin/env python
"""Other people's planners on planarena's generated suite, through the IPC 2023 contract unchanged.

Runs the params rows ``bfgp`` (BFGP++) and ``pyperplan_gbfs_hff`` (pyperplan, GBFS + hFF), a variant
``bfgp_tasks3`` (BFGP++ synthesising from the 3 smallest training tasks instead of 5; not a params
row), and the harness's own ``fd_lama`` and ``random_walk`` beside them, on the default profile's
generated suite, through the pipeline's own stage functions (generate, reference plans, train,
evaluate, report) in a scratch folder; then tabulates coverage per row, domain and split, each
row's kind, BFGP++'s synthesis outcome per domain, and the rows the rendered leaderboard shows.

Usage: python benchmarks/outside_planners.py [--work DIR] [--out FILE] [--reuse]   (after `make setup outside`)
``--reuse``: keep a row's training when ``--work`` already holds it (its train.json).
Default out: benchmarks/results/outside-planners-<date>.md
"""

from __future__ import annotations

import argparse
import collections
import datetime
import json
import os
import platform
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
ROWS = ("bfgp", "bfgp_tasks3", "pyperplan_gbfs_hff", "fd_lama", "random_walk")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--work", type=Path, default=Path("/tmp/planarena-outside"))
    ap.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results"
                    / f"outside-planners-{datetime.date.today().isoformat()}.md")
    ap.add_argument("--reuse", action="store_true")
    args = ap.parse_args()
    os.chdir(REPO)   # the rows' commands name files relative to the repository
    sys.path.insert(0, str(REPO / "src"))
    from planarena.config import Layout, load_params
    from planarena.core.io import read_jsonl
    from planarena.datasets.reference_plans import run_plan_stage
    from planarena.datasets.suites import run_stage as generate
    from planarena.runner.stages import run_evaluate_stage, run_train_stage

    params = load_params(REPO / "params.yaml")
    rows = dict(params["methods"])
    rows["bfgp_tasks3"] = {**rows["bfgp"], "learn": rows["bfgp"]["learn"].replace("--tasks 5", "--tasks 3")}
    params["methods"] = {name: {**rows[name], "run": True} for name in ROWS}
    layout = Layout(root=args.work / "data")
    start = time.perf_counter()
    generate(params, layout)
    run_plan_stage(params, layout)
    wall = {}
    for row in ROWS:
        t0 = time.perf_counter()
        if not (args.reuse and (layout.models / row / "train.json").exists()):
            run_train_stage(params, layout, row)
        run_evaluate_stage(params, layout, row)
        wall[row] = time.perf_counter() - t0
        print(f"{row}: {wall[row]:.0f} s", flush=True)
    table = collections.defaultdict(lambda: [0, 0])
    reasons = collections.defaultdict(collections.Counter)
    for row in ROWS:
        for r in read_jsonl(layout.results / f"{row}.jsonl"):
            cell = table[(row, r["domain"], r["split"])]
            cell[0] += int(r["outcome"] == "solved" and bool(r.get("validated")))
            cell[1] += 1
            if r["outcome"] != "solved":
                reasons[row][(r["outcome"], (r.get("failure_reason") or "")[:70])] += 1
    domains = sorted({d for _, d, _ in table})
    splits = sorted({s for _, _, s in table})
    lines = [f"# Outside planners on the generated suite ({datetime.date.today().isoformat()})", "",
             f"`python benchmarks/outside_planners.py`: default profile, generated suite, "
             f"evaluation.time_limit {params['evaluation']['time_limit']} s CPU per attempt; "
             f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores; "
             f"{time.perf_counter() - start:.0f} s in all.", "",
             "Solved (validated by the harness) / attempts, per domain and split:", "",
             "| row | kind | " + " | ".join(f"{d} {s}" for d in domains for s in splits) + " | wall s |",
             "|---|---|" + "---|" * (len(domains) * len(splits)) + "---|"]
    from planarena.methods import method_class

    def kind(row: str) -> str:   # the row's own report trait, as `planarena rows` shows it
        config = {k: v for k, v in params["methods"][row].items() if k != "run"}
        return method_class(config.get("method", row)).report_traits(config, params).kind

    kinds = {row: kind(row) for row in ROWS}
    for row in ROWS:
        cells = [f"{table[(row, d, s)][0]}/{table[(row, d, s)][1]}" if table[(row, d, s)][1] else "-"
                 for d in domains for s in splits]
        lines.append(f"| {row} | {kinds[row]} | " + " | ".join(cells) + f" | {wall[row]:.0f} |")
    for row, tasks in (("bfgp", 5), ("bfgp_tasks3", 3)):
        facts = json.loads((layout.models / row / "train.json").read_text())
        lines += ["", f"BFGP++ synthesis per domain, row `{row}` (`learn`, the {tasks} smallest training tasks, "
                  f"{params['methods'][row]['learn_time_limit']} CPU s):", ""]
        for domain, fact in sorted(facts.get("domains", {}).items()):
            prog = layout.models / row / domain / "dk"
            program = prog.read_text().strip().splitlines() if prog.is_file() and prog.read_text().strip() else []
            lines.append(f"- {domain}: learn {fact.get('learn')}; "
                         + (f"program of {len(program) - 1} lines: `" + "; ".join(program[:8]) + "`" if program
                            else "no program"))
    lines += ["", "Most frequent non-solved outcomes:", ""]
    for row in ROWS:
        for (outcome, reason), n in reasons[row].most_common(3):
            lines.append(f"- {row}: {n} x {outcome}" + (f" ({reason})" if reason else ""))
    from planarena.report.leaderboard import run_stage as report

    report(params, layout, args.work / "reports")
    front = (args.work / "reports" / "leaderboard.md").read_text()
    shown = [row for row in ROWS if f"{row}" in front]
    lines += ["", f"The rendered leaderboard (`{args.work / 'reports' / 'leaderboard.md'}`) shows: "
              + ", ".join(f"`{r}`" for r in shown) + "."]
    args.out.write_text("\n".join(lines) + "\n")
    print(args.out.read_text())


if __name__ == "__main__":
    main()
