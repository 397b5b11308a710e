#!/usr/bin/env bash
# A multi-node run simulated on one machine (docs/scaling.md#measured): a `dask scheduler` and two
# `dask worker` processes started from the shell, and the smoke profile's `dvc exp run` sending
# every plan/train/evaluate unit to them through `executor.address`. Then the same profile again
# with the default local executor (`dvc repro -f`), and the two `reports/metrics.json` compared.
#
#   bash benchmarks/multinode_smoke.sh [/tmp/pa-multinode]
#
# Prints the wall time of both runs and whether metrics.json is identical. Uses this checkout's
# .venv (run `make setup` first); the clone's own src/ is what the stages and the workers import.
set -euo pipefail
WORK=${1:-/tmp/pa-multinode}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PORT=${PORT:-8786}
rm -rf "$WORK"
mkdir -p "$WORK"
git clone -q "$ROOT" "$WORK/planarena"
cd "$WORK/planarena"
ln -s "$ROOT/.venv" .venv
source .venv/bin/activate
export PYTHONPATH=$PWD/src HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 OMP_NUM_THREADS=1  # one thread per worker (docs/scaling.md)

# "machine A": the scheduler; "machines B and C": one worker each, started in the checkout
DASK_DISTRIBUTED__SCHEDULER__WORKER_SATURATION=1.0 DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES=2 \
  dask scheduler --host 127.0.0.1 --port "$PORT" --no-dashboard > "$WORK/scheduler.log" 2>&1 &
dask worker "tcp://127.0.0.1:$PORT" --nthreads 1 --no-dashboard --name B > "$WORK/worker-B.log" 2>&1 &
dask worker "tcp://127.0.0.1:$PORT" --nthreads 1 --no-dashboard --name C > "$WORK/worker-C.log" 2>&1 &
trap 'kill $(jobs -p) 2>/dev/null || true' EXIT

SECONDS=0
dvc exp run -S profile=smoke -S "executor.address=tcp://127.0.0.1:$PORT" > "$WORK/repro-address.log" 2>&1
t_address=$SECONDS
cp reports/metrics.json "$WORK/metrics-address.json"

# the same profile on the default local executor (a LocalCluster of `jobs` workers)
sed -i "s|^  address: tcp://127.0.0.1:$PORT|  address: null|" params.yaml
grep -q "^  address: null" params.yaml
SECONDS=0
dvc repro -f > "$WORK/repro-local.log" 2>&1
t_local=$SECONDS
cp reports/metrics.json "$WORK/metrics-local.json"

if cmp -s "$WORK/metrics-address.json" "$WORK/metrics-local.json"; then same=identical; else same=DIFFERENT; fi
printf '{"address_repro_s": %d, "local_repro_s": %d, "metrics_json": "%s", "cores": %s}\n' \
  "$t_address" "$t_local" "$same" "$(getconf _NPROCESSORS_ONLN)" | tee "$WORK/result.json"
[ "$same" = identical ]
