#!/usr/bin/env python
"""The four cost figures of docs/cost.md#cost-of-a-run, measured on a fresh clone of this
repository:

1. fresh ``make repro``: setup time, then ``dvc repro`` on the default profile with empty ``data/``
   and cold caches, and each stage's share (from DVC's "Running stage" lines);
2. ``dvc repro`` after an edit to one file of ``methods/embedplan/`` (a new module-level constant):
   which stages rerun and the time;
3. ``dvc repro`` after changing a key under ``profiles.paper``: which stages rerun and the time;
4. ``dvc repro`` twice in a row: the second reruns nothing.

    python benchmarks/bench_repro.py --workdir /tmp/pa-bench [--profile default] [--json out.json] [--fresh-only]

The clone is made from this repository's HEAD (commit first), so it measures what a new user gets.
``--reuse-venv`` symlinks this checkout's ``.venv`` instead of running setup (no setup figure).
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

ROOT = Path(__file__).resolve().parents[1]
FAMILY_FILE = "src/planarena/methods/embedplan/method.py"
PAPER_KEY = ("      astar_lmcut: {time_limit: 60, memory_limit_mb: 8192}",
             "      astar_lmcut: {time_limit: 61, memory_limit_mb: 8192}")


def run(cmd: str, cwd: Path, log: Path) -> tuple[float, list[tuple[float, str]]]:
    """Run a shell command; return its wall time (s) and the (time, stage) of every stage DVC ran
    and of every row the train and evaluate stages ran (``train@<row>``; the bare ``train`` and
    ``evaluate`` then time the stages' own overhead).
    The clone's own ``src`` is imported (a reused venv's editable install points elsewhere, and the
    stages fingerprint the code they import)."""
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", PYTHONPATH=str(cwd / "src"))
    start = time.perf_counter()
    stages = []
    with log.open("w") as fh:
        proc = subprocess.Popen(["bash", "-c", cmd], cwd=cwd, env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True)
        for line in proc.stdout:
            fh.write(line)
            # a DVC stage, or a row's share of the train / evaluate stage (`train@<row>: running`)
            m = re.search(r"Running stage '([^']+)'", line) or re.search(r"((?:train|evaluate)@\S+): running \(", line)
            if m:
                stages.append((time.perf_counter() - start, m.group(1)))
        rc = proc.wait()
    if rc:
        sys.exit(f"{cmd} failed (exit {rc}); see {log}")
    return time.perf_counter() - start, stages


def family_shares(stage_s: dict[str, float], params_file: Path) -> dict[str, float]:
    """Seconds per share of the budget: ``data`` (resolve and data stages), each method family
    (its rows' shares ``train@<row>`` / ``evaluate@<row>``, family from the registered class),
    ``train`` and ``evaluate`` (those stages' time outside any row) and ``report``. Imports the
    clone's ``src`` (this script may run outside the venv)."""
    sys.path.insert(0, str(params_file.parent / "src"))
    from planarena.config import load_params
    from planarena.methods import resolve

    params = load_params(params_file)
    out: dict[str, float] = {}
    for stage, sec in stage_s.items():
        if "@" in stage:
            cls, _ = resolve(stage.split("@", 1)[1], params)
            key = cls.family
        else:
            key = stage if stage in ("report", "train", "evaluate") else "data"
        out[key] = round(out.get(key, 0.0) + sec, 1)
    return out


def shares(total: float, stages: list[tuple[float, str]]) -> dict[str, float]:
    """Seconds per stage: from its start to the next stage's start (the last one to the end)."""
    ends = [t for t, _ in stages[1:]] + [total]
    return {name: round(end - t, 1) for (t, name), end in zip(stages, ends)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workdir", type=Path, required=True)
    ap.add_argument("--profile", default="default")
    ap.add_argument("--reuse-venv", action="store_true")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--fresh-only", action="store_true",
                    help="stop after figure 1 (the clone's reports are then those of a fresh run at HEAD)")
    args = ap.parse_args()
    work = args.workdir / "planarena"
    if work.exists():
        shutil.rmtree(work)
    args.workdir.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "clone", "-q", str(ROOT), str(work)], check=True)
    if args.profile != "default":
        p = work / "params.yaml"
        p.write_text(p.read_text().replace("profile: default", f"profile: {args.profile}", 1))
    out: dict = {"commit": subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=work, capture_output=True,
                                          text=True).stdout.strip(), "profile": args.profile, "cores": os.cpu_count()}
    logs = args.workdir
    if args.reuse_venv:
        (work / ".venv").symlink_to(ROOT / ".venv")
    else:
        out["setup_s"], _ = run("bash scripts/setup.sh", work, logs / "setup.log")
        print(f"setup: {out['setup_s']:.0f} s", flush=True)
    act = "source .venv/bin/activate && "

    total, stages = run(act + "dvc repro", work, logs / "repro-fresh.log")
    out["fresh_repro_s"], out["fresh_stage_s"] = round(total, 1), shares(total, stages)
    print(f"fresh dvc repro: {total:.0f} s", flush=True)
    for name, sec in sorted(out["fresh_stage_s"].items(), key=lambda kv: -kv[1]):
        print(f"  {sec:8.1f} s  {name}")
    out["fresh_family_s"] = family_shares(out["fresh_stage_s"], work / "params.yaml")
    for name, sec in sorted(out["fresh_family_s"].items(), key=lambda kv: -kv[1]):
        print(f"  share {sec:8.1f} s  {name}")

    if args.fresh_only:
        if args.json:
            args.json.write_text(json.dumps(out, indent=2) + "\n")
        return
    total, stages = run(act + "dvc repro", work, logs / "repro-noop.log")
    out["noop"] = {"s": round(total, 1), "ran": [s for _, s in stages]}
    print(f"dvc repro again: {total:.1f} s, ran {out['noop']['ran']}", flush=True)

    params = work / "params.yaml"
    text = params.read_text()
    assert PAPER_KEY[0] in text, "benchmark: the profiles.paper key to change is not in params.yaml"
    params.write_text(text.replace(*PAPER_KEY, 1))
    total, stages = run(act + "dvc repro", work, logs / "repro-paper-key.log")
    out["paper_key"] = {"s": round(total, 1), "ran": [s for _, s in stages]}
    print(f"dvc repro after a profiles.paper key: {total:.1f} s, ran {out['paper_key']['ran']}", flush=True)
    params.write_text(text)
    run(act + "dvc repro", work, logs / "repro-restore.log")

    family = work / FAMILY_FILE
    family.write_text(family.read_text() + "\n\nBENCHMARK_EDIT = True\n")
    total, stages = run(act + "dvc repro", work, logs / "repro-family-edit.log")
    out["family_edit"] = {"s": round(total, 1), "ran": [s for _, s in stages],
                          "stage_s": shares(total, stages)}
    print(f"dvc repro after editing {FAMILY_FILE}: {total:.0f} s, ran {out['family_edit']['ran']}", flush=True)

    if args.json:
        args.json.write_text(json.dumps(out, indent=2) + "\n")
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
