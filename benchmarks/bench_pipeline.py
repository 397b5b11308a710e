"""Throughput of trajectory replay (states/s) and independent validation (plans/s).

Reads an existing pipeline output (run `dvc repro plan` first). Usage:
    python benchmarks/bench_pipeline.py [--data data] [--repeat 1]
Prints one line per measurement.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from planarena.config import Layout
from planarena.core.io import read_jsonl
from planarena.core.pddl import load_problem, replay
from planarena.core.problemset import ProblemSet


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--data", type=Path, default=Path("data"))
    args = ap.parse_args()
    layout = Layout(root=args.data)
    ps = ProblemSet(layout.problems)
    entries = {e.key: e for e in ps.entries}
    recs = [r for r in read_jsonl(layout.plans / "records.jsonl") if r.get("validated")]
    if not recs:
        raise SystemExit(f"{layout.plans / 'records.jsonl'}: no validated plans; run `dvc repro plan` first")

    # parse once (cached in planarena.core.pddl), then time the replay itself
    jobs = []
    for r in recs:
        e = entries[(r["domain"], r["split"], r["problem"])]
        jobs.append((load_problem(str(ps.domain_file(e.domain)), str(ps.problem_file(e))), r["plan"]))
    start = time.perf_counter()
    n_states = 0
    for problem, plan in jobs:
        states, _ = replay(problem, plan)
        n_states += len(states)
    dt = time.perf_counter() - start
    print(f"trajectory replay (pymimir): {n_states} states in {dt:.2f} s = {n_states / dt:,.0f} states/s")

    # validation: first call per problem includes unified-planning's parse; report both
    from planarena.core import validation

    validation._parsed.cache_clear()
    start = time.perf_counter()
    for r in recs:
        e = entries[(r["domain"], r["split"], r["problem"])]
        assert validation.validate_plan(ps.domain_file(e.domain), ps.problem_file(e), r["plan"]).valid
    cold = time.perf_counter() - start
    start = time.perf_counter()
    for r in recs:
        e = entries[(r["domain"], r["split"], r["problem"])]
        validation.validate_plan(ps.domain_file(e.domain), ps.problem_file(e), r["plan"])
    warm = time.perf_counter() - start
    print(f"validation (unified-planning), parse + validate: {len(recs)} plans in {cold:.2f} s = {len(recs) / cold:,.1f} plans/s")
    print(f"validation (unified-planning), problem already parsed: {len(recs)} plans in {warm:.2f} s = {len(recs) / warm:,.1f} plans/s")


if __name__ == "__main__":
    main()
