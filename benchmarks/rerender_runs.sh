#!/usr/bin/env bash
# Re-render every other committed run that keeps its records (reports/<run>/records/) with the
# current report code, and put the pages back in place: leaderboard.md, detail/, plots/ and
# metrics.json are replaced; records/, params.yaml and any other file of the run are kept.
# Runs without records (reports/satr-paper, reports/satr-default, reports/embedplan-mpnet) cannot be
# re-rendered: their README says so.
# Usage: bash benchmarks/rerender_runs.sh [workdir]       (after `make setup` here)
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
work=${1:-/tmp/planarena-rerender}
export PATH="$repo/.venv/bin:$PATH" HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
put_back() {  # put_back <rendered reports folder> <reports/run>
  local from=$1 to=$2
  rm -rf "$to/detail" "$to/plots" "$to/leaderboard.md" "$to/metrics.json"
  cp -r "$from/detail" "$from/plots" "$from/leaderboard.md" "$from/metrics.json" "$to/"
  echo "[rerender] $to: $(grep -c '' "$to/leaderboard.md") lines"
}
bash "$repo/benchmarks/ipc2023_rgnn.sh" --render "$work/ipc2023-rgnn" > "$work.ipc2023-rgnn.log" 2>&1 \
  || { tail -20 "$work.ipc2023-rgnn.log"; exit 1; }
put_back "$work/ipc2023-rgnn/reports" "$repo/reports/ipc2023-rgnn"
bash "$repo/benchmarks/own_domain.sh" --render "$work/own-domain-zenotravel" > "$work.own-domain.log" 2>&1 \
  || { tail -20 "$work.own-domain.log"; exit 1; }
put_back "$work/own-domain-zenotravel/reports" "$repo/reports/own-domain-zenotravel"
