"""Successor-set Hit@k protocol (task ``rank_successors``, the state-centric paper's Hit@k).

Along each reference trajectory of the suite (teacher forcing), the method ranks every successor
of the current state (pymimir successor generation) and is scored on where the true next state
lands (:meth:`planarena.methods.base.Method.rank`). One record per (trajectory, seed), with
``extra.task = rank_successors`` and ``extra.protocol = successor_set``; splits are the method's
``rank_splits`` (default: every evaluation split but train).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from tqdm import tqdm

from planarena.core.records import ResultRecord
from planarena.core.trajectories import load_trajectories

if TYPE_CHECKING:
    from planarena.runner.stages import EvalContext

TASK, PROTOCOL = "rank_successors", "successor_set"


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
    n = 0
    for traj, seed in tqdm(todo, desc=f"rank successors {method.name}"):
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
                   **ctx.train_facts, **hits},
        ).to_dict())
        n += 1
    return n
