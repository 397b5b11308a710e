#!/usr/bin/env bash
# Set up planarena on a fresh machine: virtual environment, CPU build of torch first (so no CUDA
# wheels are pulled), pinned dependencies, the package itself (editable), and DVC in the git repo.
# Idempotent: a second run with unchanged requirements only checks and returns.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
TORCH_VERSION=${TORCH_VERSION:-2.13.0}
TORCH_INDEX=${TORCH_INDEX:-https://download.pytorch.org/whl/cpu}
UV_VERSION=${UV_VERSION:-0.13.9}
VENV=.venv
STAMP=$VENV/.planarena-installed

want=$(cat requirements.txt pyproject.toml scripts/setup.sh | sha256sum | cut -c1-16)
if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$want" ]; then
  echo "setup: environment up to date ($VENV)"
else
  [ -x "$VENV/bin/python" ] || "$PYTHON" -m venv "$VENV"
  # uv resolves nothing here (every version is pinned) but downloads and unpacks in parallel: a cold
  # setup takes a fraction of pip's time (docs/cost.md). PLANARENA_PIP=1, or no uv to be had, uses
  # pip.
  UV=""
  if [ "${PLANARENA_PIP:-0}" != "1" ]; then
    if command -v uv >/dev/null 2>&1; then
      UV=$(command -v uv)
    elif "$VENV/bin/python" -m pip install -q "uv==$UV_VERSION" 2>&1 | grep -v "^WARNING: Location"; [ -x "$VENV/bin/uv" ]; then
      UV=$VENV/bin/uv
    fi
  fi
  if [ -n "$UV" ]; then
    # --compile-bytecode: uv, unlike pip, writes no .pyc files by default; without them every stage
    # process recompiles what it imports (numpy, dask, torch, ...), about 2.5 s per process, and
    # with PYTHONDONTWRITEBYTECODE set it never stops doing so (docs/cost.md).
    install() { "$UV" pip install -q --compile-bytecode --python "$VENV/bin/python" "$@"; }
  else
    "$VENV/bin/python" -m pip install -q --upgrade pip 2>&1 | grep -v "^WARNING: Location" || true
    install() { "$VENV/bin/python" -m pip install -q "$@" 2>&1 | grep -vE "^WARNING: (Location|Retrying)" || true; }
  fi
  echo "setup: installing torch $TORCH_VERSION (CPU build)${UV:+ with uv}"
  # --no-deps: only torch itself comes from the CPU index; its dependencies are pinned in
  # requirements.txt and come from the default index (no lookups of them on the torch index).
  # the CPU index is tried only when its host resolves (a machine without it answers at once; uv
  # would spend 5-9 s on retries before the fallback below)
  host=$(echo "$TORCH_INDEX" | sed -E 's#^[a-z]+://([^/:]+).*#\1#')
  if ! "$VENV/bin/python" -c "import torch" 2>/dev/null \
     && "$VENV/bin/python" -c "import socket, sys; socket.getaddrinfo(sys.argv[1], 443)" "$host" 2>/dev/null; then
    install --no-deps "torch==$TORCH_VERSION" --index-url "$TORCH_INDEX" || true
  fi
  if ! "$VENV/bin/python" -c "import torch" 2>/dev/null; then
    echo "setup: WARNING: $TORCH_INDEX unreachable; installing torch $TORCH_VERSION from the default index" >&2
    install --no-deps "torch==$TORCH_VERSION" || true
  fi
  echo "setup: installing pinned dependencies"
  install -r requirements.txt || true
  install --no-deps -e . || true
  "$VENV/bin/python" -c "import torch, planarena, pymimir, pymimir_rgnn, pymimir_rl, wlplan, unified_planning, dvc" \
    || { echo "setup: dependency check failed" >&2; exit 1; }
  echo "$want" > "$STAMP"
fi

# DVC lives in this git repository (.dvc/ is committed); initialise it if this checkout lacks it.
if [ ! -d .dvc ]; then
  [ -d .git ] || git init -q
  "$VENV/bin/dvc" init -q
fi

# Last line: say plainly when torch is not the CPU build (the CPU index was unreachable and PyPI's
# CUDA build came instead): what it costs here, and that results may differ from the committed run.
build=$(sed -n "s/^__version__ = '\(.*\)'/\1/p" "$("$VENV/bin/python" -c 'import importlib.util as u; print(u.find_spec("torch").submodule_search_locations[0])')/version.py" 2>/dev/null)
case "$build" in
  *+cpu*|"") ;;
  *)
    size=$(du -sh "$VENV" 2>/dev/null | cut -f1)
    cuda=$(du -shc "$VENV"/lib/python*/site-packages/nvidia 2>/dev/null | tail -1 | cut -f1)
    echo "setup: NOTE: torch $build is not the CPU build (installed from the default index when $TORCH_INDEX could not be reached): the venv is $size, ${cuda:-?} of it CUDA libraries (nvidia-*) a CPU-only machine never uses; imports are slower (docs/cost.md) and floats can differ from the committed run in the third decimal: run \`planarena check-repro\` after \`make repro\`" >&2
    ;;
esac
