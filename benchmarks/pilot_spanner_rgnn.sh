#!/usr/bin/env bash
# Pilot for the Spanner v2 claim (AIW-AD vs AIW-External, R-GNN policies paper Table 1): at which
# optimisation budget does the External policy beat its untrained twin? One seed, the IPC 2023
# Learning Track's Spanner training problems only: the 30 largest are carved out as validation
# (`rgnn_policies.validation_from_train`, the paper's Table 8 split: the policies select their
# checkpoints there) and every row is read ONLY on them: the rows are evaluated on the training
# split and the summary keeps those 30 problems (a pilot never looks at a test split: every test
# split is cut to 0 problems, so none is even imported). Rows: aiw_ad, aiw_ext, their untrained twins, the uniform choice among AIW(1)
# candidates (aiw_ad_uniform) and the primitive random walk (a labelled reference).
# Budget: EPISODES x 16 updates x batch 16 for both encodings (the old claim's 60 episodes: External
# 57/90 vs the walk 54/90 on easy), a 6-layer 32-wide R-GNN, 200 choices per problem.
# Usage: bash benchmarks/pilot_spanner_rgnn.sh /abs/path/to/shared/benchmarks/ipc2023-learning [workdir] [episodes]
set -euo pipefail
ipc=${1:?path to the ipc2023-learning suite}
work=${2:-/tmp/planarena-pilot-spanner}
episodes=${3:-60}
repo=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$work" && cd "$work"
python - "$repo/params.yaml" "$ipc" "$episodes" <<'PY'
import sys, yaml
d = yaml.safe_load(open(sys.argv[1]))
episodes = int(sys.argv[3])
d.update(profile="default", suite="ipc2023", jobs=2)
d["suites"]["ipc2023"].update(path=sys.argv[2], domains=["spanner"],
                              max_per_split={"test-easy": 0, "test-medium": 0, "test-hard": 0})
d["planners"]["splits"] = ["train"]
d["evaluation"].update(seeds=[13], splits=["train"])
d["rgnn_policies"].update(
    splits=["train"], validation_from_train=30, max_choices={"width": 200, "flat": 1000},
    model={"embedding_size": 32, "layers": 6, "depth_nodes": True, "depth_rank_weight": 1.0},
    train={"episodes": episodes, "train_steps": 16, "batch": 16, "rollouts": 4, "max_steps": 60,
           "lr": 1.0e-3, "min_lr": 1.0e-5, "lr_episodes": max(1, episodes // 2), "temperature": 1.0,
           "min_temperature": 0.1, "temperature_episodes": episodes, "max_seconds": 0,
           "eval_every": max(1, episodes // 6), "eval_choices": 50})
keep = ("aiw_ad", "aiw_ext", "aiw_ad_untrained", "aiw_ext_untrained", "aiw_ad_uniform", "random_walk")
d["methods"] = {m: {k: v for k, v in (d["methods"][m] or {}).items() if k != "run"} for m in keep}
d["methods"]["random_walk"]["horizon"] = 200
yaml.safe_dump(d, open("params.yaml", "w"), sort_keys=False)
PY
stamp() { date +%s; }
t0=$(stamp)
# resumable: a rerun with the same workdir and episodes keeps the data, the trained models and the
# records already written (the evaluate stage skips attempts it has)
[ -f data/problems/manifest.jsonl ] || for s in resolve resolve_methods generate plan trajectories; do planarena stage "$s"; done
for m in aiw_ad aiw_ext aiw_ad_untrained aiw_ext_untrained aiw_ad_uniform random_walk; do
  if [ -f "data/models/$m/train.json" ]; then echo "[pilot] train $m: kept"
  else t=$(stamp); planarena stage train "$m"; echo "[pilot] train $m: $(( $(stamp) - t )) s"; fi
  t=$(stamp); planarena stage evaluate "$m"; echo "[pilot] evaluate $m: $(( $(stamp) - t )) s"
done
python - <<'PY'
import json, collections
from planarena.core.problemset import ProblemSet
train = sorted(ProblemSet("data/problems").select(domain="spanner", split="train"),
               key=lambda e: (e.objects, e.size or 0, e.problem))
carved = {e.problem for e in train[-min(30, len(train) // 2):]}   # the policies' selection problems
print(f"read on the {len(carved)} largest training problems (held out of training)")
for m in ("aiw_ad", "aiw_ext", "aiw_ad_untrained", "aiw_ext_untrained", "aiw_ad_uniform", "random_walk"):
    recs = [json.loads(l) for l in open(f"data/results/{m}.jsonl")]
    by = collections.Counter(r["outcome"] for r in recs if r["problem"] in carved)
    print(m, dict(sorted(by.items())))
for m in ("aiw_ad", "aiw_ext"):
    facts = json.load(open(f"data/models/{m}/facts.json"))
    print(m, json.dumps(facts)[:1500])
PY
echo "[pilot] total: $(( $(stamp) - t0 )) s"
