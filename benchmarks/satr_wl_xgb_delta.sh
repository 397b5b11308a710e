#!/usr/bin/env bash
# Reproduce the WL-XGB delta check of the state-centric family (docs/papers/state-centric.md) on the
# real Symmetry-Aware Transformer splits (Blocksworld and VisitAll, all instances), outside the main
# workspace.
# Usage: bash benchmarks/satr_wl_xgb_delta.sh /abs/path/to/shared/benchmarks/satr [workdir]
# Settings: Table 6 XGBoost (max depth 8, eta 0.1, <=1000 rounds, early stopping 10), paper decoding
# (beam 3, horizon 100); reference plans for train/validation only (A*+LM-cut 10 s, LAMA fallback).
set -euo pipefail
satr=${1:?path to the satr suite}
work=${2:-/tmp/planarena-satr-wl-xgb-delta}
repo=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$work" && cd "$work"
python - "$repo/params.yaml" "$satr" <<'PY'
import sys, yaml
d = yaml.safe_load(open(sys.argv[1]))
d["suite"] = "satr"
d["suites"]["satr"].update(path=sys.argv[2], domains=["blocksworld", "visitall"], max_per_split=None)
d["planners"].update(splits=["train", "validation"])
d["methods"] = {"wl_xgb_delta": d["methods"]["wl_xgb_delta"]}
d["evaluation"]["seeds"] = [13]
yaml.safe_dump(d, open("params.yaml", "w"), sort_keys=False)
PY
for s in generate plan trajectories embed_wl; do planarena stage "$s"; done
time planarena stage train wl_xgb_delta
time planarena stage evaluate wl_xgb_delta
planarena report
echo "see $work/reports/leaderboard.md"
