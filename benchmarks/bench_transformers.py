#!/usr/bin/env python
"""Decoding speed of the symmetry-aware transformers: tokens per second and decisions per second of
every plan generator and strategy (Algorithms 1-3) and of the encoder's heuristic guidance
(Algorithm 4), lockstep (every problem of a split in one batched forward pass per token) against one
problem at a time.

Reads the trained models of a planarena workspace (``dvc repro`` done, e.g. the default profile);
models are loaded and problems parsed before timing. Per (method, domain, split, mode) it prints:
problems, solved, tokens generated (encoder: actions chosen), forward calls (batched model calls),
wall seconds, tokens/s and decisions/s (a decision is one argmax over the vocabulary, i.e. one
generated token; for the encoder one action choice over all successors) and whether lockstep and
single give the same plans. ``--json FILE`` writes the rows.

Example::

    python benchmarks/bench_transformers.py --workspace /tmp/pa-bench3/planarena \\
        --methods satr_encdec_cl_applicable plangpt_nocl_applicable satr_encoder_cl --split extrapolation
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workspace", type=Path, required=True, help="planarena checkout with data/ after dvc repro")
    ap.add_argument("--methods", nargs="+", required=True)
    ap.add_argument("--domains", nargs="*", default=None)
    ap.add_argument("--split", default="extrapolation")
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--modes", nargs="+", default=["lockstep", "single"], choices=["lockstep", "single"])
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()

    import torch

    from planarena.config import Layout, load_params
    from planarena.core.pddl import load_problem
    from planarena.runner.stages import build_method

    torch.set_num_threads(1)
    params = load_params(args.workspace / "params.yaml")
    layout = Layout(root=args.workspace / "data")
    rows = []
    for name in args.methods:
        method = build_method(name, params, layout)
        method.load(layout.models / name)
        for domain in args.domains or method.ps.domains:
            got = method._model(domain, args.seed)
            if not isinstance(got, tuple):
                print(f"{name} {domain}: no model ({got.failure_reason})", file=sys.stderr)
                continue
            model, tokens, _ = got
            entries = method.ps.select(domain=domain, split=args.split)
            problems = [load_problem(str(method.ps.domain_file(domain)), str(method.ps.problem_file(e))) for e in entries]
            problems = [p for p in problems if method._unfit(p, tokens) is None]
            if not problems:
                continue
            plans = {}
            for mode in args.modes:
                stats: dict = {}
                start = time.perf_counter()
                if mode == "lockstep":
                    res = method._plan(model, tokens, problems, args.seed, [float("inf")] * len(problems),
                                       method.decoding, stats)
                else:
                    res = [method._plan(model, tokens, [p], args.seed, [float("inf")], method.decoding, stats)[0]
                           for p in problems]
                wall = time.perf_counter() - start
                plans[mode] = [r.plan for r in res]
                if method.arch == "encoder":
                    decisions, calls = stats.get("problem_steps", 0), stats.get("lockstep_steps", 0)
                else:
                    decisions, calls = stats.get("tokens", 0), stats.get("forward_calls", 0)
                row = {"method": name, "domain": domain, "split": args.split, "mode": mode,
                       "problems": len(problems), "solved": sum(r.outcome == "solved" for r in res),
                       "decisions": decisions, "forward_calls": calls, "wall_s": round(wall, 3),
                       "decisions_per_s": round(decisions / wall, 1) if wall else None}
                if method.arch != "encoder":
                    row["tokens_per_s"] = row["decisions_per_s"]
                rows.append(row)
                print(json.dumps(row))
            if len(plans) == 2:
                same = plans["lockstep"] == plans["single"]
                rows[-1]["same_plans_as_lockstep"] = same
                print(f"{name} {domain}: lockstep and single plans identical: {same}")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
