"""Successor-set Hit@k protocol (task ``rank_successors``, the state-centric paper's Hit@k).

Along each reference trajectory of the suite (teacher forcing), the method ranks every successor
of the current state (pymimir successor generation) and is scored on where the true next state
lands (:meth:`planarena.methods.base.Method.rank`). One record per (trajectory, seed), with
``extra.task = rank_successors`` and ``extra.protocol = successor_set``; splits are the method's
``rank_splits`` (default: every evaluation split but train).

Every record also carries the trajectory's floor, computed here from the PDDL alone (so it is the
same for every method): ``hit_chance@k``, the Hit@k of a uniform random ranker (mean over steps of
min(k, c) / c for c distinct successor states, as the pool protocol's ``hit_chance@k``),
``successors`` (mean c) and ``at_most@k`` (the fraction of steps with c <= k, where Hit@k is 1 for
any ranker). ``reference_plan`` says whether the trajectory follows an optimal (A*+LM-cut) plan.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import numpy as np
from tqdm import tqdm

from planarena.core.pddl import load_problem, replay
from planarena.core.records import ResultRecord
from planarena.core.trajectories import Trajectory, load_trajectories
from planarena.protocols.pool import uniform_hit_rate

if TYPE_CHECKING:
    from planarena.protocols.context import EvalContext

TASK, PROTOCOL = "rank_successors", "successor_set"

#: the k of the floor's ``chance@k`` / ``at_most@k`` (the Hit@k the methods report)
FLOOR_KS = (1, 3, 5)


def successor_floor(traj: Trajectory, domain_file, problem_file, ks=FLOOR_KS) -> dict:
    """The uniform-random-ranker floor of one reference trajectory
    (docs/concepts.md#floors-and-ceilings).

    For each step t with c_t distinct successor states of s_t (pymimir), a ranker that orders them
    uniformly at random puts the true s_{t+1} in its top k with probability min(k, c_t) / c_t.
    Returns ``hit_chance@k`` (the mean of that over steps,
    :func:`planarena.protocols.pool.uniform_hit_rate`, comparable with the methods' ``hit@k``),
    ``successors`` (mean c_t) and ``at_most@k`` (fraction of steps with c_t <= k); ``{}`` for a
    trajectory without steps.
    """
    problem = load_problem(str(domain_file), str(problem_file))
    states, _ = replay(problem, list(traj.actions), source=str(problem_file))
    counts = np.asarray([len({a.apply(s) for a in s.generate_applicable_actions()}) for s in states[:-1]])
    if not len(counts):
        return {}
    out = {f"hit_chance@{k}": uniform_hit_rate(k, counts) for k in ks}
    out.update({f"at_most@{k}": round(float(np.mean(counts <= k)), 6) for k in ks})
    out["successors"] = round(float(np.mean(counts)), 4)
    return out


def run(ctx: "EvalContext") -> int:
    """Rank the successors along every reference trajectory not yet recorded; returns the number
    of records written."""
    method, ps = ctx.method, ctx.problems
    splits = method.config.get("rank_splits") or [s for s in ctx.settings["splits"] if s != "train"]
    todo = [
        (traj, seed)
        for domain in ps.domains
        for split in splits
        for traj in load_trajectories(method.layout.trajectories, domain, split)
        for seed in ctx.seeds
        if (TASK, domain, split, traj.problem, seed) not in ctx.done
    ]
    entries = {e.key: e for e in ps.entries}
    floors: dict[tuple, dict] = {}
    n = 0
    for traj, seed in tqdm(todo, desc=f"rank successors {method.name}"):
        key = (traj.domain, traj.split, traj.problem)
        if key not in floors:
            try:
                floors[key] = successor_floor(traj, ps.domain_file(traj.domain), ps.root / traj.problem_file)
            except Exception:  # noqa: BLE001 - the floor is context; the method's record still counts
                floors[key] = {}
        start = time.perf_counter()
        try:
            hits, outcome, reason = method.rank(traj, seed), "solved", None
        except Exception as exc:  # a failure on one trajectory is an outcome
            hits, outcome, reason = {}, "error", f"{type(exc).__name__}: {exc}"
        e = entries.get((traj.domain, traj.split, traj.problem))
        ctx.writer.write(ResultRecord(
            method=method.name, family=method.family, domain=traj.domain, split=traj.split,
            problem=traj.problem, seed=seed, outcome=outcome, failure_reason=reason,
            wall_time=round(time.perf_counter() - start, 4), size=e.size if e else None,
            objects=e.objects if e else None, config_hash=ctx.fingerprint,
            extra={"task": TASK, "protocol": PROTOCOL, "reference_plan": traj.plan_source,
                   **floors[key], **ctx.record_facts(traj.domain, seed), **hits},
        ).to_dict())
        n += 1
    return n
