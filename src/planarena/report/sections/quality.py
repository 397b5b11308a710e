"""Section "Plan quality": QS and QS_S of the symmetry-aware-transformers paper (Appendix E,
Eq. 1 and 2) per method and held-out split, and, for suites that ship reference costs (the IPC 2023
Learning Track), the track's quality and agile scores per domain.

QS / QS_S. For the set P of problems a method was run on in a split (every problem of every
(domain, split) cell where it has ``plan`` records; the coverage section's denominator) and a
method's plan pi(p) (|pi(p)| = infinity when unsolved or rejected by the validator), with pi*(p) the
shortest known plan:

* QS = 1/|P| sum_p |pi*(p)| / |pi(p)| (Eq. 1): coverage weighted by plan quality, so QS <= coverage
  (1.00: every problem solved optimally);
* QS_S = the same sum over the problems the method solved only (Eq. 2; 1.00: every solved problem
  solved optimally; "–" when it solved none).

pi*(p) is the shortest validated plan known for p: the planning stage's (A*+LM-cut: optimal; LAMA
where A* failed: an upper bound, as the paper's LAMA fallback) or any method's, whichever is
shorter. A problem that no method and no planner solved has no known plan and contributes 0 (it is
unsolved by every method); it stays in P. Per seed the value over P, then mean ± population std
over seeds (a seed without records in a cell counts as solving nothing there, as in coverage).

IPC 2023 Learning Track scores (the track's rules, ipc2023-learning.github.io, "Evaluation";
Taitler et al., "The 2023 International Planning Competition", AI Magazine 45(2), 2024), for every
problem with a ``reference_cost`` in the manifest (:class:`planarena.core.problemset.ProblemEntry`):

* quality: C*/C for a solved problem with plan cost C, 0 unsolved; C* = the minimum of the
  reference cost (the suite's upper bounds) and the cheapest validated plan any method or the
  planning stage found;
* agile: 1 for a problem solved in T <= 1 s, 1 - log(T)/log(T_max) for 1 s < T < T_max, 0 when
  unsolved or T >= T_max, with T_max the time limit in force for the method (its
  ``methods.<m>.time_limit``, else ``evaluation.time_limit``).

Per domain the sum over its problems (IPC style: the maximum is the number of problems), per seed,
then mean ± population std over seeds.
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from planarena.config import get, is_held_out
from planarena.core.problemset import ProblemEntry
from planarena.core.records import ResultRecord
from planarena.report.markdown import DASH, md_table
from planarena.report.metrics import QS, QS_S
from planarena.report.records import entries, method_order, plan_records_of, split_sort_key

DESCRIPTION = (
    "QS and QS_S (symmetry-aware-transformers paper, Appendix E, Eq. 1-2): per problem "
    "|pi*| / |pi| with |pi| = infinity when unsolved; QS averages over every problem the method "
    "was run on in the split (the coverage denominator; a problem without any known plan counts 0), "
    "so QS <= coverage; QS_S over the problems the method solved. pi*: the shortest validated plan "
    "known (planning stage: A*+LM-cut, LAMA where A* failed; or any method's). Held-out splits, "
    "all domains the method ran on together; mean ± population std over seeds."
)

IPC_COLUMNS = ["method", "domain", "split", "n", "improved", "seeds", "t_max", "solved", "quality", "agile"]


def best_lengths(records: Iterable[ResultRecord], plan_records: Iterable[Mapping]) -> dict[tuple, int]:
    """(domain, split, problem) -> length (actions) of the shortest validated plan known: the
    planning stage's or any method's solved-and-validated ``plan`` record (pi* of Eq. 1-2 of the
    symmetry-aware-transformers paper, Appendix E). Problems without a known plan are absent."""
    best: dict[tuple, int] = {}

    def offer(key: tuple, length) -> None:
        if isinstance(length, int) and length >= 0 and (key not in best or length < best[key]):
            best[key] = length

    for r in plan_records:
        if r.get("outcome") == "solved" and r.get("validated", True):
            offer((r.get("domain"), r.get("split"), r.get("problem")), r.get("plan_length"))
    for r in plan_records_of(records):
        if r.counts_as_solved:
            offer((r.domain, r.split, r.problem), r.plan_length)
    return best


def quality_table(
    records: Iterable[ResultRecord],
    plan_records: Iterable[Mapping],
    index: Mapping[tuple[str, str], Iterable[str]],
) -> pd.DataFrame:
    """QS / QS_S (symmetry-aware-transformers paper, Appendix E, Eq. 1-2) per (method, held-out
    split of ``index``) where the method has ``plan`` records.

    P is every problem of the (domain, split) cells of ``index`` where the method has plan records
    (unsolved, and problems with no known plan anywhere, count 0). Columns: ``method``, ``split``,
    ``n`` (|P|), ``seeds``, ``QS``, ``QS_S`` (formatted cells), and per seed (sorted seeds)
    ``coverage_per_seed``, ``qs_per_seed`` (fractions of |P|) and ``qs_s_per_seed`` (seeds that
    solved something). Empty without plan records."""
    records = list(records)
    latest = plan_records_of(records)
    best = best_lengths(records, plan_records)
    solved: dict[tuple, int] = {}
    seeds: dict[str, set[int]] = defaultdict(set)
    ran: set[tuple[str, str, str]] = set()
    for r in latest:
        seeds[r.method].add(r.seed)
        ran.add((r.method, r.domain, r.split))
        if r.counts_as_solved and isinstance(r.plan_length, int):
            solved[(r.method, r.seed, r.domain, r.split, r.problem)] = r.plan_length
    splits = sorted({s for _, s in index if is_held_out(s)}, key=split_sort_key)
    rows = []
    for m in method_order(latest):
        for split in splits:
            probs = [(d, s, p) for (d, s), ps in sorted(index.items())
                     if s == split and (m, d, s) in ran for p in sorted(ps)]
            if not probs:
                continue
            cov, qs, qs_s = [], [], []
            for s in sorted(seeds[m]):
                ratios = [best[p] / max(solved[(m, s, *p)], 1) if best[p] else 1.0
                          for p in probs if (m, s, *p) in solved]
                cov.append(len(ratios) / len(probs))
                qs.append(sum(ratios) / len(probs))
                if ratios:
                    qs_s.append(float(np.mean(ratios)))
            rows.append(dict(method=m, split=split, n=len(probs), seeds=len(qs),
                             QS=QS.format(*QS.aggregate(qs), runs=len(qs)),
                             QS_S=QS_S.format(*QS_S.aggregate(qs_s), runs=len(qs_s)) if qs_s else DASH,
                             coverage_per_seed=tuple(cov), qs_per_seed=tuple(qs), qs_s_per_seed=tuple(qs_s)))
    return pd.DataFrame(rows, columns=["method", "split", "n", "seeds", "QS", "QS_S", "coverage_per_seed",
                                       "qs_per_seed", "qs_s_per_seed"])


# --------------------------------------------------------------------------------------------
# IPC 2023 Learning Track scores
# --------------------------------------------------------------------------------------------


def time_limits(params: Mapping) -> dict[str, float]:
    """Time limit in force per configured method (seconds): ``methods.<m>.time_limit`` where set,
    else ``evaluation.time_limit`` (as the coverage protocol applies them); methods without either
    are left out (no agile score)."""
    default = get(params, "evaluation.time_limit", None)
    out: dict[str, float] = {}
    for name, block in (params.get("methods") or {}).items():
        limit = (block or {}).get("time_limit", default) if isinstance(block, Mapping) else default
        if isinstance(limit, (int, float)) and not isinstance(limit, bool) and limit > 0:
            out[str(name)] = float(limit)
    return out


def ipc_quality(reference: float, cost: float | None) -> float:
    """IPC 2023 Learning Track quality score of one problem: C*/C for a solved problem of plan
    cost C (``None``: unsolved -> 0); a plan of cost 0 scores 1. ``reference`` is C* (<= C)."""
    if cost is None:
        return 0.0
    return 1.0 if cost <= 0 else min(1.0, reference / cost)


def ipc_agile(seconds: float | None, t_max: float) -> float:
    """IPC 2023 Learning Track agile score of one problem solved in ``seconds`` (``None``:
    unsolved -> 0): 1 when T <= 1 s, 0 when T >= ``t_max``, else 1 - log(T)/log(T_max)."""
    if seconds is None:
        return 0.0
    if seconds <= 1.0:
        return 1.0
    if seconds >= t_max:
        return 0.0
    return 1.0 - math.log(seconds) / math.log(t_max)


def _cost(length, cost) -> float | None:
    """A plan's cost: its recorded cost, else its length (unit cost)."""
    value = cost if cost is not None else length
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def reference_costs(
    records: Iterable[ResultRecord],
    plan_records: Iterable[Mapping],
    manifest: Iterable[ProblemEntry | Mapping],
) -> dict[tuple[str, str, str], tuple[float, float]]:
    """(domain, split, problem) -> (C*, the manifest's reference cost) for every problem with a
    ``reference_cost``: C* is the minimum of it and the cheapest validated plan of any method's
    ``plan`` record or of the planning stage (a record's ``plan_cost``, else its length)."""
    refs = {e.key: float(e.reference_cost) for e in entries(manifest) if e.reference_cost is not None}
    best = dict(refs)

    def offer(key: tuple, cost: float | None) -> None:
        if key in best and cost is not None and cost >= 0:
            best[key] = min(best[key], cost)

    for r in plan_records:
        if r.get("outcome") == "solved" and r.get("validated", True):
            offer((r.get("domain"), r.get("split"), r.get("problem")), _cost(r.get("plan_length"), r.get("cost")))
    for r in plan_records_of(records):
        if r.counts_as_solved:
            offer((r.domain, r.split, r.problem), _cost(r.plan_length, r.plan_cost))
    return {k: (best[k], refs[k]) for k in refs}


def ipc_table(
    records: Iterable[ResultRecord],
    plan_records: Iterable[Mapping],
    manifest: Iterable[ProblemEntry | Mapping],
    limits: Mapping[str, float],
) -> pd.DataFrame:
    """IPC 2023 Learning Track quality and agile scores per (method, domain, split) over the
    problems with a reference cost (:func:`reference_costs`), for the cells where the method has
    ``plan`` records; empty when no problem has a reference cost (suites other than ipc2023).

    Columns :data:`IPC_COLUMNS`: ``n`` problems; ``improved`` how many of them have a plan found
    cheaper than the reference cost (C* below it); ``seeds`` the method's seeds (sorted; a seed
    without records in the cell solved nothing there); ``t_max`` the method's time limit in
    seconds (``limits``; NaN when unknown: agile scores are then NaN); per seed, in seed order,
    ``solved`` (count), ``quality`` and ``agile`` (sums over the cell's problems,
    :func:`ipc_quality`, :func:`ipc_agile` of the record's ``wall_time``)."""
    records = list(records)
    refs = reference_costs(records, plan_records, manifest)
    if not refs:
        return pd.DataFrame(columns=IPC_COLUMNS)
    latest = plan_records_of(records)
    cells: dict[tuple[str, str], list[str]] = defaultdict(list)
    for d, s, p in sorted(refs):
        cells[(d, s)].append(p)
    seeds: dict[str, set[int]] = defaultdict(set)
    ran: set[tuple[str, str, str]] = set()
    solved: dict[tuple, ResultRecord] = {}
    for r in latest:
        seeds[r.method].add(r.seed)
        ran.add((r.method, r.domain, r.split))
        if r.counts_as_solved:
            solved[(r.method, r.seed, r.domain, r.split, r.problem)] = r
    rows = []
    for m in method_order(latest):
        t_max = float(limits.get(m, math.nan))
        for (d, s), probs in sorted(cells.items(), key=lambda c: (c[0][0], split_sort_key(c[0][1]))):
            if (m, d, s) not in ran:
                continue
            n_solved, quality, agile = [], [], []
            for seed in sorted(seeds[m]):
                hits = [(p, solved[(m, seed, d, s, p)]) for p in probs if (m, seed, d, s, p) in solved]
                n_solved.append(len(hits))
                quality.append(sum(ipc_quality(refs[(d, s, p)][0], _cost(r.plan_length, r.plan_cost))
                                   for p, r in hits))
                agile.append(math.nan if math.isnan(t_max) else sum(ipc_agile(r.wall_time, t_max) for _, r in hits))
            improved = sum(1 for p in probs if refs[(d, s, p)][0] < refs[(d, s, p)][1])
            rows.append(dict(method=m, domain=d, split=s, n=len(probs), improved=improved,
                             seeds=tuple(sorted(seeds[m])),
                             t_max=t_max, solved=tuple(n_solved), quality=tuple(quality), agile=tuple(agile)))
    return pd.DataFrame(rows, columns=IPC_COLUMNS)


def _sum_cell(per_seed: Sequence[float], digits: int = 1) -> str:
    """``"27.4"`` (one seed) or ``"27.4 ± 0.3"`` (mean ± population std over seeds); "–" if NaN."""
    values = np.asarray(per_seed, dtype=float)
    if not len(values) or np.isnan(values).any():
        return DASH
    text = f"{values.mean():.{digits}f}"
    return text if len(values) == 1 else f"{text} ± {values.std(ddof=0):.{digits}f}"


def render_ipc(table: pd.DataFrame) -> list[str]:
    """Markdown lines of the IPC 2023 scores subsection from :func:`ipc_table` (none when
    ``table`` is empty)."""
    if table.empty:
        return []
    below_reference = int(table.drop_duplicates(["domain", "split"])["improved"].sum())
    limits = sorted({(m, t) for m, t in zip(table["method"], table["t_max"])}, key=lambda x: x[0])
    values = sorted({t for _, t in limits if not math.isnan(t)})
    if len(values) == 1 and all(not math.isnan(t) for _, t in limits):
        t_text = f"T_max = {values[0]:g} s, the evaluation time limit in force (`evaluation.time_limit`)"
    else:
        t_text = ("T_max = the time limit in force per method (`methods.<m>.time_limit`, else "
                  "`evaluation.time_limit`): " + ", ".join(f"`{m}` {DASH if math.isnan(t) else f'{t:g} s'}"
                                                           for m, t in limits))
    out = ["### IPC 2023 Learning Track scores", "",
           "Per domain, the sum over its problems (IPC style: the maximum is the number of problems n) "
           "of the quality score C*/C (C: the plan's cost; C*: the minimum of the suite's reference "
           "cost, the smaller of `upper_bounds.json` and `upper_bounds_from_ipc_planners.json`, and "
           "the cheapest validated plan found by any method or the planning stage) and of the agile "
           "score 1 - log T / log T_max (T: the attempt's wall time in seconds; 1 when T <= 1 s), "
           f"both 0 for an unsolved problem; {t_text}. Coverage: solved / n. "
           f"Mean ± population std over seeds. A plan cheaper than the reference cost was found for "
           f"{below_reference} problem(s).", ""]
    rows = []
    for r in table.itertuples(index=False):
        rows.append({"method": r.method, "domain": r.domain, "split": r.split,
                     "coverage": f"{_sum_cell(r.solved, 0)} / {r.n}",
                     "quality": _sum_cell(r.quality), "agile": _sum_cell(r.agile)})
    for (m, s), grp in table.groupby(["method", "split"], sort=False):
        if len(grp) < 2:
            continue
        total = {k: [sum(v) for v in zip(*grp[k])] for k in ("solved", "quality", "agile")}
        rows.append({"method": m, "domain": "all", "split": s,
                     "coverage": f"{_sum_cell(total['solved'], 0)} / {int(grp['n'].sum())}",
                     "quality": _sum_cell(total["quality"]), "agile": _sum_cell(total["agile"])})
    order = {m: i for i, m in enumerate(dict.fromkeys(table["method"]))}
    rows.sort(key=lambda r: (order[r["method"]], split_sort_key(r["split"]), r["domain"] == "all", r["domain"]))
    out.append(md_table(pd.DataFrame(rows, columns=["method", "domain", "split", "coverage", "quality", "agile"])))
    return out


def render(table: pd.DataFrame, ipc: pd.DataFrame | None = None) -> list[str]:
    """Markdown lines of the section: methods as rows, one QS and one QS_S column per split (with
    the split's n per method where methods ran on different problems), then the IPC 2023 scores
    (:func:`render_ipc`) when ``ipc`` has rows."""
    out = ["## Plan quality", ""]
    if table.empty:
        out.append("No validated plans of plan methods on held-out splits yet.")
    else:
        splits = list(dict.fromkeys(table["split"]))
        n = {s: sorted(set(table[table["split"] == s]["n"].astype(int))) for s in splits}
        wide = []
        for m in dict.fromkeys(table["method"]):
            row: dict[str, str] = {"method": m}
            for s in splits:
                hit = table[(table["method"] == m) & (table["split"] == s)]
                if len(n[s]) > 1:
                    row[f"{s} n"] = str(int(hit.iloc[0]["n"])) if len(hit) else DASH
                row[f"{s} QS"] = hit.iloc[0]["QS"] if len(hit) else DASH
                row[f"{s} QS_S"] = hit.iloc[0]["QS_S"] if len(hit) else DASH
            wide.append(row)
        same = [f"n({s}) = {n[s][0]}" for s in splits if len(n[s]) == 1]
        out += [DESCRIPTION + (" " + ", ".join(same) + "." if same else ""), "", md_table(pd.DataFrame(wide))]
    if ipc is not None and not ipc.empty:
        out += ["", *render_ipc(ipc)]
    return out


__all__: Sequence[str] = ["best_lengths", "ipc_agile", "ipc_quality", "ipc_table",
                          "quality_table", "reference_costs", "render", "render_ipc", "time_limits"]
