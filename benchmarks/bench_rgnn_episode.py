"""Seconds per DQN episode of a width-based R-GNN policy (rollouts + optimisation steps), CPU vs GPU.

One episode is what the paper's Section 7 calls one: ``rollouts`` trajectories of the Boltzmann
policy (lookaheads on the CPU, the R-GNN scoring their candidates on ``--device``), then
``train_steps`` optimisation steps of batch ``batch`` (DQN with lifted hindsight relabelling), through
the family's own training code (:func:`planarena.methods.rgnn_policies.train.train_policy`). The
defaults are the paper's sizes: a 30-layer, 32-wide R-GNN, 32 steps x batch 32, 4 rollouts. A first
one-episode call warms up (imports, allocator, the lookahead cache); the timed call then runs
``--episodes`` episodes on the same cache, and the table gives their mean.

Example::

    python benchmarks/bench_rgnn_episode.py --domain D/domain.pddl --problems D/training/easy/p0*.pddl \\
        --devices cpu cuda --threads 1 --json out.json
"""

from __future__ import annotations

import argparse
import json
import time

import torch

from planarena.core.pddl import fresh_problem
from planarena.methods.rgnn_policies.encodings import PolicyNetwork, count_parameters
from planarena.methods.rgnn_policies.lookahead import object_types
from planarena.methods.rgnn_policies.policy import LookaheadCache
from planarena.methods.rgnn_policies.train import TrainConfig, train_policy


def episode_seconds(domain: str, problems: list[str], device: str, args) -> dict:
    """Mean seconds per episode on ``device`` after a one-episode warm-up (the same lookahead cache)."""
    loaded = [(fresh_problem(domain, f), object_types(f, domain)) for f in problems]
    cache = LookaheadCache(args.kind, with_deltas=args.encoding == "ad")
    for p, types in loaded:
        cache.add(p, types)
    torch.manual_seed(0)
    net = PolicyNetwork(loaded[0][0].get_domain(), args.encoding, args.embedding, args.layers).to(device)
    cfg = dict(train_steps=args.train_steps, batch=args.batch, rollouts=args.rollouts, eval_every=10**9,
               lr_episodes=max(1, args.episodes))
    plist = [p for p, _ in loaded]
    train_policy(net, cache, plist, [], TrainConfig(episodes=1, **cfg), 0, args.kind == "flat")
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    start = time.perf_counter()
    res = train_policy(net, cache, plist, [], TrainConfig(episodes=args.episodes, **cfg), 1, args.kind == "flat")
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    seconds = time.perf_counter() - start
    return {"device": device, "episodes": res.episodes_run, "s_per_episode": seconds / max(1, res.episodes_run),
            "s_per_update": seconds / max(1, res.episodes_run * args.train_steps),
            "parameters": count_parameters(net), "status": res.status,
            "gpu": torch.cuda.get_device_name(0) if device.startswith("cuda") else None}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--domain", required=True, help="PDDL domain file")
    ap.add_argument("--problems", nargs="+", required=True, help="training problem files")
    ap.add_argument("--kind", default="aiw", help="lookahead: iw, aiw, baiw, caiw, flat")
    ap.add_argument("--encoding", default="ad", help="ad | ext | aa")
    ap.add_argument("--layers", type=int, default=30)
    ap.add_argument("--embedding", type=int, default=32)
    ap.add_argument("--train-steps", type=int, default=32)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--rollouts", type=int, default=4)
    ap.add_argument("--episodes", type=int, default=3, help="timed episodes per device")
    ap.add_argument("--devices", nargs="+", default=["cpu"], help="cpu and / or cuda")
    ap.add_argument("--threads", type=int, default=0, help="torch CPU threads (0: torch's default)")
    ap.add_argument("--json", help="also write the rows here")
    args = ap.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    print(f"R-GNN {args.kind}/{args.encoding}, {args.layers} layers x {args.embedding}, {args.train_steps} steps x "
          f"batch {args.batch}, {args.rollouts} rollouts, {len(args.problems)} problems, torch threads "
          f"{torch.get_num_threads()}")
    rows = []
    for device in args.devices:
        row = episode_seconds(args.domain, args.problems, device, args)
        rows.append(row)
        print(f"{device:>5} | {row['s_per_episode']:8.2f} s/episode | {row['s_per_update'] * 1000:8.1f} ms/update "
              f"(rollouts included) | {row['episodes']} episodes {row['status']}" + (f" | {row['gpu']}" if row["gpu"] else ""),
              flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"config": {k: v for k, v in vars(args).items() if k != "json"}, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
