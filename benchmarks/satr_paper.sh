#!/usr/bin/env bash
# Paper-profile reproduction of Table 1 of the state-centric paper on the real Symmetry-Aware
# Transformer splits: all eight configurations (WL/FSF x LSTM/XGBoost x state/delta) on all four
# domains, seeds 13-15 (XGBoost is deterministic and runs seed 13), paper decoding (beam 3,
# horizon 100), evaluated on validation / interpolation / extrapolation (Table 1's columns).
# Reference plans are made for train/validation only (the learned methods need no others).
# Runs outside the main workspace; stages run one after another so the log shows each wall time.
# Usage: bash benchmarks/satr_paper.sh /abs/path/to/shared/benchmarks/satr [workdir] [methods...]
set -euo pipefail
satr=${1:?path to the satr suite}
work=${2:-/tmp/planarena-satr-paper}
shift $(( $# >= 2 ? 2 : $# ))
methods=("$@")
[ ${#methods[@]} -gt 0 ] || methods=(wl_xgb_delta wl_xgb_state fsf_xgb_delta fsf_xgb_state
                                    wl_lstm_delta wl_lstm_state fsf_lstm_delta fsf_lstm_state)
repo=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$work" && cd "$work"
python - "$repo/params.yaml" "$satr" <<'PY'
import sys, yaml
d = yaml.safe_load(open(sys.argv[1]))
d["profile"] = "paper"
d["suite"] = "satr"
d["suites"]["satr"].update(path=sys.argv[2], max_per_split=None)
d["planners"]["splits"] = ["train", "validation"]
d["methods"] = {k: {**v, "splits": ["validation", "interpolation", "extrapolation"]}
                for k, v in d["methods"].items() if v.get("method") == "state_centric"}
yaml.safe_dump(d, open("params.yaml", "w"), sort_keys=False)
PY
stamp() { date +%s; }
t0=$(stamp)
for s in generate plan trajectories embed_wl; do planarena stage "$s"; done
echo "[satr_paper] data stages: $(( $(stamp) - t0 )) s"
for m in "${methods[@]}"; do
  t=$(stamp); planarena stage train "$m"; echo "[satr_paper] train $m: $(( $(stamp) - t )) s"
  t=$(stamp); planarena stage evaluate "$m"; echo "[satr_paper] evaluate $m: $(( $(stamp) - t )) s"
  planarena report || true
done
echo "[satr_paper] total: $(( $(stamp) - t0 )) s; see $work/reports/leaderboard.md"
