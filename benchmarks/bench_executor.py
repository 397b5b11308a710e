#!/usr/bin/env python
"""The executor's figures in docs/scaling.md#measured:

1. **dispatch overhead** of :func:`planarena.core.executor.run_units` on a local Dask cluster of
   2 workers: the start and close of the cluster (once per stage), and the seconds per unit of
   trivial units (what a unit costs beyond its own work; target: under 50 ms);
2. **speed-up** of stages of the default profile with ``jobs: 1`` (units in the stage process) vs
   ``jobs: 2`` (a 2-worker local cluster): each stage is run both ways in a workspace that holds the
   default profile's data (e.g. the clone ``benchmarks/bench_repro.py`` leaves behind), from a cold
   start each time (an evaluate stage's records and the plan stage's Fast Downward cache are moved
   aside and put back afterwards; a train stage rewrites the same models).

    python benchmarks/bench_executor.py --workspace /tmp/pa-bench/planarena [--json out.json]
        [--stages plan train@wl_lstm_delta evaluate@iw_ext ...] [--overhead-only]

The workspace's ``params.yaml`` gets ``jobs`` edited for each run and restored at the end; its
own ``src`` is imported (set it to this checkout's code first: ``git pull``).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

#: a mix of the default profile's unit kinds: Fast Downward planning, LSTM and R-GNN training
#: (domain x seed units), decoding, width-based lookahead, planner and floor evaluation
DEFAULT_STAGES = ("plan", "train@wl_lstm_delta", "train@aiw_ad", "evaluate@wl_lstm_delta", "evaluate@iw_ext",
                  "evaluate@fd_lama", "evaluate@random_walk")


def overhead(n: int = 2000) -> dict:
    """Cluster start/close and per-unit dispatch seconds on a 2-worker local cluster."""
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    from planarena.core import executor
    from planarena.core.executor import ExecutorConfig, run_units

    executor.configure(ExecutorConfig(jobs=2, root=os.getcwd()))
    start = time.perf_counter()
    executor.client()
    started = time.perf_counter() - start
    list(run_units(abs, range(8)))  # warm: the workers have the function
    times = []
    for _ in range(3):
        t = time.perf_counter()
        list(run_units(abs, range(n)))
        times.append((time.perf_counter() - t) / n)
    t = time.perf_counter()
    executor.shutdown()
    closed = time.perf_counter() - t
    return {"cluster_start_s": round(started, 3), "cluster_close_s": round(closed, 3),
            "dispatch_ms_per_unit": round(1000 * min(times), 2), "units": n, "workers": 2}


def set_jobs(params: Path, jobs: int) -> None:
    text = params.read_text()
    new, n = re.subn(r"(?m)^jobs: *\d+", f"jobs: {jobs}", text, count=1)
    if not n:
        sys.exit(f"{params}: no top-level `jobs:` line")
    params.write_text(new)


def run_stage(ws: Path, stage: str) -> float:
    name, _, method = stage.partition("@")
    cmd = [sys.executable, f"stages/{name}.py", *([method] if method else [])]
    env = dict(os.environ, PYTHONPATH=str(ws / "src"), HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=ws, env=env, capture_output=True, text=True)
    if proc.returncode:
        sys.exit(f"{stage} failed:\n{proc.stderr[-3000:]}")
    return time.perf_counter() - start


def cold(ws: Path, stage: str) -> list[Path]:
    """What to move aside before a cold run of ``stage``."""
    name, _, method = stage.partition("@")
    if name == "evaluate":
        return [ws / "data" / "results" / f"{method}.jsonl"]
    if name == "train":   # a row with its model folder is up to date (planarena.runner.stages)
        return [ws / "data" / "models" / method]
    if name == "plan":
        return [ws / "data" / "cache" / "fd"]
    return []


def speedup(ws: Path, stages: list[str]) -> dict:
    params = ws / "params.yaml"
    original = params.read_text()
    out: dict = {}
    stash = ws.parent / (ws.name + ".bench-stash")
    stash.mkdir(exist_ok=True)
    try:
        for stage in stages:
            moved = [(p, stash / p.name) for p in cold(ws, stage) if p.exists()]
            for p, dst in moved:
                shutil.move(p, dst)
            row = {}
            try:
                for jobs in (1, 2):
                    set_jobs(params, jobs)
                    row[f"jobs{jobs}_s"] = round(run_stage(ws, stage), 1)
                    for p in cold(ws, stage):  # cold again for the next run
                        shutil.rmtree(p) if p.is_dir() else p.unlink(missing_ok=True)
            finally:
                for p, dst in moved:
                    shutil.rmtree(p, ignore_errors=True) if p.is_dir() else p.unlink(missing_ok=True)
                    shutil.move(dst, p)
            row["speedup"] = round(row["jobs1_s"] / row["jobs2_s"], 2)
            out[stage] = row
            print(f"{stage:32s} jobs 1: {row['jobs1_s']:7.1f} s   jobs 2: {row['jobs2_s']:7.1f} s   "
                  f"x{row['speedup']}", flush=True)
    finally:
        params.write_text(original)
        shutil.rmtree(stash, ignore_errors=True)
    total1 = sum(r["jobs1_s"] for r in out.values())
    total2 = sum(r["jobs2_s"] for r in out.values())
    return {"stages": out, "total_jobs1_s": round(total1, 1), "total_jobs2_s": round(total2, 1),
            "speedup": round(total1 / total2, 2)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workspace", type=Path)
    ap.add_argument("--stages", nargs="*", default=list(DEFAULT_STAGES))
    ap.add_argument("--overhead-only", action="store_true")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    result = {"cores": os.cpu_count(), "overhead": overhead()}
    print(json.dumps(result["overhead"]), flush=True)
    if not args.overhead_only:
        if args.workspace is None:
            sys.exit("--workspace is required for the stage speed-ups (or pass --overhead-only)")
        result["speedup"] = speedup(args.workspace.resolve(), args.stages)
        print(json.dumps({k: v for k, v in result["speedup"].items() if k != "stages"}))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
