#!/usr/bin/env python
"""CPU seconds of width lookaheads at the states a recorded policy visited: replays the plan of one
coverage record (a ``results/*.jsonl`` line of an R-GNN row) and runs one lookahead at every
``--every``-th state of it, through ``planarena.methods.rgnn_policies.lookahead.lookahead`` only, so
that the same script runs at two commits (``git worktree add /tmp/old <rev>``, then
``PYTHONPATH=/tmp/old/src python benchmarks/replay_lookaheads.py ...``) and compares them on the
same states. Prints one JSON line: lookaheads, successors generated, CPU seconds, and a digest of
the trees (jumps' action paths, parents, edges and counters; not pymimir's state indices, which
depend on the order states were first made) that two versions must share.

Example::

    python benchmarks/replay_lookaheads.py --records reports/claims/rgnn-spanner-ad-vs-external-v2/partial/results/aiw_ad.jsonl \\
        --problem p18 --seed 13 --split test-medium --suite-folder testing/medium --every 10
"""

from __future__ import annotations

import argparse
import hashlib
import json
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_SUITE = ROOT.parent / "shared" / "benchmarks" / "ipc2023-learning"


def main() -> None:
    from planarena.core.pddl import load_problem
    from planarena.methods.rgnn_policies.lookahead import AtomFeatures, lookahead, object_types

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--records", type=Path, required=True, help="a coverage results file (JSON lines)")
    ap.add_argument("--problem", required=True)
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--split", required=True)
    ap.add_argument("--suite", type=Path, default=DEFAULT_SUITE, help="the IPC 2023 Learning Track folder")
    ap.add_argument("--suite-folder", required=True, help="the problem's folder under the domain, e.g. testing/medium")
    ap.add_argument("--kind", default="aiw", choices=["iw", "aiw", "caiw", "baiw"])
    ap.add_argument("--every", type=int, default=10)
    args = ap.parse_args()
    records = [json.loads(line) for line in args.records.read_text().splitlines() if line.strip()]
    rec = next((r for r in records if (r["problem"], r["seed"], r["split"]) == (args.problem, args.seed, args.split)), None)
    if rec is None or not rec.get("plan"):
        raise SystemExit(f"{args.records}: no record with a plan for {args.problem} seed {args.seed} {args.split}")
    domain_file = args.suite / rec["domain"] / "domain.pddl"
    problem_file = args.suite / rec["domain"] / args.suite_folder / f"{args.problem}.pddl"
    problem = load_problem(str(domain_file), str(problem_file))
    novelty = {"iw": "iw", "aiw": "aiw", "caiw": "aiw", "baiw": "baiw"}[args.kind]
    features = AtomFeatures(problem, novelty, object_types(problem_file, domain_file))
    digest, state, cpu, generated, count = hashlib.sha256(), problem.get_initial_state(), 0.0, 0, 0
    for step, text in enumerate(rec["plan"]):
        if step % args.every == 0:
            start = time.process_time()
            tree = lookahead(problem, state, args.kind, features)
            cpu += time.process_time() - start
            generated += tree.generated
            count += 1
            digest.update(repr(([(tuple(str(a) for a in j.actions), j.parent) for j in tree.jumps], tree.edges,
                                tree.expanded, tree.generated, tree.novelty_features)).encode())
        state = next(a for a in state.generate_applicable_actions() if str(a) == text).apply(state)
    print(json.dumps({"problem": args.problem, "seed": args.seed, "plan_length": len(rec["plan"]),
                      "lookaheads": count, "generated": generated, "cpu_s": round(cpu, 3),
                      "trees_sha256": digest.hexdigest()[:16]}))


if __name__ == "__main__":
    main()
