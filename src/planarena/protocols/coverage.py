"""Coverage protocol (task ``plan``): one attempt per (problem, seed), every plan validated.

A plan counts as solved only when the independent validator (:mod:`planarena.core.validation`:
PDDL semantics on the ``pddl`` package's parse, never pymimir) accepts it; the method's own simulator never decides
coverage (docs/concepts.md#tasks). A method that raises is recorded as outcome ``error`` with the
exception text, never a crashed stage.

The attempts are independent units: they run through the executor's workers
(:func:`planarena.core.executor.run_units_as_completed`); each unit's records are written as it
finishes (a run stopped mid-row keeps every finished attempt) and put in unit order when the row
ends, so the records file is the same for any executor and any ``jobs``; an attempt whose worker
keeps dying is an ``error`` record with the reason. A
method with ``lockstep = True`` gets units of problems of one (domain, split, seed), at most
``evaluation.lockstep_batch`` each (:func:`lockstep_units`), each unit one
:meth:`~planarena.methods.base.Method.solve_batch` call (e.g. lockstep beam decoding).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from planarena.core.problemset import ProblemEntry
from planarena.core.records import ResultRecord, stop_of
from planarena.core.validation import VALIDATOR_NAME, validate_plan
from planarena.methods.base import Attempt, PlanningTask

if TYPE_CHECKING:
    from planarena.protocols.context import EvalContext

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

    def task_of(entry: ProblemEntry) -> PlanningTask:
        return PlanningTask(entry, ps.domain_file(entry.domain), ps.problem_file(entry), time_limit)

    def attempt(item: tuple[ProblemEntry, int]) -> dict:
        entry, seed = item
        if failed:
            res, elapsed = Attempt("error", failure_reason=f"training failed: {ctx.train_info.get('reason')}"), 0.0
        else:
            start = time.perf_counter()
            try:
                res = method.solve(task_of(entry), seed)
            except Exception as exc:  # an ordinary failure of the method is an outcome
                res = Attempt("error", failure_reason=f"{type(exc).__name__}: {exc}")
            elapsed = time.perf_counter() - start
        return record(ctx, entry, seed, res, elapsed).to_dict()

    def attempt_batch(items: list[tuple[ProblemEntry, int]]) -> list[dict]:
        """A lockstep method's unit: every problem of one (domain, split) for one seed."""
        if failed:
            return [attempt(item) for item in items]
        seed = items[0][1]
        start = time.perf_counter()
        try:
            results = method.solve_batch([task_of(e) for e, _ in items], seed)
            if len(results) != len(items):
                raise RuntimeError(f"solve_batch returned {len(results)} attempts for {len(items)} tasks")
        except Exception as exc:
            results = [Attempt("error", failure_reason=f"{type(exc).__name__}: {exc}") for _ in items]
        share = (time.perf_counter() - start) / len(items)
        return [record(ctx, e, s, res, share).to_dict() for (e, s), res in zip(items, results)]

    def lost(item: tuple[ProblemEntry, int], reason: str) -> dict:
        """The record of an attempt whose worker kept dying (executor retries exhausted)."""
        return record(ctx, item[0], item[1], Attempt("error", failure_reason=reason), 0.0).to_dict()

    where = dict(jobs=ctx.jobs, parallel=method.parallel, device=method.unit_device())
    if method.lockstep:
        # shards are dealt from the suite's order (below), then dispatched largest first
        units = lockstep_units(todo, int(ctx.settings.get("lockstep_batch") or 0))
        # a shard decodes up to `lockstep_batch` problems in lockstep in about a second at the
        # default sizes: two of them do not pay for a cluster's start-up (docs/scaling.md)
        return write_as_completed(ctx, attempt_batch, units, f"evaluate {method.name} (lockstep)",
                                  lambda items, reason: [lost(item, reason) for item in items], min_units=3, **where)
    # largest problems first (PDDL objects; a stable sort, so the order is the same for any
    # executor): the longest attempts start while the short ones fill the other workers, instead of
    # one worker finishing the largest problem alone at the end of the row
    todo = sorted(todo, key=lambda item: -item[0].objects)
    return write_as_completed(ctx, lambda item: [attempt(item)], todo, f"evaluate {method.name}",
                              lambda item, reason: [lost(item, reason)], **where)


def write_as_completed(ctx: "EvalContext", fn, units: list, desc: str, on_failure, **where) -> int:
    """Run ``fn`` (unit -> list of record dicts) over ``units`` through the executor, writing each
    unit's records as soon as it finishes (a stopped run keeps every finished unit, however slow
    the units before it), then putting the records of this call in unit order
    (:meth:`~planarena.core.io.JsonlWriter.rewrite_tail`), so that the file is the same for any
    executor and any ``jobs``. Returns the number of records written."""
    from planarena.core.executor import run_units_as_completed

    start = ctx.writer.tell()
    indexed = list(enumerate(units))
    done: list[tuple[int, list[dict]]] = []
    for (k, _), recs in run_units_as_completed(lambda item: fn(item[1]), indexed, desc=desc,
                                                on_failure=lambda item, reason: on_failure(item[1], reason), **where):
        for rec in recs:
            ctx.writer.write(rec)
        done.append((k, recs))
    ordered = [rec for _, recs in sorted(done, key=lambda d: d[0]) for rec in recs]
    ctx.writer.rewrite_tail(start, ordered)
    return len(ordered)


def lockstep_units(todo: list[tuple[ProblemEntry, int]], batch: int) -> list[list[tuple[ProblemEntry, int]]]:
    """A lockstep method's units: the attempts grouped by (domain, split, seed), each group dealt
    round-robin into ``ceil(len / batch)`` shards of at most ``batch`` attempts (``batch`` <= 0:
    one shard per group), in the order of ``todo`` (the suite's); the shards are then ordered by
    their largest problem (PDDL objects), largest first, so the longest shards start first. Shards
    balance large and small problems and give ``jobs`` processes work; they do not depend on
    ``jobs``, so the records come in the same order for any ``jobs``. A shard's composition must not
    change with anything else either: a batched forward pass's floats depend on the batch (an
    untrained R-GNN's near-tied Q-values then pick another action), so shards are dealt from the
    suite's order, and only their dispatch order follows size."""
    groups: dict[tuple, list] = {}
    for entry, seed in todo:
        groups.setdefault((entry.domain, entry.split, seed), []).append((entry, seed))
    units = []
    for items in groups.values():
        n = max(1, -(-len(items) // batch)) if batch > 0 else 1
        units.extend(items[k::n] for k in range(n))
    return sorted(units, key=lambda shard: -max(e.objects for e, _ in shard))   # stable


def record(ctx: "EvalContext", entry: ProblemEntry, seed: int, res: Attempt, elapsed: float) -> ResultRecord:
    """The result record of one attempt; a claimed plan is validated here (:func:`validate_plan`,
    each problem parsed once per process)."""
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
        extra={"task": TASK, "tasks": sorted(method.tasks), **ctx.record_facts(entry.domain, seed), **res.extra,
               **({"stop": stop_of(res.outcome, res.failure_reason, res.extra)}
                  if res.outcome not in ("solved", "not_applicable") else {})},
    )
