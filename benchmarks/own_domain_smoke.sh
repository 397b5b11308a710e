#!/usr/bin/env bash
# "Your own domain in minutes": the smoke profile on a flat 30-problem Hanoi folder (1-30 discs,
# written by scripts/flat_domain.py), run as a user runs it - one `dvc exp run` with two -S in a
# fresh clone of this repository - timed end to end and per stage. Hanoi is the stress case of the
# smoke caps: its WL vocabulary at 2 iterations is thousands of colours, its plans grow as 2**n - 1,
# and nothing solves its large problems.
# Usage: bash benchmarks/own_domain_smoke.sh [workdir] [out.txt]      (after `make setup` here)
# Writes the per-stage wall times, the total wall and CPU time and the peak RSS to out.txt
# (default benchmarks/results/hanoi-smoke-<date>.txt); the full log stays in workdir/run.log.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
work=${1:-/tmp/planarena-hanoi-smoke}
out=${2:-$repo/benchmarks/results/hanoi-smoke-$(date +%Y-%m-%d).txt}
export PATH="$repo/.venv/bin:$PATH" HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
rm -rf "$work" && mkdir -p "$work"
python "$repo/scripts/flat_domain.py" hanoi "$work/hanoi" --count 30
git clone -q "$repo" "$work/planarena" && cd "$work/planarena"
ln -s "$repo/.venv" .venv
export PYTHONPATH="$PWD/src"     # the clone's own code (the shared venv's editable install points at $repo)
# every output line with the seconds since the start, so the stages can be timed from the log
stamp() { python -u -c '
import sys, time
t0 = time.time()
for line in sys.stdin:
    sys.stdout.write(f"{time.time() - t0:9.1f} {line}")
'; }
/usr/bin/time -v -o "$work/time.txt" dvc exp run -S profile=smoke -S suite="$work/hanoi" 2>&1 | stamp > "$work/run.log" || true
{
  echo "# smoke profile on a flat Hanoi folder (30 problems, 1-30 discs): dvc exp run -S profile=smoke -S suite=<hanoi>"
  echo "# code $(git rev-parse --short HEAD), $(date -u +%Y-%m-%dT%H:%MZ), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores"
  echo "# stage: wall seconds (from the start of this stage to the start of the next; DVC's bookkeeping included)"
  python - "$work/run.log" <<'PY'
import re, sys
starts = []
last = 0.0
for line in open(sys.argv[1], errors="replace"):
    m = re.match(r"\s*([\d.]+) (.*)", line)
    if not m:
        continue
    last = float(m.group(1))
    # a DVC stage, or a row's share of the train / evaluate stage
    s = re.search(r"Running stage '([^']+)'", m.group(2)) or re.search(r"((?:train|evaluate)@\S+): running \(", m.group(2))
    c = re.search(r"Stage '([^']+)' (is cached|didn't change)", m.group(2))
    if s:
        starts.append((s.group(1), last))
    elif c:   # restored from DVC's run cache (an off row's stages after an earlier run): counted apart
        starts.append((c.group(1) + " (cached)", last))
for (name, t), nxt in zip(starts, [t for _, t in starts[1:]] + [last]):
    print(f"{name:45s} {nxt - t:8.1f}")
PY
  grep -E "Elapsed|User time|System time|Maximum resident|Exit status" "$work/time.txt"
  grep -E "\[cost\]|embed_wl .*WL iterations" "$work/run.log" | sed 's/^ *[0-9.]* //' | head -40
} > "$out"
cat "$out"
