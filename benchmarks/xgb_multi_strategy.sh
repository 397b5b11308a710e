#!/usr/bin/env bash
# XGBoost multi-output strategy, speed and coverage (state-centric issue): WL-XGB delta trained with
# one tree per output (xgboost's default, planarena's default) and with multi_output_tree, on the
# default profile's problems, trajectories and WL embeddings (run `dvc repro embed_wl` first), decoded
# with the paper's settings. Runs in a scratch workspace; prints train time, tree nodes and coverage.
# Usage: bash benchmarks/xgb_multi_strategy.sh [workdir]
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
work=${1:-/tmp/planarena-xgb-multi-strategy}
mkdir -p "$work/data" && cd "$work"
for d in problems plans trajectories embeddings; do rm -rf "data/$d"; cp -r "$repo/data/$d" "data/$d"; done
python - "$repo/params.yaml" <<'PY'
import sys, yaml
d = yaml.safe_load(open(sys.argv[1]))
base = d["methods"]["wl_xgb_delta"]
d["methods"] = {"wl_xgb_delta": base,
                "wl_xgb_delta_multi_output_tree": {**base, "model_params": {"multi_strategy": "multi_output_tree"}}}
yaml.safe_dump(d, open("params.yaml", "w"), sort_keys=False)
PY
for m in wl_xgb_delta wl_xgb_delta_multi_output_tree; do
  planarena stage train "$m"
  planarena stage evaluate "$m"
done
python - <<'PY'
import json
from collections import defaultdict
for m in ("wl_xgb_delta", "wl_xgb_delta_multi_output_tree"):
    t = json.load(open(f"data/models/{m}/train.json"))
    cov = defaultdict(lambda: [0, 0])
    for line in open(f"data/results/{m}.jsonl"):
        r = json.loads(line)
        if (r.get("extra") or {}).get("task", "plan") != "plan":
            continue
        c = cov[(r["domain"], r["split"])]
        c[0] += bool(r["outcome"] == "solved" and r["validated"]); c[1] += 1
    total = [sum(v[0] for v in cov.values()), sum(v[1] for v in cov.values())]
    print(m, "train_time_s", t.get("train_time_s"), "tree_nodes", t.get("tree_nodes"),
          "solved", f"{total[0]}/{total[1]}", dict(sorted((f"{d}/{s}", f"{a}/{b}") for (d, s), (a, b) in cov.items())))
PY
