"""Coverage protocol (task ``plan``): one attempt per (problem, seed), every plan validated.

DESIGN.md "Contracts": a plan counts as solved only when the independent validator
(unified-planning's sequential plan validator, :mod:`planarena.core.validation`) accepts it; the
method's own simulator never decides coverage. A method that raises is recorded as outcome
``error`` with the exception text, never a crashed stage.

The attempts are independent units: they run through :func:`planarena.runner.executor.run_units`
(``jobs`` processes) and come back in order, so the records file is the same for any ``jobs``.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from planarena.core.problemset import ProblemEntry
from planarena.core.records import ResultRecord
from planarena.core.validation import VALIDATOR_NAME, validate_plan
from planarena.methods.base import Attempt, PlanningTask
from planarena.runner.executor import run_units

if TYPE_CHECKING:
    from planarena.runner.stages import EvalContext

TASK = "plan"


def run(ctx: "EvalContext") -> int:
    """Attempt every problem of the method's coverage splits with every seed not yet recorded;
    write one :class:`ResultRecord` per attempt. Returns the number of records written."""
    method, ps = ctx.method, ctx.problems
    splits = method.config.get("splits") or ctx.settings["splits"]
    time_limit = float(method.config.get("time_limit", ctx.settings["time_limit"]))
    todo: list[tuple[ProblemEntry, int]] = [
        (e, seed) for e in ps.entries if e.split in splits for seed in ctx.seeds
        if (TASK, e.domain, e.split, e.problem, seed) not in ctx.done
    ]
    print(f"evaluate {method.name}: {len(todo)} plan attempts to run")
    failed = ctx.train_info.get("status", "ok") != "ok"

    def attempt(item: tuple[ProblemEntry, int]) -> dict:
        entry, seed = item
        if failed:
            res, elapsed = Attempt("error", failure_reason=f"training failed: {ctx.train_info.get('reason')}"), 0.0
        else:
            task = PlanningTask(entry, ps.domain_file(entry.domain), ps.problem_file(entry), time_limit)
            start = time.perf_counter()
            try:
                res = method.solve(task, seed)
            except Exception as exc:  # an ordinary failure of the method is an outcome
                res = Attempt("error", failure_reason=f"{type(exc).__name__}: {exc}")
            elapsed = time.perf_counter() - start
        return record(ctx, entry, seed, res, elapsed).to_dict()

    jobs = ctx.jobs if method.parallel else 1
    n = 0
    for rec in run_units(attempt, todo, jobs=jobs, desc=f"evaluate {method.name}"):
        ctx.writer.write(rec)
        n += 1
    return n


def record(ctx: "EvalContext", entry: ProblemEntry, seed: int, res: Attempt, elapsed: float) -> ResultRecord:
    """The result record of one attempt; a claimed plan is validated here (unified-planning)."""
    method, ps = ctx.method, ctx.problems
    validated, reason, by = False, None, None
    if res.outcome == "solved" and res.plan is not None:
        verdict = validate_plan(ps.domain_file(entry.domain), ps.problem_file(entry), res.plan)
        validated, reason, by = verdict.valid, verdict.reason, VALIDATOR_NAME
    return ResultRecord(
        method=method.name,
        family=method.family,
        domain=entry.domain,
        split=entry.split,
        problem=entry.problem,
        seed=seed,
        outcome=res.outcome,
        plan_length=len(res.plan) if res.plan is not None else None,
        # a planner's reported cost when it gives one, else unit cost (every built-in domain is unit-cost)
        plan_cost=float(res.extra.get("cost") or len(res.plan)) if res.plan is not None else None,
        validated=validated,
        validated_by=by,
        validator_reason=reason,
        wall_time=round(res.wall_time if res.wall_time is not None else elapsed, 4),
        peak_memory_mb=res.peak_memory_mb,
        failure_reason=res.failure_reason,
        size=entry.size,
        objects=entry.objects,
        config_hash=ctx.fingerprint,
        plan=res.plan,
        extra={"task": TASK, "tasks": sorted(method.tasks), **ctx.train_facts, **res.extra},
    )
