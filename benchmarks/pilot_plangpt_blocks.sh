#!/usr/bin/env bash
# Pilot for a sample-efficiency claim (state-centric paper vs PlanGPT): does PlanGPT learn Blocksworld
# at the size a 2-core claim can afford? One seed of PlanGPT without the contrastive loss, trained on
# the 9 SATr Blocksworld training problems' full state spaces (Appendix C of the SATr paper), read
# ONLY on the training and validation splits (a pilot never looks at a test split): coverage with
# applicability-filtered and regrounding decoding, and the facts of checkpoint selection (best step
# per strategy, teacher-forced accuracy and L_pred on validation pairs at every validation).
# Usage: bash benchmarks/pilot_plangpt_blocks.sh /abs/path/to/shared/benchmarks/satr [workdir] [steps]
set -euo pipefail
satr=${1:?path to the satr suite}
work=${2:-/tmp/planarena-pilot-plangpt-blocks}
steps=${3:-3000}
repo=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$work" && cd "$work"
python - "$repo/params.yaml" "$satr" "$steps" <<'PY'
import sys, yaml
d = yaml.safe_load(open(sys.argv[1]))
steps = int(sys.argv[3])
d.update(profile="default", suite="satr")
d["suites"]["satr"].update(path=sys.argv[2], domains=["blocksworld"], max_per_split=None)
d["planners"]["splits"] = ["train", "validation"]
d["evaluation"].update(seeds=[13], time_limit=600)
d["transformers"].update(
    splits=["train", "validation"], max_objects=64, max_states=None, horizon=500, max_tokens=500,
    select_with="own", model={"d": 64, "layers": 4, "heads": 4, "ff": 128, "k": 16, "token_dim": 16},
    train={"steps": steps, "batch": 16, "lr": 0.003, "min_lr": 1.0e-5, "warmup": 0.03, "window": 0.02,
           "eval_every": max(steps // 10, 1)},
    by_arch={"plangpt": {"model": {"max_positions": 2048},
                         "train": {"steps": steps, "batch": 16, "lr": 0.003, "eval_every": max(steps // 10, 1)}}})
d["methods"] = {m: {k: v for k, v in d["methods"][m].items() if k != "run"}
                for m in ("plangpt_nocl_applicable", "plangpt_nocl_regrounding")}
yaml.safe_dump(d, open("params.yaml", "w"), sort_keys=False)
PY
stamp() { date +%s; }
t0=$(stamp)
for s in generate plan trajectories; do planarena stage "$s"; done
for m in plangpt_nocl_applicable plangpt_nocl_regrounding; do
  t=$(stamp); planarena stage train "$m"; echo "[pilot] train $m: $(( $(stamp) - t )) s"
  t=$(stamp); planarena stage evaluate "$m"; echo "[pilot] evaluate $m: $(( $(stamp) - t )) s"
done
python - <<'PY'
import json, collections
for m in ("plangpt_nocl_applicable", "plangpt_nocl_regrounding"):
    recs = [json.loads(l) for l in open(f"data/results/{m}.jsonl")]
    by = collections.Counter((r["split"], r["outcome"]) for r in recs)
    print(m, dict(sorted(by.items())))
facts = json.load(open("data/models/plangpt_nocl_applicable/blocksworld/seed13/facts.json"))
print("steps", facts["steps_run"], "final loss", facts["final_loss"], "selection", facts.get("selection"))
for step, scores in facts.get("evaluations", []):
    print(step, {k: [round(x, 3) for x in v] for k, v in scores.items()})
PY
echo "[pilot] total: $(( $(stamp) - t0 )) s"
