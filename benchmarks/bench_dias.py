"""DIAS throughput as the object count grows: training steps per second and slack-row Sinkhorn time.

Synthetic transitions of one instance with ``O`` objects (defaults: O in 5, 10, 20, 40, 80; R = 6
predicates, half unary and half binary; A = 3 action names; batch B = 200; M = 5 slots; d = 32,
3 R-GCN layers; action names only, i.e. the full pipeline: graph, R-GCN, Sinkhorn, projections,
PCGrad). States are random: each unary atom true with probability 0.3, each binary relation about 2
atoms per object; the successor flips about 3 atoms. Nothing is learned (the numbers are speed only).

Columns: ``steps/s`` (training steps of :func:`planarena.methods.dias.train.train`, after 2 warm-up
steps), ``sinkhorn fwd ms`` and ``fwd+bwd ms`` (one :func:`sinkhorn_slack` call on (B, M, O)
N(0, 1) logits with the training defaults T_max = 100, epsilon = 1e-5; mean over ``--calls``).

Example::

    python benchmarks/bench_dias.py                        # the table
    python benchmarks/bench_dias.py --objects 5 10 --json out.json --threads 1
    python benchmarks/bench_dias.py --device cuda
"""

from __future__ import annotations

import argparse
import json
import time

import torch

from planarena.methods.dias.model import Vocab, sinkhorn_slack
from planarena.methods.dias.train import DiasConfig, TransitionData, train


def synthetic(n: int, O: int, R: int, A: int, M: int, seed: int) -> tuple[Vocab, TransitionData]:
    g = torch.Generator().manual_seed(seed)
    vocab = Vocab(tuple((f"p{r}", 1 if r < R // 2 else 2) for r in range(R)), tuple((f"a{a}", None) for a in range(A)))
    X = torch.zeros(n, R, O, O)
    eye = torch.eye(O, dtype=torch.bool)
    for r in range(R):
        if r < R // 2:
            X[:, r][:, eye] = (torch.rand(n, O, generator=g) < 0.3).float()
        else:
            X[:, r] = (torch.rand(n, O, O, generator=g) < min(1.0, 2.0 / O)).float()
    Y = X.clone()
    flat = Y.view(n, -1)
    for _ in range(3):
        idx = torch.randint(R * O * O, (n,), generator=g)
        flat[torch.arange(n), idx] = 1 - flat[torch.arange(n), idx]
    action = torch.randint(A, (n,), generator=g)
    return vocab, TransitionData(X, Y, action, torch.full((n, M), -1, dtype=torch.long))


def _sync(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def sinkhorn_ms(B: int, M: int, O: int, calls: int, backward: bool, device: str = "cpu") -> float:
    g = torch.Generator().manual_seed(0)
    C = torch.randn(B, M, O, generator=g).to(device).requires_grad_(backward)
    sinkhorn_slack(C, 100, 1e-5)
    _sync(device)
    start = time.perf_counter()
    for _ in range(calls):
        S = sinkhorn_slack(C, 100, 1e-5)
        if backward:
            S.sum().backward()
    _sync(device)
    return 1000 * (time.perf_counter() - start) / calls


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--objects", type=int, nargs="+", default=[5, 10, 20, 40, 80])
    ap.add_argument("--predicates", type=int, default=6)
    ap.add_argument("--actions", type=int, default=3)
    ap.add_argument("--batch", type=int, default=200)
    ap.add_argument("--slots", type=int, default=5)
    ap.add_argument("--steps", type=int, default=5, help="timed training steps per O")
    ap.add_argument("--calls", type=int, default=10, help="Sinkhorn calls per O")
    ap.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default)")
    ap.add_argument("--device", default="cpu", help="cpu | cuda")
    ap.add_argument("--json", help="also write the rows here")
    args = ap.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    rows = []
    print(f"DIAS, names-only, R={args.predicates} A={args.actions} B={args.batch} M={args.slots} d=32 layers=3, "
          f"device={args.device}, torch threads={torch.get_num_threads()}")
    print(f"{'O':>4} | {'steps/s':>8} | {'s/step':>7} | {'sinkhorn fwd ms':>15} | {'fwd+bwd ms':>10}")
    for O in args.objects:
        vocab, data = synthetic(max(4 * args.batch, 400), O, args.predicates, args.actions, args.slots, seed=O)
        cfg = DiasConfig(observation="names", slots=args.slots, batch=args.batch, steps=2, eval_every=10**9,
                         device=args.device)
        train(cfg, vocab, data, None, seed=0, progress=False)                  # warm-up (imports, allocator)
        cfg = DiasConfig(observation="names", slots=args.slots, batch=args.batch, steps=args.steps, eval_every=10**9,
                         device=args.device)
        _, facts = train(cfg, vocab, data, None, seed=0, progress=False)
        sps = facts["steps_run"] / facts["seconds"]
        fwd = sinkhorn_ms(args.batch, args.slots, O, args.calls, False, args.device)
        both = sinkhorn_ms(args.batch, args.slots, O, args.calls, True, args.device)
        rows.append({"objects": O, "steps_per_s": sps, "sinkhorn_fwd_ms": fwd, "sinkhorn_fwd_bwd_ms": both})
        print(f"{O:>4} | {sps:>8.2f} | {1 / sps:>7.3f} | {fwd:>15.2f} | {both:>10.2f}", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"config": {k: v for k, v in vars(args).items() if k != "json"}, "threads": torch.get_num_threads(), "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
