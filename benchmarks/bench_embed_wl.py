"""Throughput of the ``embed_wl`` stage (wlplan ILG WL histograms), in states per second.

Two modes:

* ``--problems DIR --trajectories DIR``: run the stage on an existing problem set (e.g. ``data/problems``
  and ``data/trajectories``), writing into a temporary embeddings folder;
* default: build a synthetic Blocksworld set in a temporary folder: problems with ``--blocks`` blocks
  (train uses 3-4 blocks), trajectories made by seeded random walks of ``--steps`` steps replayed with
  pymimir (valid transitions; they need not be plans for an embedding benchmark).

Prints ``embed_wl: N states in S s = X states/s`` for the stage's split embedding (vocabulary
collection excluded, reported separately), then the same for the decoding use case: many small
:meth:`WLEmbedder.embed_states` calls of ``--batch`` states each.

Example::

    python benchmarks/bench_embed_wl.py --problems-per-split 20 --blocks 12 --steps 60
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

from planarena.config import Layout
from planarena.core.io import write_jsonl
from planarena.core.problemset import ProblemEntry
from planarena.core.trajectories import load_trajectories
from planarena.features.wl import WLEmbedder, run_stage

DOMAIN_FILE = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "wl" / "blocksworld-domain.pddl"


def _problem_text(name: str, n: int, rng: random.Random) -> str:
    blocks = [f"b{i}" for i in range(1, n + 1)]
    order = blocks[:]
    rng.shuffle(order)
    goal = " ".join(f"(on {a} {b})" for a, b in zip(order, order[1:]))
    init = " ".join(f"(ontable {b}) (clear {b})" for b in blocks)
    return (
        f"(define (problem {name}) (:domain blocksworld) (:objects {' '.join(blocks)})\n"
        f"  (:init {init} (handempty))\n  (:goal (and {goal})))\n"
    )


def build_synthetic(root: Path, per_split: int, blocks: int, steps: int, seed: int) -> Layout:
    """Write a synthetic Blocksworld problem set and random-walk trajectories under ``root``."""
    import pymimir

    rng = random.Random(seed)
    layout = Layout(root)
    ddir = layout.problems / "blocksworld"
    ddir.mkdir(parents=True)
    shutil.copy(DOMAIN_FILE, ddir / "domain.pddl")
    domain = pymimir.Domain(str(ddir / "domain.pddl"))
    manifest = []
    sizes = {"train": (3, 4), "validation": (3, 4), "extrapolation": (blocks, blocks)}
    for split, (lo, hi) in sizes.items():
        rows = []
        for i in range(per_split):
            n = rng.randint(lo, hi)
            name = f"p-{n}-{i}"
            rel = f"blocksworld/{split}/{name}.pddl"
            path = layout.problems / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(_problem_text(name, n, rng))
            manifest.append(
                ProblemEntry("blocksworld", split, name, rel, "blocks", n, n, seed, "bench").to_dict()
            )
            problem = pymimir.Problem(domain, str(path))
            state = problem.get_initial_state()
            states = [sorted(str(a) for a in state.get_atoms(ignore_static=True))]
            actions = []
            for _ in range(steps):
                applicable = sorted(state.generate_applicable_actions(), key=str)
                action = rng.choice(applicable)
                actions.append(str(action))
                state = action.apply(state)
                states.append(sorted(str(a) for a in state.get_atoms(ignore_static=True)))
            rows.append(
                {"domain": "blocksworld", "split": split, "problem": name, "problem_file": rel,
                 "plan_source": "random_walk", "optimal": False, "actions": actions,
                 "states": states, "static": [], "goal": []}
            )
        write_jsonl(layout.trajectories / "blocksworld" / f"{split}.jsonl", rows)
    write_jsonl(layout.problems / "manifest.jsonl", manifest)
    return layout


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--problems", type=Path, help="existing problem set (data/problems)")
    ap.add_argument("--trajectories", type=Path, help="existing trajectories (data/trajectories)")
    ap.add_argument("--problems-per-split", type=int, default=10)
    ap.add_argument("--blocks", type=int, default=10, help="blocks in the synthetic test split")
    ap.add_argument("--steps", type=int, default=50, help="random-walk length per trajectory")
    ap.add_argument("--batch", type=int, default=8, help="states per call in the decoding mode")
    ap.add_argument("--iterations", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    params = {"embed_wl": {"graph": "ilg", "iterations": args.iterations, "feature_algorithm": "wl"}}

    with tempfile.TemporaryDirectory(prefix="bench_embed_wl_") as tmp:
        tmp = Path(tmp)
        if args.problems or args.trajectories:
            if not (args.problems and args.trajectories):
                ap.error("--problems and --trajectories go together")
            layout = Layout(tmp / "data")
            layout.root.mkdir(parents=True)
            (layout.root / "problems").symlink_to(args.problems.resolve())
            (layout.root / "trajectories").symlink_to(args.trajectories.resolve())
        else:
            t0 = time.perf_counter()
            layout = build_synthetic(
                tmp / "data", args.problems_per_split, args.blocks, args.steps, args.seed
            )
            print(f"(synthetic data built in {time.perf_counter() - t0:.1f} s)", file=sys.stderr)

        t0 = time.perf_counter()
        run_stage(params, layout)
        wall = time.perf_counter() - t0

        n_states = 0
        domains = sorted(p.name for p in (layout.embeddings / "wl").iterdir())
        for d in domains:
            meta = json.loads((layout.embeddings / "wl" / d / "meta.json").read_text())
            n_states += sum(split["states"] for split in meta["splits"].values())
        # meta.json holds no times (a DVC output): the rate is over the stage's wall time,
        # vocabulary collection included
        print(f"embed_wl: {int(n_states)} states in {wall:.2f} s = {n_states / wall:.0f} states/s "
              f"(stage wall time incl. vocabulary collection, {len(domains)} domain(s))")

        # decoding use case: many small batches through WLEmbedder.embed_states
        d = domains[0]
        embedder = WLEmbedder.for_domain(layout, d)
        split = next(s for s in ("extrapolation", "validation", "train")
                     if (layout.trajectories / d / f"{s}.jsonl").exists())
        trajs = load_trajectories(layout.trajectories, d, split)
        calls = [
            (layout.problems / t.problem_file, t.states[i : i + args.batch])
            for t in trajs
            for i in range(0, len(t.states), args.batch)
        ]
        t0 = time.perf_counter()
        n = sum(embedder.embed_states(pf, states).shape[0] for pf, states in calls)
        s = time.perf_counter() - t0
        print(
            f"embed_wl (WLEmbedder, {split}, batches of {args.batch}): "
            f"{n} states in {s:.3f} s = {n / s:.0f} states/s"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
