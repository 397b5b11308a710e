"""Compare variants of one method's ``model_params`` on a prepared workspace: coverage per domain and
split, training time and model size, each variant trained and evaluated in a scratch workspace.

Used for two design measurements of the state-centric family (docs/papers/state-centric.md):

* XGBoost's multi-output strategy (one tree per output vs ``multi_output_tree``)::

    python benchmarks/method_variants.py --source . --workdir /tmp/pa-xgb-strategy wl_xgb_delta \\
        'multi_output_tree={"multi_strategy": "multi_output_tree"}'

* WL histogram normalisation (counts, the default, vs L1-normalised, the paper's Stage 4)::

    python benchmarks/method_variants.py --source /tmp/satr-paper --workdir /tmp/pa-wl-norm wl_xgb_delta \\
        'l1={"normalise": "l1"}' --reuse-base

* The same choice decided on a validation split only (design choices are made on validation,
  never on test splits)::

    python benchmarks/method_variants.py --source /tmp/satr-paper --workdir /tmp/pa-wl-norm-val \
        --splits validation wl_xgb_delta 'l1={"normalise": "l1"}'

``--splits`` restricts every variant (and the base) to those coverage splits and turns their
successor-set and pool protocols off. ``--source`` is a workspace whose data stages have run (its ``params.yaml`` and ``data/problems``,
``plans``, ``trajectories``, ``embeddings`` are copied; e.g. the default workspace after
``dvc repro embed_wl``, or ``benchmarks/satr_paper.sh``'s). The base method runs too unless
``--reuse-base`` takes its records and model facts from the source workspace.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import time
from collections import defaultdict
from pathlib import Path

import yaml


def coverage(results: Path) -> dict[tuple[str, str], tuple[int, int]]:
    """(domain, split) -> (validated solved, attempts) over the plan records of ``results``."""
    cov: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])
    for line in results.read_text().splitlines():
        r = json.loads(line)
        if (r.get("extra") or {}).get("task", "plan") != "plan":
            continue
        c = cov[(r["domain"], r["split"])]
        c[0] += bool(r["outcome"] == "solved" and r["validated"])
        c[1] += 1
    return {k: (a, b) for k, (a, b) in sorted(cov.items())}


def model_size(facts: Path, train_log: Path) -> tuple[int, float]:
    """(tree nodes or parameters summed over domains and seeds, training seconds summed over the
    training units of ``data/logs/train/<method>.json``)."""
    f = json.loads(facts.read_text())
    size = 0
    for dom in f.get("domains", {}).values():
        for k, v in dom.items():
            if k.startswith("seed") and isinstance(v, dict):
                size += int(v.get("tree_nodes") or v.get("parameters") or 0)
    log = json.loads(train_log.read_text()) if train_log.exists() else {}
    secs = sum(float(t) for t in (log.get("unit_times_s") or {}).values())
    return size, secs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--source", type=Path, required=True)
    ap.add_argument("--workdir", type=Path, required=True)
    ap.add_argument("--reuse-base", action="store_true")
    ap.add_argument("--splits", type=lambda v: v.split(","),
                    help="comma-separated coverage splits only (e.g. validation); no Hit@k protocols")
    ap.add_argument("base")
    ap.add_argument("variants", nargs="+", help="NAME=JSON model_params overrides")
    args = ap.parse_args()
    src, work = args.source.resolve(), args.workdir.resolve()
    (work / "data").mkdir(parents=True, exist_ok=True)
    for d in ("problems", "plans", "trajectories", "embeddings"):
        shutil.rmtree(work / "data" / d, ignore_errors=True)
        shutil.copytree(src / "data" / d, work / "data" / d)
    params = yaml.safe_load((src / "params.yaml").read_text())
    base = params["methods"][args.base]
    methods = {} if args.reuse_base else {args.base: base}
    for spec in args.variants:
        name, _, js = spec.partition("=")
        overrides = json.loads(js)
        methods[f"{args.base}_{name}"] = {**base, "model_params": {**(base.get("model_params") or {}), **overrides}}
    if args.splits:
        methods = {m: {**b, "splits": list(args.splits), "rank_splits": list(args.splits), "pool_protocols": []}
                   for m, b in methods.items()}
    params["methods"] = methods
    (work / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    wall = {}
    for m in methods:
        for stage in ("train", "evaluate"):
            t0 = time.perf_counter()
            subprocess.run(["planarena", "stage", stage, m], cwd=work, check=True)
            wall[(m, stage)] = time.perf_counter() - t0
    rows = [(args.base, src if args.reuse_base else work)] + [(m, work) for m in methods if m != args.base]
    print("| variant | train time (s, sum over models) | tree nodes / parameters | evaluate wall (s) | "
          "coverage (solved/attempts) | per domain/split |")
    print("|---|---|---|---|---|---|")
    for m, root in rows:
        cov = coverage(root / "data" / "results" / f"{m}.jsonl")
        size, secs = model_size(root / "data" / "models" / m / "facts.json", root / "data" / "logs" / "train" / f"{m}.json")
        solved, total = sum(a for a, _ in cov.values()), sum(b for _, b in cov.values())
        per = ", ".join(f"{d}/{s} {a}/{b}" for (d, s), (a, b) in cov.items())
        ev = wall.get((m, "evaluate"))
        print(f"| {m} | {secs:.1f} | {size:,} | {'-' if ev is None else f'{ev:.0f}'} | {solved}/{total} | {per} |")


if __name__ == "__main__":
    main()
