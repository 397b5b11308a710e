"""Render ``reports/cpu-vs-gpu/README.md`` from the JSON files the device run wrote there:
``dias_cuda.json`` / ``dias_cpu1.json`` (:mod:`bench_dias`) and ``rgnn_cuda.json`` /
``rgnn_cpu1.json`` (:mod:`bench_rgnn_episode`), GPU against one core of the same machine.

Example::

    python benchmarks/cpu_vs_gpu.py reports/cpu-vs-gpu
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

HEAD = """# CPU vs GPU, one machine

Written by `benchmarks/cpu_vs_gpu.py` from the JSON files beside it (the benchmark scripts' own
output). One {gpu} machine lent to a session; the CPU rows use one core of the same machine
(`--threads 1`).

| what | GPU | one CPU core | GPU speed-up |
|---|---|---|---|
"""

TAIL = """
Commands (repository root; `B`: `ipc2023-learning/blocksworld`, its domain file and training problems
`easy/p01`-`p08`; pymimir, pymimir-rgnn and pymimir-rl installed):

    python benchmarks/bench_dias.py --objects 5 10 20 40 --steps 20 --device cuda --json dias_cuda.json
    python benchmarks/bench_dias.py --objects 5 10 20 40 --steps 5 --threads 1 --json dias_cpu1.json
    python benchmarks/bench_rgnn_episode.py --domain B/domain.pddl --problems B/p0*.pddl --devices cuda --episodes 2 --json rgnn_cuda.json
    python benchmarks/bench_rgnn_episode.py --domain B/domain.pddl --problems B/p0*.pddl --devices cpu --threads 1 --episodes 1 --json rgnn_cpu1.json
"""


def render(folder: Path) -> str:
    """The page's markdown from the four JSON files in ``folder``.

    Raises:
        FileNotFoundError: a JSON file is missing.
    """
    load = lambda name: json.loads((folder / name).read_text())  # noqa: E731
    dg, dc, rg, rc = (load(f) for f in ("dias_cuda.json", "dias_cpu1.json", "rgnn_cuda.json", "rgnn_cpu1.json"))
    g, c = rg["rows"][0], rc["rows"][0]
    cfg = dg["config"]
    rows = []
    cpu = {r["objects"]: r for r in dc["rows"]}
    for r in dg["rows"]:
        if r["objects"] in cpu:
            sg, sc = 1 / r["steps_per_s"], 1 / cpu[r["objects"]]["steps_per_s"]
            rows.append(f"| DIAS names-only training step, batch {cfg['batch']}, M = {cfg['slots']}, "
                        f"O = {r['objects']} objects | {sg:.3f} s | {sc:.3f} s | {sc / sg:.1f}x |")
    rcfg = rg["config"]
    rows.append(f"| R-GNN {rcfg['kind'].upper()}-{rcfg['encoding'].upper()} DQN episode ({rcfg['layers']} layers x "
                f"{rcfg['embedding']}, {rcfg['train_steps']} steps x batch {rcfg['batch']}, {rcfg['rollouts']} rollouts, "
                f"{len(rcfg['problems'])} problems) | {g['s_per_episode']:.1f} s | {c['s_per_episode']:.1f} s | "
                f"{c['s_per_episode'] / g['s_per_episode']:.1f}x |")
    return HEAD.format(gpu=g["gpu"]) + "\n".join(rows) + "\n" + TAIL


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", type=Path)
    args = ap.parse_args()
    (args.folder / "README.md").write_text(render(args.folder))


if __name__ == "__main__":
    main()
