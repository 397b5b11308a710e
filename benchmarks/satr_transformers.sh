#!/usr/bin/env bash
# The symmetry-aware-transformers family on the real SATr splits (suite=satr) at the
# DEFAULT profile's model sizes (CPU: d 32, 2 layers, 200 / 40 training steps): the measured side
# of the published Table 1 / Table E.4 side by side (reports/<workdir>/detail/published.md). The
# paper profile (d 768, 12 layers, ~109k steps) is GPU work; this run shows what the CPU-sized
# models do on the paper's own problems, with the random-walk floors beside them.
# All 14 blocks (PlanGPT / SATr encoder-decoder x CL / no CL x 3 decoding strategies, the SATr
# encoder x CL / no CL) and the two random walks, seeds 13-15, on validation / interpolation /
# extrapolation. Reference plans are made for train/validation only (the models need no others);
# DATA_FROM=<workspace> copies data/{problems,plans,trajectories} of an earlier SATr run instead.
# Usage: bash benchmarks/satr_transformers.sh /abs/path/to/shared/benchmarks/satr [workdir] [methods...]
set -euo pipefail
satr=${1:?path to the satr suite}
work=${2:-/tmp/planarena-satr-transformers}
shift $(( $# >= 2 ? 2 : $# ))
repo=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$work" && cd "$work"
python - "$repo/params.yaml" "$satr" "$@" <<'PY'
import sys, yaml
d = yaml.safe_load(open(sys.argv[1]))
d["profile"] = "default"
d["suite"] = "satr"
d["suites"]["satr"].update(path=sys.argv[2], max_per_split=None)
d["planners"]["splits"] = ["train", "validation"]
keep = sys.argv[3:] or [k for k, v in d["methods"].items() if v.get("method") == "satr"] + ["random_walk", "random_walk_novisit"]
d["methods"] = {k: {**d["methods"][k], "splits": ["validation", "interpolation", "extrapolation"]} for k in keep}
yaml.safe_dump(d, open("params.yaml", "w"), sort_keys=False)
PY
stamp() { date +%s; }
t0=$(stamp)
if [ -n "${DATA_FROM:-}" ] && [ ! -d data/problems ]; then
  mkdir -p data && cp -r "$DATA_FROM"/data/{problems,plans,trajectories} data/
else
  for s in generate plan trajectories; do planarena stage "$s"; done
fi
echo "[satr_transformers] data: $(( $(stamp) - t0 )) s"
for m in $(python -c "import yaml; print(' '.join(yaml.safe_load(open('params.yaml'))['methods']))"); do
  t=$(stamp); planarena stage train "$m"; echo "[satr_transformers] train $m: $(( $(stamp) - t )) s"
  t=$(stamp); planarena stage evaluate "$m"; echo "[satr_transformers] evaluate $m: $(( $(stamp) - t )) s"
done
planarena report
echo "[satr_transformers] total: $(( $(stamp) - t0 )) s; see $work/reports/leaderboard.md"
