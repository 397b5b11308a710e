"""Section "Cost": per method, domain and task, time per problem (geometric mean over the commonly
solved instances), wall time, attempts, and the cost facts methods report in
``extra`` (model size, training and decoding time), each a declared metric of
:mod:`planarena.report.metrics`."""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Iterable

import numpy as np
import pandas as pd

from planarena.core.records import ResultRecord
from planarena.report.markdown import DASH, md_table
from planarena.report.metrics import (
    MIN_TIME_S,
    PARAMETERS,
    TIME,
    TIME_PER_DECISION,
    TIME_PER_STEP,
    TRAIN_TIME,
    TREE_NODES,
    WALL_TIME,
    Metric,
    geometric_mean,
)
from planarena.report.records import latest_records, method_order, record_task

#: ``extra`` metrics shown when a method reports them, in column order.
COST_EXTRA: tuple[Metric, ...] = (PARAMETERS, TREE_NODES, TRAIN_TIME, TIME_PER_STEP, TIME_PER_DECISION)

OWN_TIME_TITLE = "time/problem over own solved, geo-mean (s)"
PLAN_LENGTH_TITLE = "plan length over own solved, mean"


def commonly_solved(records: Iterable[ResultRecord]) -> dict[tuple[str, str], frozenset[str]]:
    """Problems of each (domain, split) solved (and validated) by every ``plan`` method there.

    A method solves a problem when at least one of its seeds did; methods without records in a
    (domain, split) do not constrain it.
    """
    solved: dict[tuple, dict[str, set[str]]] = defaultdict(dict)
    for r in latest_records(records):
        if record_task(r) != "plan":
            continue
        by_method = solved[(r.domain, r.split)].setdefault(r.method, set())
        if r.counts_as_solved:
            by_method.add(r.problem)
    return {
        key: frozenset(set.intersection(*by_method.values())) for key, by_method in solved.items()
    }


def _time_per_problem(recs: Iterable[ResultRecord], keep) -> list[float]:
    """Per (split, problem) with a solved-and-validated attempt that ``keep(record)`` accepts,
    the mean wall time (seconds) of those attempts, in (split, problem) order."""
    times: dict[tuple[str, str], list[float]] = defaultdict(list)
    for r in recs:
        if r.counts_as_solved and keep(r):
            times[(r.split, r.problem)].append(r.wall_time)
    return [float(np.mean(v)) for _, v in sorted(times.items())]


def _numbers(recs: Iterable[ResultRecord], key: str) -> list[tuple[int, float]]:
    """``(seed, extra[key])`` of the records reporting a number under ``key``, in record order."""
    out = []
    for r in recs:
        v = (r.extra or {}).get(key)
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            out.append((r.seed, float(v)))
    return out


def cost_table(records: Iterable[ResultRecord]) -> pd.DataFrame:
    """Cost per (method, domain, task). A method with several tasks (plan and rank_successors)
    gets one row per task, so that the wall times of one task never mix into the other's.

    Columns: ``Task``; ``commonly solved`` (instances over the domain's splits solved by every
    plan method there, see :func:`commonly_solved`); ``time/problem, geo-mean (s)`` (:data:`TIME`:
    per problem, the mean wall time of the method's solved-and-validated attempts, then the
    geometric mean over the commonly solved instances); ``own solved`` and the same time over the
    method's own solved instances (a floor method can empty the common set); ``plan length over own
    solved, mean`` (actions, over its solved-and-validated attempts); ``mean wall time,
    all attempts (s)``; ``attempts``; and, when any record has them, the :data:`COST_EXTRA`
    metrics (aggregated as each declares). The time columns are "–" for tasks other than plan.
    """
    latest = latest_records(records)
    common = commonly_solved(latest)
    extra_present = [m for m in COST_EXTRA if any(m.name in (r.extra or {}) for r in latest)]
    groups: dict[tuple[str, str, str], list[ResultRecord]] = defaultdict(list)
    for r in latest:
        groups[(r.method, r.domain, record_task(r))].append(r)
    order = {m: i for i, m in enumerate(method_order(latest))}
    rows = []
    for method, domain, task in sorted(groups, key=lambda k: (order[k[0]], k[1], k[2])):
        recs = groups[(method, domain, task)]
        row: dict[str, Any] = {"Method": method, "Domain": domain, "Task": task}
        if task == "plan":
            per_problem = _time_per_problem(
                recs, lambda r: r.problem in common.get((r.domain, r.split), ())
            )
            own = _time_per_problem(recs, lambda r: True)
            row["commonly solved"] = str(len(per_problem))
            row[TIME.title] = TIME.format_value(geometric_mean(per_problem)) if per_problem else DASH
            row["own solved"] = str(len(own))
            row[OWN_TIME_TITLE] = TIME.format_value(geometric_mean(own)) if own else DASH
            lengths = [r.plan_length for r in recs if r.counts_as_solved and r.plan_length is not None]
            row[PLAN_LENGTH_TITLE] = f"{np.mean(lengths):.1f}" if lengths else DASH
        else:
            for title in ("commonly solved", TIME.title, "own solved", OWN_TIME_TITLE, PLAN_LENGTH_TITLE):
                row[title] = DASH
        row[WALL_TIME.title] = WALL_TIME.format_value(
            WALL_TIME.combine([(r.seed, r.wall_time) for r in recs])
        )
        row["attempts"] = str(len(recs))
        for m in extra_present:
            value = m.combine(_numbers(recs, m.name))
            row[m.title] = DASH if value is None else m.format_value(value)
        rows.append(row)
    columns = [
        "Method",
        "Domain",
        "Task",
        "commonly solved",
        TIME.title,
        "own solved",
        OWN_TIME_TITLE,
        PLAN_LENGTH_TITLE,
        WALL_TIME.title,
        "attempts",
        *(m.title for m in extra_present),
    ]
    return pd.DataFrame(rows, columns=columns)


def render(cost: pd.DataFrame) -> list[str]:
    """Markdown lines of the section from :func:`cost_table`."""
    out = ["## Cost", ""]
    if cost.empty:
        out.append("No result records yet.")
        return out
    out.append(
        "Per method, domain and task. Commonly solved: instances solved and validated (in at "
        "least one seed) by every plan method that ran on that domain/split. Time per problem: "
        "mean wall time of the method's solved attempts, then the geometric mean over the "
        f"commonly solved instances (times below {MIN_TIME_S} s count as {MIN_TIME_S} s); "
        f'"{DASH}" for tasks other than plan. Plan length: mean number of actions of the '
        "method's solved and validated plans. Model size, train time, decode time per step and "
        "time per decision (a policy's choice: lookahead plus Q-values) come from the records' "
        "`extra` when the method reports them."
    )
    out += ["", md_table(cost)]
    return out
