#!/usr/bin/env bash
# "Your domain", end to end as a user runs it: a flat folder of a public domain that no suite of
# planarena uses (Zenotravel, IPC 2002: domain.pddl and pfile1..pfile20.pddl written by
# scripts/flat_domain.py), run with one -S on the default profile in a fresh clone of this
# repository. The run's pages and records are copied to reports/own-domain-zenotravel/, re-rendered
# with a description (paper-run links off) from the same records.
# Usage: bash benchmarks/own_domain.sh [workdir]        (after `make setup` in this checkout)
# Re-render the committed pages from the committed records:
#   bash benchmarks/own_domain.sh --render [workdir]
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
export PATH="$repo/.venv/bin:$PATH" HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
out="$repo/reports/own-domain-zenotravel"
describe() {  # the committed pages' params: the run's, with a description and no paper-run links
  python - "$1" <<'PY'
import sys, yaml
p = sys.argv[1]
d = yaml.safe_load(open(p))
d["report"] = {"paper_runs": [], "description": (
    "the default profile on your own domain: a flat Zenotravel folder (IPC 2002; domain.pddl and pfile1..pfile20, "
    "written by scripts/flat_domain.py), run with `dvc exp run -S suite=/abs/path/to/zenotravel` "
    "(benchmarks/own_domain.sh); its problems split by object count")}
yaml.safe_dump(d, open(p, "w"), sort_keys=False)
PY
}
if [ "${1:-}" = "--render" ]; then
  work=${2:-/tmp/planarena-own-domain-render}
  rm -rf "$work" && mkdir -p "$work/data/results" "$work/data/problems" && cd "$work"
  cp "$out"/records/*.jsonl data/results/ && mv data/results/manifest.jsonl data/problems/manifest.jsonl
  mkdir -p data/plans data/schema && mv data/results/plans.jsonl data/plans/records.jsonl
  mv data/results/schema-manifest.jsonl data/schema/manifest.jsonl && cp -r "$out/records/acp" data/acp
  cp "$out/params.yaml" params.yaml
  planarena report
  echo "[own_domain] rendered $work/reports/leaderboard.md"
  exit 0
fi
work=${1:-/tmp/planarena-own-domain}
rm -rf "$work" && mkdir -p "$work"
python "$repo/scripts/flat_domain.py" zenotravel "$work/zenotravel" --count 20
git clone -q "$repo" "$work/planarena" && cd "$work/planarena"
ln -s "$repo/.venv" .venv
export PYTHONPATH="$PWD/src"     # the clone's own code (the shared venv's editable install points at $repo)
start=$(date +%s)
dvc exp run -S suite="$work/zenotravel"
echo "[own_domain] dvc exp run -S suite=$work/zenotravel: $(( $(date +%s) - start )) s wall"
describe params.yaml
planarena report
rm -rf "$out" && mkdir -p "$out/records"
cp -r reports/leaderboard.md reports/detail reports/plots reports/metrics.json params.yaml "$out/"
cp data/results/*.jsonl data/problems/manifest.jsonl "$out/records/"
cp data/plans/records.jsonl "$out/records/plans.jsonl" && cp data/schema/manifest.jsonl "$out/records/schema-manifest.jsonl"
(cd data && find acp -name summary.json -exec cp --parents {} "$out/records/" \;)   # the pool section's dataset counts
echo "[own_domain] pages and records in $out"
