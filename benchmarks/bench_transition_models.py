"""Training time and decode-step latency of the transition models (state-centric paper, G.2).

Synthetic WL-like data of realistic size (defaults: D=500, ~3000 train transitions in ~150
trajectories of 10-30 steps, ~600 validation transitions). Columns of the histogram are of three
kinds, as in WL colour histograms of STRIPS states:

* static colours (``--static``, default 55%): counts that depend on the instance size but never
  change along a trajectory (their ``Delta`` columns are all zero: constant targets in delta mode);
* dynamic colours (``--dynamic``, default 30%): changed by actions; each of 40 action patterns
  adds/removes 1 on 4-8 of them; the pattern at step t is a function of the goal and of a step
  counter colour, so the dynamics is learnable from ``[phi(s_t), phi(g)]``;
* goal-only colours (the rest): zero in every state, non-zero in goals (constant targets in both
  modes).

One line per configuration: ``model mode strategy | fit ... s | rounds/epochs | size | val loss |
step(B=1) ... ms | step(B=3) ... ms``. ``step`` is :meth:`TransitionModel.step` on B beams (the
decoder's call; B=3 is the paper's beam width), mean over ``--step-calls`` calls after a warm-up,
recurrent state carried for the LSTM. ``--ablation-rounds N`` adds XGBoost fits capped at N rounds
with and without ``drop_constant_targets`` to measure what dropping constant outputs saves.

Example::

    python benchmarks/bench_transition_models.py                       # everything, Table 6 sizes
    python benchmarks/bench_transition_models.py --only xgb --rounds 200 --dim 1000
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

from planarena.methods.state_centric.lstm import LSTMTransitionModel
from planarena.methods.state_centric.xgb import XGBTransitionModel


def synthetic(n_traj: int, dim: int, seed: int, static: float, dynamic: float,
              n_goals: int = 20, n_patterns: int = 40) -> list[tuple[np.ndarray, np.ndarray]]:
    """``n_traj`` trajectories ``(states (T+1, dim), goal (dim,))`` of WL-like count histograms."""
    structure = np.random.default_rng(12345)  # the "domain": shared by train and validation sets
    n_static, n_dyn = int(static * dim), int(dynamic * dim)
    cols = structure.permutation(dim)
    st_cols, dyn_cols, goal_cols = cols[:n_static], cols[n_static:n_static + n_dyn], cols[n_static + n_dyn:]
    counter = dyn_cols[0]
    st_rate = structure.uniform(0.1, 2.0, n_static)
    patterns = []
    for _ in range(n_patterns):
        k = int(structure.integers(4, 9))
        idx = structure.choice(dyn_cols[1:], size=k, replace=False)
        patterns.append((idx, structure.choice([-1.0, 1.0], size=k)))
    goal_base = structure.uniform(0, 1, (n_goals, dim)) * (structure.uniform(size=(n_goals, dim)) < 0.3)
    goal_plan = structure.integers(0, n_patterns, (n_goals, 8))
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n_traj):
        n = int(rng.integers(4, 13))  # instance size (objects)
        gid = int(rng.integers(n_goals))
        s = np.zeros(dim, np.float32)
        s[st_cols] = rng.poisson(st_rate * n)
        s[dyn_cols] = rng.poisson(2.0, n_dyn) + 8  # keep counts positive under +-1 moves
        s[counter] = 0
        goal = np.round(goal_base[gid] * n * 3).astype(np.float32)
        goal[goal_cols] += 1 + (gid % 3)
        states = [s]
        for _ in range(int(rng.integers(10, 31))):
            cur = states[-1].copy()
            idx, sign = patterns[goal_plan[gid, int(cur[counter]) % 8]]
            cur[idx] += sign
            cur[counter] += 1
            states.append(cur)
        out.append((np.stack(states), goal))
    return out


def step_latency(model, data, batch: int, calls: int) -> float:
    """Mean seconds per ``step`` call on ``batch`` beams (recurrent state carried and re-selected)."""
    states = np.concatenate([s for s, _ in data])[: calls + batch]
    goal = data[0][1]
    rec = model.initial_state(batch)
    for i in range(5):  # warm-up
        _, rec = model.step(states[i:i + batch], goal, rec)
    rec = model.initial_state(batch)
    t0 = time.perf_counter()
    for i in range(calls):
        _, rec = model.step(states[i:i + batch], goal, rec)
        rec = model.select(rec, list(range(batch)))
    return (time.perf_counter() - t0) / calls


def run(label: str, model, train, val, args) -> None:
    t0 = time.perf_counter()
    facts = model.fit(train, val, seed=args.seed)
    fit_s = time.perf_counter() - t0
    if isinstance(model, LSTMTransitionModel):
        progress = f"epochs {facts['epochs_run']} (best {facts['best_epoch']}, {fit_s / facts['epochs_run']:.2f} s/epoch)"
        size = f"params {facts['parameters']:,}"
    else:
        per = fit_s / max(facts["rounds_run"], 1)
        progress = f"rounds {facts['rounds_run']} (best {facts['best_rounds']}, {per:.3f} s/round)"
        size = (f"nodes {facts['tree_nodes']:,} in {facts['trees']:,} trees, "
                f"outputs fitted {facts['targets_fitted']}/{facts['dim']}")
    stop = "budget" if facts["stopped_by_budget"] else ("early" if facts["stopped_early"] else "max")
    b1 = step_latency(model, val, 1, args.step_calls) * 1e3
    b3 = step_latency(model, val, 3, args.step_calls) * 1e3
    print(f"{label:<44} | fit {fit_s:8.2f} s | {progress}, stop {stop} | {size} | val {facts['val_loss_kind']} "
          f"{facts['best_val_loss']:.4g} | step(B=1) {b1:.3f} ms | step(B=3) {b3:.3f} ms", flush=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dim", type=int, default=500)
    ap.add_argument("--train-trajectories", type=int, default=150, help="~20 transitions each")
    ap.add_argument("--val-trajectories", type=int, default=30)
    ap.add_argument("--static", type=float, default=0.55)
    ap.add_argument("--dynamic", type=float, default=0.30)
    ap.add_argument("--only", choices=["lstm", "xgb"], default=None)
    ap.add_argument("--modes", default="state,delta")
    ap.add_argument("--strategies", default=",".join(XGBTransitionModel.STRATEGIES))
    ap.add_argument("--max-epochs", type=int, default=250, help="LSTM (Table 6: 250)")
    ap.add_argument("--rounds", type=int, default=1000, help="XGBoost (Table 6: 1000)")
    ap.add_argument("--budget", type=float, default=None,
                    help="time_budget_s per fit (seconds; default none): the fit stops after the first "
                         "epoch/round past it, so s/epoch and s/round stay measurable on slow CPUs")
    ap.add_argument("--ablation-rounds", type=int, default=0,
                    help="also fit XGBoost for this many rounds with/without dropping constant targets")
    ap.add_argument("--threads", type=int, default=os.cpu_count(), help="torch threads / xgboost nthread")
    ap.add_argument("--step-calls", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)

    train = synthetic(args.train_trajectories, args.dim, 1, args.static, args.dynamic)
    val = synthetic(args.val_trajectories, args.dim, 2, args.static, args.dynamic)
    n_tr = sum(len(s) - 1 for s, _ in train)
    n_va = sum(len(s) - 1 for s, _ in val)
    print(f"# D={args.dim}, train {len(train)} trajectories / {n_tr} transitions, val {len(val)} / {n_va}; "
          f"threads {args.threads} of {os.cpu_count()} CPUs; load average {os.getloadavg()[0]:.2f}; "
          f"python {sys.version.split()[0]}", flush=True)
    modes = args.modes.split(",")
    strategies = args.strategies.split(",")
    if args.only in (None, "lstm"):
        for mode in modes:
            model = LSTMTransitionModel(mode=mode, max_epochs=args.max_epochs, n_threads=args.threads,
                                        time_budget_s=args.budget)
            run(f"lstm {mode}", model, train, val, args)
    if args.only in (None, "xgb"):
        for strategy in strategies:
            for mode in modes:
                model = XGBTransitionModel(mode=mode, multi_strategy=strategy, rounds=args.rounds,
                                           n_jobs=args.threads, time_budget_s=args.budget)
                run(f"xgb {mode} {strategy}", model, train, val, args)
        if args.ablation_rounds:
            for strategy in strategies:
                for mode in modes:
                    for drop in (True, False):
                        model = XGBTransitionModel(mode=mode, multi_strategy=strategy, rounds=args.ablation_rounds,
                                                   n_jobs=args.threads, drop_constant_targets=drop)
                        run(f"xgb {mode} {strategy} drop={drop} cap={args.ablation_rounds}", model, train, val, args)
    print(f"# done; load average {os.getloadavg()[0]:.2f}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
