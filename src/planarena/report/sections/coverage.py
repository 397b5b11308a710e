"""Section "Coverage": domain x split x method, mean ± std over seeds, best in bold, instance
counts, a Sum row (docs/concepts.md), all from :data:`planarena.report.metrics.COVERAGE`.

Coverage of a (domain, split, method) cell is the mean over seeds of the per-seed fraction of the
split's instances solved (``outcome == "solved"`` and accepted by the independent validator,
:attr:`ResultRecord.counts_as_solved`), with the population standard deviation (``ddof=0``) over
seeds and the instance count. Instances without a record count as unsolved. A split with no
instances is reported as "no instances" (never a division by zero).
"""

from __future__ import annotations

import math
import os
from collections import defaultdict
from pathlib import Path
from typing import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from planarena.config import is_held_out
from planarena.core.plan_bounds import plan_length_lower_bound
from planarena.core.problemset import ProblemEntry
from planarena.core.records import ResultRecord
from planarena.methods.base import ReportTraits
from planarena.report.markdown import DASH, NO_INSTANCES, md_table
from planarena.report.metrics import COVERAGE, instance_weighted
from planarena.report.records import entries, instance_index, method_order, plan_records_of, split_sort_key
from planarena.report.traits import method_label, row_order

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
    """Coverage per (domain, split, method) for methods with ``plan`` records
    (docs/concepts.md#coverage-and-plan-quality).

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


def held_out_by(cov: pd.DataFrame, key: str) -> pd.DataFrame:
    """Per method and value of ``key`` (``"split"`` or ``"domain"``), the metric's declared summary
    (:func:`planarena.report.metrics.instance_weighted`) over the method's **held-out** cells with
    status ``ok``. Columns: method, ``key``, n (instances summed), mean, std, runs (seeds), in the
    order of ``cov``; groups without instances are absent."""
    rows = []
    ok = cov[(cov["status"] == "ok") & cov["split"].map(is_held_out).astype(bool)] if not cov.empty else cov
    for (method, value), cells in ok.groupby(["method", key], sort=False):
        n, mean, std = instance_weighted(cells)
        if n:
            rows.append({"method": method, key: value, "n": n, "mean": mean, "std": std,
                         "runs": len(set().union(*cells["seeds"]))})
    return pd.DataFrame(rows, columns=["method", key, "n", "mean", "std", "runs"])


def held_out_cells(cov: pd.DataFrame, sums: pd.DataFrame) -> pd.DataFrame:
    """The headline numbers: per method and held-out split, all domains together, by the metric's
    declared summary (:func:`planarena.report.metrics.instance_weighted` over the method's cells
    with status ``ok``), and the ``held-out`` Sum of :func:`coverage_sum`. Columns: method, split,
    n (instances summed), mean, std, runs (seeds); methods and splits without cells are absent."""
    rows = held_out_by(cov, "split").to_dict("records")
    for r in sums.itertuples(index=False):
        if r.n > 0:
            rows.append(dict(method=r.method, split=HELD_OUT, n=r.n, mean=r.mean, std=r.std, runs=r.runs))
    return pd.DataFrame(rows, columns=["method", "split", "n", "mean", "std", "runs"])


#: The Sum column of the headline table (every held-out split the method ran on).
HELD_OUT = "held-out"


def split_instances(cov: pd.DataFrame) -> dict[str, int]:
    """Instances per split, all domains together (from the coverage table's ``n``), over the
    (domain, split) cells some method has records in."""
    per_cell = cov[cov["status"] == "ok"].drop_duplicates(["domain", "split"])
    return {s: int(g["n"].sum()) for s, g in per_cell.groupby("split", sort=False)}


def headline_table(
    cov: pd.DataFrame, sums: pd.DataFrame, traits: Mapping[str, ReportTraits] | None = None
) -> pd.DataFrame:
    """The front page's coverage table: a row per plan method (family, floor group, floors first:
    :func:`planarena.report.traits.row_order`; floors marked), a column per held-out split and the
    held-out Sum (header: instances over all domains), mean ± std over seeds, best per column in
    bold. A cell over fewer instances than its column (the method skipped a domain) says n."""
    traits = traits or {}
    cells = held_out_cells(cov, sums)
    n_split = split_instances(cov)
    splits = sorted({s for s in cov["split"] if is_held_out(s) and n_split.get(s)}, key=split_sort_key)
    n_split[HELD_OUT] = sum(n_split[s] for s in splits)
    family = dict(zip(cov["method"], cov["family"], strict=True))
    methods = row_order(dict.fromkeys(cells["method"]), family, traits)
    titles = {s: f"{s} (n={n_split[s]})" for s in [*splits, HELD_OUT]}
    rows = []
    by = {(r.method, r.split): r for r in cells.itertuples(index=False)}
    best = {s: COVERAGE.best({m: by[(m, s)].mean for m in methods if (m, s) in by}) for s in titles}
    for m in methods:
        row = {"method": method_label(traits, m)}
        for s, title in titles.items():
            r = by.get((m, s))
            row[title] = DASH if r is None else COVERAGE.format(
                r.mean, r.std, r.n if r.n != n_split[s] else None, m in best[s], runs=r.runs)
        rows.append(row)
    return pd.DataFrame(rows, columns=["method", *titles.values()])


def domain_table(cov: pd.DataFrame, domain: str, traits: Mapping[str, ReportTraits] | None = None) -> pd.DataFrame:
    """One domain's coverage, pivoted: a row per plan method (headline order), a column per split
    any method ran on (train included: shown, never summed), cells as the metric formats them
    with n; best per column in bold; "no instances" for an empty split, "–" without records."""
    traits = traits or {}
    d = cov[cov["domain"] == domain]
    splits = [s for s, g in d.groupby("split", sort=False) if not (g["status"] == "no records").all()]
    family = dict(zip(d["method"], d["family"], strict=True))
    methods = row_order(dict.fromkeys(d["method"]), family, traits)
    by = {(r.method, r.split): r for r in d.itertuples(index=False)}
    best = {s: COVERAGE.best({m: by[(m, s)].mean for m in methods if by[(m, s)].status == "ok"}) for s in splits}
    rows = []
    for m in methods:
        row = {"method": method_label(traits, m)}
        for s in splits:
            r = by[(m, s)]
            if r.status == "no instances":
                row[s] = NO_INSTANCES
            elif r.status == "no records":
                row[s] = DASH
            else:
                row[s] = COVERAGE.format(r.mean, r.std, r.n, m in best[s], runs=len(r.seeds))
        rows.append(row)
    return pd.DataFrame(rows, columns=["method", *splits])


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


def problem_files(
    manifest: Iterable[ProblemEntry | Mapping], root: str | os.PathLike
) -> dict[tuple[str, str, str], tuple[Path, Path]]:
    """``(domain, split, problem) -> (domain file, problem file)`` of the manifest's entries under
    the problem root ``root`` (``data/problems``: ``<domain>/domain.pddl`` and the entry's ``path``),
    the ``files`` argument of :func:`horizon_ceiling`."""
    root = Path(root)
    return {e.key: (root / e.domain / "domain.pddl", root / e.path) for e in entries(manifest)}


#: how the sentence names the PDDL bound (:func:`planarena.core.plan_bounds.plan_length_lower_bound`)
GOAL_BOUND = "the lower bound from unsatisfied goal atoms"


def horizon_ceiling(
    plan_records: Iterable[Mapping],
    index: Mapping[tuple[str, str], Iterable[str]],
    horizons: Mapping[str, int | None],
    ran: Iterable[str],
    files: Mapping[tuple[str, str, str], tuple[str | os.PathLike, str | os.PathLike]] | None = None,
) -> list[str]:
    """Sentences stating, per distinct horizon H of the methods in ``ran`` (``horizons``: method ->
    its :attr:`ReportTraits.horizon`), how many held-out problems of ``index`` no plan of at most H
    steps can solve: a lower bound on their plan length exceeds H.

    The lower bound of a problem is the larger of those known: the length of its optimal plan (the
    planning stage's A*+LM-cut plan) and, where ``files`` gives its ``(domain file, problem file)``,
    :func:`planarena.core.plan_bounds.plan_length_lower_bound` (the goal atoms false initially over
    the most of them one action adds; ``None`` where the PDDL makes it unsound). The sentence says
    how many were shown out of reach by each. Problems not out of reach with neither an optimal
    plan nor a plan within H are counted apart as unknown, and those without a reference-plan
    record apart again. Empty when no method has a horizon."""
    by_h: dict[int, list[str]] = defaultdict(list)
    for m in ran:
        if horizons.get(m) is not None:
            by_h[int(horizons[m])].append(m)
    if not by_h:
        return []
    plans = {(r.get("domain"), r.get("split"), r.get("problem")): r for r in plan_records}
    held_out = [(d, s, p) for (d, s), probs in index.items() if is_held_out(s) for p in sorted(probs)]
    files = files or {}
    goal_bound = {key: plan_length_lower_bound(*files[key]) if key in files else None for key in held_out}
    out = []
    for h, methods in sorted(by_h.items()):
        by_plan, by_goals, unknown, unplanned = 0, 0, 0, 0
        for key in held_out:
            r = plans.get(key) or {}
            length = r.get("plan_length") if r.get("outcome") == "solved" else None
            optimal = length if r.get("optimal") else None
            if optimal is not None and optimal > h:
                by_plan += 1
            elif goal_bound[key] is not None and goal_bound[key] > h:
                by_goals += 1
            elif not r:
                unplanned += 1
            elif length is None or (optimal is None and length > h):
                unknown += 1
        names = ", ".join(f"`{m}`" for m in methods)
        if not by_goals:
            why = ["their optimal plans are longer"]
        elif not by_plan:
            why = [f"they need more than {h} steps by {GOAL_BOUND}"]
        else:
            why = [f"{by_plan} have optimal plans longer than that",
                   f"{by_goals} need more than {h} steps by {GOAL_BOUND}"]
        line = (f"Horizon ceiling: with plans of at most {h} steps ({names}), {by_plan + by_goals} of "
                f"{len(held_out)} held-out problems cannot be solved ({', '.join(why)})")
        if unknown:
            line += f"; for {unknown} more no optimal plan is known and no plan within the horizon was found by the planners"
            if files:
                line += f" (nor does {GOAL_BOUND} exceed it)"
        if unplanned:
            line += (f"; {unplanned} have no reference-plan record (not planned, see `planners.splits`, or the "
                     "records were not kept), so their ceiling is unknown")
        out.append(line + ".")
    return out


def plan_tokens(plan: Sequence[str]) -> int:
    """Tokens of ``plan`` (action texts such as ``"(pick ball1 rooma left)"``) as a plan generator
    writes it: the action name and one token per argument for each action, then the end token."""
    return sum(len(a.strip().strip("()").split()) for a in plan) + 1


def cap_ceiling(
    plan_records: Iterable[Mapping],
    index: Mapping[tuple[str, str], Iterable[str]],
    caps: Mapping[str, tuple[int | None, int | None]],
    ran: Iterable[str],
    cells: Mapping[str, Iterable[tuple[str, str]]] | None = None,
) -> list[str]:
    """Sentences stating, per distinct ``(max_objects, max_tokens)`` of the methods in ``ran``
    (``caps``: method -> its :attr:`ReportTraits.max_objects` / ``max_tokens``) and per held-out
    split of ``index``, how many problems those caps make unsolvable by construction. With
    ``cells`` (method -> the ``(domain, split)`` cells it has records on), only the cells the
    methods of a cap ran on are counted, so a split they never decoded is not listed. More objects
    than the object vocabulary (the problem's ``objects`` in its plan record), or an optimal plan
    (A*+LM-cut) of more tokens than the cap (:func:`plan_tokens`). Problems with no optimal plan
    whose best known plan needs more tokens are counted apart as unknown. Empty when no method has
    a cap."""
    by_cap: dict[tuple, list[str]] = defaultdict(list)
    for m in ran:
        cap = tuple(caps.get(m) or (None, None))
        if any(c is not None for c in cap):
            by_cap[cap].append(m)
    if not by_cap:
        return []
    plans = {(r.get("domain"), r.get("split"), r.get("problem")): r for r in plan_records}
    splits = sorted({s for (_, s) in index if is_held_out(s)})
    out = []
    for (max_obj, max_tok), methods in sorted(by_cap.items(), key=lambda kv: str(kv[0])):
        parts = []
        mine = None if cells is None else {c for m in methods for c in cells.get(m, ())}
        for split in splits:
            keys = [(d, s, p) for (d, s), probs in index.items()
                    if s == split and (mine is None or (d, s) in mine) for p in probs]
            if not keys:
                continue
            objects = tokens = unknown = 0
            for key in keys:
                r = plans.get(key) or {}
                if max_obj is not None and r.get("objects") is not None and int(r["objects"]) > max_obj:
                    objects += 1
                    continue
                if max_tok is None:
                    continue
                plan = r.get("plan") if r.get("outcome") == "solved" else None
                need = plan_tokens(plan) if plan else None
                if need is not None and r.get("optimal") and need > max_tok:
                    tokens += 1
                elif need is None or (not r.get("optimal") and need > max_tok):
                    unknown += 1
            what = [f"{objects} more than {max_obj} objects"] if max_obj is not None else []
            if max_tok is not None:
                what.append(f"{tokens} an optimal plan of more than {max_tok} tokens")
                if unknown:
                    what.append(f"{unknown} unknown (no optimal plan within the cap found)")
            parts.append(f"{split}: {objects + tokens} of {len(keys)} ({'; '.join(what)})")
        if not parts:
            continue
        names = ", ".join(f"`{m}`" for m in methods)
        out.append(f"Cap ceiling ({names}): problems these caps make unsolvable by construction, per held-out "
                   f"split: {'; '.join(parts)}.")
    return out


DESCRIPTION = (
    "Fraction of instances solved **and** accepted by the independent validator: mean ± "
    "population std (ddof=0) over seeds, n = instances; instances without a record count as "
    "unsolved. Best per column in bold (ties all bold; nothing bold when the best is 0). "
    f'"{DASH}": the method has no records there; "1 run": one seed, no spread. Every seed a '
    "method ran with counts in every cell it ran on (a seed without records there solved "
    "nothing). Held-out: solved instances averaged over seeds / instances, over the **held-out** "
    "splits the method ran on (train columns are shown per domain, never summed)."
)


def render(
    cov: pd.DataFrame, sums: pd.DataFrame, ceiling: Sequence[str] = (),
    traits: Mapping[str, ReportTraits] | None = None,
) -> list[str]:
    """Markdown lines of the detail page's section from :func:`coverage_table` and
    :func:`coverage_sum`: the held-out table of all domains (:func:`headline_table`), the
    :func:`horizon_ceiling` sentences, then one pivoted table per domain (:func:`domain_table`)."""
    out = ["## Coverage", ""]
    if cov.empty:
        out.append("No `plan` results yet: `data/results/` holds no records of methods that plan.")
        return out
    out += [DESCRIPTION, "", "### Held-out splits, all domains", "", md_table(headline_table(cov, sums, traits))]
    for sentence in ceiling:
        out += ["", sentence]
    skipped = unevaluated_splits(cov)
    for domain in dict.fromkeys(cov["domain"]):
        d = cov[cov["domain"] == domain]
        if (d["status"] == "no records").all():
            continue
        out += ["", f"### {domain}", "", md_table(domain_table(cov, domain, traits))]
    if skipped:
        names = ", ".join(f"`{d}/{s}`" for d, s in skipped)
        out += ["", f"Not evaluated by any plan method (columns left out): {names}."]
    return out
