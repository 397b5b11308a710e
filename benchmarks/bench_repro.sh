#!/usr/bin/env bash
# Wall time of `dvc repro` on the current profile: once from scratch (--force, planner cache cleared),
# then once with nothing changed. Usage: bash benchmarks/bench_repro.sh   (from the repo root, venv active)
set -euo pipefail
rm -rf data/cache/fd
s=$(date +%s.%N); dvc repro --force >/tmp/planarena-bench-repro.log 2>&1; e=$(date +%s.%N)
echo "dvc repro (from scratch, text-embedding cache warm): $(echo "$e - $s" | bc) s"
s=$(date +%s.%N); dvc repro >/tmp/planarena-bench-repro-noop.log 2>&1; e=$(date +%s.%N)
echo "dvc repro (nothing changed): $(echo "$e - $s" | bc) s"
