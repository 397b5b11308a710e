#!/usr/bin/env bash
# DVC's own cost per stage with this project's params.yaml: two throwaway DVC projects, each with
# one resolve-like stage and a trivial `foreach: ${methods}` stage per row (as dvc.yaml's train@ stages were before 2026-11-29),
# which differ only in how the resolve stage depends on params.yaml:
#   whole: `params: [params.yaml:]` (every key copied into dvc.lock, which DVC parses and rewrites
#          after each stage; dvc.yaml before 2026-11-29)
#   file:  `deps: [params.yaml]` plus a top-level `params: [params.yaml]` for `dvc exp show`
# Usage: bash benchmarks/dvc_stage_overhead.sh setup DIR      (then time, e.g. with /usr/bin/time -v)
#        bash benchmarks/dvc_stage_overhead.sh run DIR/whole   (one fresh `dvc repro` there)
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
export PATH="$repo/.venv/bin:$PATH"
case "${1:?setup or run}" in
setup)
  root=${2:?a folder}
  for variant in whole file; do
    d="$root/$variant"; rm -rf "$d"; mkdir -p "$d"; cd "$d"
    git init -q && dvc init -q && dvc config core.analytics false
    cp "$repo/params.yaml" .
    if [ "$variant" = whole ]; then
      printf 'stages:\n  r:\n    cmd: mkdir -p rr && echo x > rr/f\n    params:\n      - params.yaml:\n    outs:\n      - rr\n' > dvc.yaml
    else
      printf 'params:\n  - params.yaml\nstages:\n  r:\n    cmd: mkdir -p rr && echo x > rr/f\n    deps:\n      - params.yaml\n    outs:\n      - rr\n' > dvc.yaml
    fi
    printf '  t:\n    foreach: ${methods}\n    do:\n      cmd: mkdir -p out/${key} && cat rr/f > out/${key}/f\n      deps:\n        - rr\n      outs:\n        - out/${key}\n' >> dvc.yaml
    git add -A >/dev/null && git commit -qm "$variant" && echo "$d: $(grep -c 'cmd:' dvc.yaml) stage templates, $(python -c "import yaml;print(len(yaml.safe_load(open('params.yaml'))['methods']))") rows"
  done ;;
run)
  cd "${2:?a project folder}" && rm -rf out rr dvc.lock .dvc/cache .dvc/tmp/runs && dvc repro -q >/dev/null ;;
esac
