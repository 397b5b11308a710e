"""The ``plan`` and ``trajectories`` stages (docs/pipeline.md#stages).

``plan``: every problem of every split gets reference plans from Fast Downward (A*+LM-cut, falling
back to LAMA-first when A* fails: the state-centric paper's Stage 1); every kept plan is checked by
the independent validator. Output::

    data/plans/records.jsonl                      one line per problem (see PlanRecord fields below)
    data/plans/<domain>/<split>/<problem>.plan    the kept plan, when one was found and validated

``trajectories``: each validated plan is replayed with pymimir into s0..sT
(:mod:`planarena.core.trajectories` documents the format). Problems without a validated plan (timeouts,
rejected plans) are excluded from training data and listed in the report.
"""

from __future__ import annotations

import shutil
from functools import partial

from tqdm import tqdm

from planarena.config import Layout, get
from planarena.core.io import read_jsonl, write_jsonl
from planarena.core.pddl import (
    PDDLError,
    atoms_of,
    goal_atoms,
    load_problem,
    replay,
    static_atoms,
)
from planarena.core.problemset import ProblemEntry, ProblemSet
from planarena.core.trajectories import Trajectory, trajectory_file
from planarena.core.validation import VALIDATOR_NAME, validate_plan
from planarena.datasets.planning import PlannerCache, plan_with_fallback
from planarena.core.executor import run_units


def plan_problem(ps: ProblemSet, entry: ProblemEntry, planners: dict, cache: PlannerCache | None) -> dict:
    """Plan one problem with fallback; returns the plan record without the validator verdict."""
    attempts = plan_with_fallback(ps.domain_file(entry.domain), ps.problem_file(entry), planners, cache)
    kept = next((a for a in reversed(attempts) if a.outcome == "solved"), None)
    last = attempts[-1]
    return {
        "domain": entry.domain,
        "split": entry.split,
        "problem": entry.problem,
        "size": entry.size,
        "objects": entry.objects,
        "outcome": kept.outcome if kept else last.outcome,
        "planner": kept.config if kept else None,
        "optimal": bool(kept and kept.config == "astar_lmcut"),
        "cost": kept.cost if kept else None,
        "plan_length": kept.plan_length if kept else None,
        "plan": kept.plan if kept else None,
        "failure_reason": None if kept else last.failure_reason,
        "attempts": [
            {k: a.to_dict()[k] for k in ("config", "outcome", "expansions", "plan_length", "cost", "failure_reason")}
            for a in attempts
        ],
        # measurements that differ between identical runs: the untracked log, not data/plans
        "_timings": [{k: a.to_dict()[k] for k in ("config", "wall_time", "peak_memory_kb", "cached")}
                     for a in attempts],
    }


def run_plan_stage(params: dict, layout: Layout) -> list[dict]:
    """Plan every problem in ``data/problems`` (one executor unit per problem), validate, write ``data/plans``."""
    ps = ProblemSet(layout.problems)
    planners = get(params, "planners")
    cache = PlannerCache(layout.cache / "fd")
    out = layout.plans
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    # `planners.splits` (default: all) limits reference planning, e.g. to train/validation when a
    # large test split only needs evaluation, not reference trajectories
    only = planners.get("splits")
    entries = [e for e in ps.entries if not only or e.split in only]
    # one unit per problem on the executor's workers (each runs Fast Downward as a subprocess)
    records = list(run_units(partial(plan_problem, ps, planners=planners, cache=cache), entries,
                             desc="plan (Fast Downward)"))
    for entry, rec in tqdm(list(zip(entries, records)), desc="validate plans", leave=False):
        rec["validated"], rec["validated_by"], rec["validator_reason"] = False, None, None
        if rec["plan"] is None:
            continue
        verdict = validate_plan(ps.domain_file(entry.domain), ps.problem_file(entry), rec["plan"])
        rec["validated"], rec["validated_by"] = verdict.valid, VALIDATOR_NAME
        rec["validator_reason"] = verdict.reason
        if verdict.valid:
            f = out / entry.domain / entry.split / f"{entry.problem}.plan"
            f.parent.mkdir(parents=True, exist_ok=True)
            f.write_text("\n".join(rec["plan"]) + f"\n; cost = {rec['cost']:g} ({rec['planner']})\n")
    timings = [{"domain": r["domain"], "split": r["split"], "problem": r["problem"], "attempts": r.pop("_timings")}
               for r in records]
    write_jsonl(out / "records.jsonl", records)
    write_jsonl(layout.root / "logs" / "plan.jsonl", timings)
    cached = sum(a["cached"] for t in timings for a in t["attempts"])
    print(f"plan: {cached} of {sum(len(t['attempts']) for t in timings)} planner runs from the cache "
          f"({layout.cache / 'fd'}); wall times in {layout.root / 'logs' / 'plan.jsonl'}")
    _summary("plan", records)
    return records


def _summary(stage: str, records: list[dict]) -> None:
    by: dict[tuple[str, str], list[int]] = {}
    for r in records:
        c = by.setdefault((r["domain"], r["split"]), [0, 0])
        c[0] += 1
        c[1] += int(bool(r.get("validated")))
    for (d, s), (n, ok) in sorted(by.items()):
        print(f"{stage}: {d}/{s}: {ok}/{n} validated plans")


def run_trajectories_stage(params: dict, layout: Layout) -> dict[tuple[str, str], int]:
    """Replay every validated plan with pymimir into ``data/trajectories/<domain>/<split>.jsonl``.

    Returns the number of trajectories per (domain, split). Splits without any validated plan get an
    empty file, so downstream stages see the split and report it as empty.

    Raises:
        PDDLError: a validated plan does not replay in pymimir (a disagreement between the validator
            and pymimir; names problem, step and action).
    """
    ps = ProblemSet(layout.problems)
    plans = {(r["domain"], r["split"], r["problem"]): r for r in read_jsonl(layout.plans / "records.jsonl")}
    out = layout.trajectories
    if out.exists():
        shutil.rmtree(out)
    counts: dict[tuple[str, str], int] = {}
    for (domain, split), entries in ps.by_domain_split().items():
        rows = []
        for e in tqdm(entries, desc=f"replay {domain}/{split}", leave=False):
            rec = plans.get(e.key)
            if not rec or not rec.get("validated"):
                continue
            problem = load_problem(str(ps.domain_file(domain)), str(ps.problem_file(e)))
            states, _ = replay(problem, rec["plan"], source=str(ps.problem_file(e)))
            rows.append(
                Trajectory(
                    domain=domain,
                    split=split,
                    problem=e.problem,
                    problem_file=e.path,
                    plan_source=rec["planner"],
                    optimal=bool(rec["optimal"]),
                    actions=list(rec["plan"]),
                    states=[atoms_of(s) for s in states],
                    static=static_atoms(problem),
                    goal=goal_atoms(problem),
                ).to_dict()
            )
        write_jsonl(trajectory_file(out, domain, split), rows)
        counts[(domain, split)] = len(rows)
        print(f"trajectories: {domain}/{split}: {len(rows)} trajectories, "
              f"{sum(len(r['states']) for r in rows)} states")
    return counts


__all__ = ["run_plan_stage", "run_trajectories_stage", "plan_problem", "PDDLError"]
