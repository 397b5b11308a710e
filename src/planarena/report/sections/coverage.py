"""Section "Coverage": domain x split x method, mean ± std over seeds, best in bold, instance
counts, a Sum row (DESIGN.md "Leaderboards"), all from :data:`planarena.report.metrics.COVERAGE`.

Coverage of a (domain, split, method) cell is the mean over seeds of the per-seed fraction of the
split's instances solved (``outcome == "solved"`` and accepted by the independent validator,
:attr:`ResultRecord.counts_as_solved`), with the population standard deviation (``ddof=0``) over
seeds and the instance count. Instances without a record count as unsolved. A split with no
instances is reported as "no instances" (never a division by zero).
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from planarena.config import is_held_out
from planarena.core.problemset import ProblemEntry
from planarena.core.records import ResultRecord
from planarena.report.markdown import DASH, NO_INSTANCES, md_table
from planarena.report.metrics import COVERAGE, instance_weighted
from planarena.report.records import instance_index, method_order, plan_records_of

COVERAGE_COLUMNS = (
    "domain",
    "split",
    "method",
    "family",
    "n",
    "seeds",
    "solved",
    "mean",
    "std",
    "status",
)


def coverage_table(
    records: Iterable[ResultRecord],
    manifest: Iterable[ProblemEntry | Mapping],
    domains: Sequence[str] = (),
    splits: Sequence[str] = (),
) -> pd.DataFrame:
    """Coverage per (domain, split, method) for methods with ``plan`` records (DESIGN.md "Metrics").

    One row per combination of (domain, split) in :func:`instance_index` and method, with columns
    :data:`COVERAGE_COLUMNS`: ``n`` instances; ``seeds`` the seeds the method ran there;
    ``solved`` the per-seed count of instances solved and validated; ``mean`` and ``std``
    (population, ``ddof=0``) over seeds of ``solved / n``, where the seeds are every seed the
    method ran with anywhere (a seed without records in a cell counts 0 solved there); ``status`` is ``ok``, ``no records``
    (the method has no record there; rendered "–") or ``no instances`` (``n == 0``; ``mean`` and
    ``std`` are NaN). Records for problems not in the manifest are ignored here (see Problems).
    """
    latest = plan_records_of(records)
    index = instance_index(manifest, latest, domains, splits)
    methods = method_order(latest)
    family = {r.method: r.family for r in latest}
    ran: set[tuple] = set()
    method_seeds: dict[str, set[int]] = defaultdict(set)
    solved_by: dict[tuple, set[str]] = defaultdict(set)
    for r in latest:
        ran.add((r.method, r.domain, r.split))
        method_seeds[r.method].add(r.seed)
        if r.counts_as_solved and r.problem in index[(r.domain, r.split)]:
            solved_by[(r.method, r.domain, r.split, r.seed)].add(r.problem)
    rows = []
    for (domain, split), problems in index.items():
        n = len(problems)
        for m in methods:
            # every seed the method ran with counts in every cell it ran on: a seed without
            # records there solved nothing (it is not left out of the mean)
            seeds = tuple(sorted(method_seeds[m])) if (m, domain, split) in ran else ()
            solved = tuple(len(solved_by.get((m, domain, split, s), ())) for s in seeds)
            mean = std = math.nan
            if n == 0:
                status = "no instances"
            elif not seeds:
                status = "no records"
            else:
                status = "ok"
                mean, std = COVERAGE.aggregate(np.asarray(solved, dtype=float) / n)
            rows.append(
                dict(
                    domain=domain,
                    split=split,
                    method=m,
                    family=family[m],
                    n=n,
                    seeds=seeds,
                    solved=solved,
                    mean=mean,
                    std=std,
                    status=status,
                )
            )
    return pd.DataFrame(rows, columns=list(COVERAGE_COLUMNS))


def coverage_sum(cov: pd.DataFrame) -> pd.DataFrame:
    """The Sum row per method (columns method, n, mean, std, runs), by the metric's declared
    summary (:func:`planarena.report.metrics.instance_weighted`) over the **held-out** cells with
    status ``ok`` (:func:`planarena.config.is_held_out`: train coverage is not a result); ``runs``
    is the number of seeds."""
    rows = []
    held_out = cov["split"].map(is_held_out).astype(bool)
    for m in dict.fromkeys(cov["method"]):
        cells = cov[(cov["method"] == m) & (cov["status"] == "ok") & held_out]
        n, mean, std = instance_weighted(cells)
        runs = len(set().union(*cells["seeds"])) if n else 0
        rows.append(dict(method=m, n=n, mean=mean, std=std, runs=runs))
    return pd.DataFrame(rows, columns=["method", "n", "mean", "std", "runs"])


def best_methods(values: Mapping[str, float]) -> set[str]:
    """Methods whose coverage is the row's best (:meth:`Metric.best` of ``COVERAGE``)."""
    return COVERAGE.best(values)


def format_coverage_cell(mean: float, std: float, n: int, bold: bool = False) -> str:
    """``"0.67 ± 0.27 (n=3)"``; std ``n/a`` when undefined; wrapped in ``**`` when ``bold``."""
    return COVERAGE.format(mean, std, n, bold)


def unevaluated_splits(cov: pd.DataFrame) -> list[tuple[str, str]]:
    """(domain, split) pairs with instances on which no plan method has records."""
    out = []
    for (domain, split), g in cov.groupby(["domain", "split"], sort=False):
        if (g["status"] == "no records").all():
            out.append((domain, split))
    return out


def coverage_markdown(cov: pd.DataFrame, sums: pd.DataFrame) -> str:
    """The coverage table: rows domain x split, one column per method, a Sum row, best in bold.

    Rows of splits that no method ran on are left out (see :func:`unevaluated_splits`); rows of
    empty splits stay, with "no instances".
    """
    methods = list(dict.fromkeys(cov["method"]))
    rows = []
    for (domain, split), g in cov.groupby(["domain", "split"], sort=False):
        if (g["status"] == "no records").all():
            continue  # listed below the table by unevaluated_splits()
        by_method = {r.method: r for r in g.itertuples(index=False)}
        best = COVERAGE.best({m: r.mean for m, r in by_method.items() if r.status == "ok"})
        row = {"Domain": domain, "Split": split}
        for m in methods:
            r = by_method[m]
            if r.status == "no instances":
                row[m] = NO_INSTANCES
            elif r.status == "no records":
                row[m] = DASH
            else:
                row[m] = COVERAGE.format(r.mean, r.std, r.n, m in best, runs=len(r.seeds))
        rows.append(row)
    by_method = {r.method: r for r in sums.itertuples(index=False)}
    best = COVERAGE.best({m: r.mean for m, r in by_method.items() if r.n > 0})
    row = {"Domain": "**Sum**", "Split": "held-out"}
    for m in methods:
        r = by_method[m]
        row[m] = DASH if r.n == 0 else COVERAGE.format(r.mean, r.std, r.n, m in best, runs=r.runs)
    rows.append(row)
    return md_table(pd.DataFrame(rows, columns=["Domain", "Split", *methods]))


def measured_cell(cov: pd.DataFrame, domain: str, split: str, method: str) -> str:
    """The coverage cell of (domain, split, method) as the table writes it (no bold):
    ``"0.67 ± 0.27 (n=3)"``, "no instances", or "–" (no records, or not in this run's suite)."""
    hit = cov[(cov["domain"] == domain) & (cov["split"] == split) & (cov["method"] == method)]
    if hit.empty:
        return DASH
    r = hit.iloc[0]
    if r["status"] == "no instances":
        return NO_INSTANCES
    if r["status"] != "ok":
        return DASH
    return COVERAGE.format(r["mean"], r["std"], int(r["n"]), runs=len(r["seeds"]))


def horizon_ceiling(
    plan_records: Iterable[Mapping],
    index: Mapping[tuple[str, str], Iterable[str]],
    horizons: Mapping[str, int | None],
    ran: Iterable[str],
) -> list[str]:
    """Sentences stating, per distinct horizon H of the methods in ``ran`` (``horizons``: method ->
    its :attr:`ReportTraits.horizon`), how many held-out problems of ``index`` no plan of at most H
    steps can solve: their optimal plan (the planning stage's A*+LM-cut plan) is longer than H.
    Problems without an optimal plan whose best known plan is longer than H (or that have none) are
    counted apart as unknown. Empty when no method has a horizon."""
    by_h: dict[int, list[str]] = defaultdict(list)
    for m in ran:
        if horizons.get(m) is not None:
            by_h[int(horizons[m])].append(m)
    if not by_h:
        return []
    plans = {(r.get("domain"), r.get("split"), r.get("problem")): r for r in plan_records}
    held_out = [(d, s, p) for (d, s), probs in index.items() if is_held_out(s) for p in probs]
    out = []
    for h, methods in sorted(by_h.items()):
        over, unknown = 0, 0
        for key in held_out:
            r = plans.get(key) or {}
            length = r.get("plan_length") if r.get("outcome") == "solved" else None
            if length is not None and r.get("optimal") and length > h:
                over += 1
            elif length is None or (not r.get("optimal") and length > h):
                unknown += 1
        names = ", ".join(f"`{m}`" for m in methods)
        out.append(f"Horizon ceiling: with plans of at most {h} steps ({names}), {over} of {len(held_out)} "
                   f"held-out problems cannot be solved (their optimal plans are longer); for {unknown} more "
                   "no optimal plan is known and no plan within the horizon was found by the planners.")
    return out


def render(cov: pd.DataFrame, sums: pd.DataFrame, ceiling: Sequence[str] = ()) -> list[str]:
    """Markdown lines of the section from :func:`coverage_table` and :func:`coverage_sum`, and the
    :func:`horizon_ceiling` sentences."""
    out = ["## Coverage", ""]
    if cov.empty:
        out.append("No `plan` results yet: `data/results/` holds no records of methods that plan.")
        return out
    out.append(
        "Fraction of instances solved **and** accepted by the independent validator: mean ± "
        "population std (ddof=0) over seeds, n = instances in the split; instances without a "
        "record count as unsolved. Best per row in bold (ties all bold; nothing bold when the "
        "best is 0). "
        f'"{DASH}": the method has no records there; "1 run": one seed, no spread. Every seed a '
        "method ran with counts in every cell it ran on (a seed without records there solved "
        "nothing). Sum: solved instances averaged over seeds / instances, over the **held-out** "
        "splits the method ran on (train rows are shown, never summed)."
    )
    out += ["", coverage_markdown(cov, sums)]
    for sentence in ceiling:
        out += ["", sentence]
    skipped = unevaluated_splits(cov)
    if skipped:
        names = ", ".join(f"`{d}/{s}`" for d, s in skipped)
        out += ["", f"Not evaluated by any plan method (rows left out): {names}."]
    return out
