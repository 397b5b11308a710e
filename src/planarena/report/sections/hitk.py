"""Section "Hit@k": successor ranking (``rank_successors`` records), per protocol, domain, split
and method; the candidate-pool protocols' subsection (:mod:`planarena.report.sections.pool`) is
appended to it. :func:`task_metric_table` is the table of any task's ``extra`` metrics (also used
by :mod:`planarena.report.sections.schema`).
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from typing import Any, Iterable, Sequence

import numpy as np
import pandas as pd

from planarena.config import is_held_out
from planarena.core.records import ResultRecord
from planarena.report.markdown import DASH, md_table
from planarena.report.metrics import RANK_KEY, metric, rank_metric_sort_key, seed_means
from planarena.report.records import (
    latest_records,
    record_protocol,
    record_task,
    split_sort_key,
)

CHANCE_ROW_TEXT = "*uniform random ranker*"

DESCRIPTION = (
    "Successor ranking (`rank_successors` records), per protocol, domain, split and method. "
    "`hit@k`: fraction of a reference trajectory's steps whose true successor the method ranks "
    "in the top k among all successors of the state; per seed the mean over trajectories, then "
    "mean ± population std (ddof=0) over seeds. `inputs`: what the method conditions on (state, "
    "action, goal), as its records declare; `seeds`, `trajectories`: how many the cell averages "
    "(records without values, e.g. errors listed under Problems, are not counted). "
    f"Floor: the {CHANCE_ROW_TEXT} row of each cell is the Hit@k of a ranker that orders the "
    "successors uniformly at random (mean over steps of min(k, c) / c for c successors); "
    "*successors per step*: mean successors per step; a value marked (trivial) is 1 for any ranker "
    "(every step has at most k successors) and ranks nothing. Columns name the trajectories' "
    "reference plans where a split has both kinds: `astar_lmcut` (optimal) or `lama_first` (not "
    "optimal; where A*+LM-cut failed), kept apart. A table per domain and k; a row per method."
)

#: Said when a task's table has no description of its own.
DEFAULT_DESCRIPTION = "Mean ± population std (ddof=0) over seeds of the per-seed mean over instances."


def _text_value(value: Any) -> str:
    """``extra`` text for a table cell: lists joined with ", ", everything else ``str``."""
    if isinstance(value, (list, tuple)):
        return ", ".join(str(v) for v in value)
    return str(value)


def _group_value(rec: ResultRecord, key: str) -> str:
    """A grouping value: the record field ``key`` if it has one, else ``extra[key]`` (text), else
    "–"."""
    if key in ResultRecord.__dataclass_fields__:
        return str(getattr(rec, key))
    if key == "protocol":
        return record_protocol(rec) or DASH
    value = (rec.extra or {}).get(key)
    return DASH if value is None else _text_value(value)


def _group_sort_key(group_by: Sequence[str], group: tuple[str, ...]) -> tuple:
    """Sort key of a (``*group_by`` values, method) group: splits in
    :data:`planarena.report.records.SPLIT_ORDER`, the other values alphabetically."""
    names = [*group_by, "method"]
    return tuple(
        split_sort_key(v) if g == "split" else (0, v) for g, v in zip(names, group, strict=True)
    )


def task_metric_table(
    records: Iterable[ResultRecord],
    task: str,
    metric_keys: Sequence[str] | None = None,
    group_by: Sequence[str] = ("domain",),
    text_keys: Sequence[str] = (),
    unit: str = "instances",
) -> pd.DataFrame | None:
    """Mean ± population std over seeds of per-seed means of ``extra`` metrics, for one task.

    ``metric_keys`` None: every ``hit@k`` / ``acc@k`` key found. Each key is a declared metric
    (:func:`planarena.report.metrics.metric`), aggregated and printed as it declares.
    ``group_by`` names record fields (``"domain"``, ``"split"``) or ``extra`` keys
    (``"protocol"``); rows are grouped by them plus method and sorted by them (splits in
    :data:`planarena.report.records.SPLIT_ORDER`), then method. ``text_keys`` are ``extra`` keys
    shown as a column after ``method``: the distinct values in the group, joined with "; " ("–"
    when no record has one), e.g. ``inputs``. Then ``seeds`` (how many) and ``unit`` (distinct
    problems: instances, or the trajectories' problems), both counting only records that report a
    metric value (an ``error`` record reports none; it is listed under Problems). Per seed, a
    metric is the mean over the group's records that report it. Returns None when no record has
    the task (so the section says so instead of an invented table).

    Raises:
        KeyError: a metric key is not declared (see :func:`planarena.report.metrics.metric`).
    """
    recs = [r for r in latest_records(records) if record_task(r) == task]
    if not recs:
        return None
    if metric_keys is None:
        found = {str(k) for r in recs for k in (r.extra or {}) if RANK_KEY.match(str(k))}
        metric_keys = sorted(found, key=rank_metric_sort_key)
    declared = {k: metric(k) for k in metric_keys}
    values: dict[tuple, dict[str, dict[int, list[float]]]] = defaultdict(
        lambda: defaultdict(lambda: defaultdict(list))
    )
    texts: dict[tuple, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    seeds: dict[tuple, set[int]] = defaultdict(set)
    problems: dict[tuple, set[str]] = defaultdict(set)
    for r in recs:
        extra = r.extra or {}
        group = tuple(_group_value(r, g) for g in group_by) + (r.method,)
        seeds[group]  # every group gets a row, even one whose records report no value
        for k in text_keys:
            if extra.get(k) is not None:
                texts[group][k].add(_text_value(extra[k]))
        for k in metric_keys:
            v = extra.get(k)
            if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v):
                values[group][k][r.seed].append(float(v))
                seeds[group].add(r.seed)
                problems[group].add(r.problem)
    rows = []
    for group in sorted(seeds, key=lambda g: _group_sort_key(group_by, g)):
        row = dict(zip([*group_by, "method"], group, strict=True))
        for k in text_keys:
            row[k] = "; ".join(sorted(texts[group][k])) or DASH
        row["seeds"] = str(len(seeds[group]))
        row[unit] = str(len(problems[group]))
        for k in metric_keys:
            per_seed = [float(np.mean(v)) for _, v in sorted(values[group][k].items())]
            row[k] = (declared[k].format(*declared[k].aggregate(per_seed), runs=len(per_seed))
                      if per_seed else DASH)
        rows.append(row)
    columns = [*group_by, "method", *text_keys, "seeds", unit, *metric_keys]
    return pd.DataFrame(rows, columns=columns)


#: rows of the successor-set table: one cell per protocol, domain, split and kind of reference
#: plan (``astar_lmcut``: optimal; ``lama_first``: not), so Hit@k along optimal plans is never mixed
#: with Hit@k along LAMA plans (docs/concepts.md#floors-and-ceilings)
GROUPS = ("protocol", "domain", "split", "reference_plan")

#: the row that gives each cell's floor (a uniform random ranker of the successors)
CHANCE_ROW = CHANCE_ROW_TEXT
TRIVIAL = "trivial"


def held_out_mean(records: Iterable[ResultRecord], key: str) -> dict[str, float]:
    """Method -> ``extra[key]`` of its successor-set records over held-out splits: per seed the
    mean over trajectories, then the mean over seeds (the headline number of ``metrics.json``)."""
    recs = [r for r in latest_records(records) if record_task(r) == "rank_successors"
            and _group_value(r, "protocol") == "successor_set" and is_held_out(r.split)]
    by_method = seed_means(recs, lambda r: r.method, key)
    return {m: float(np.mean(list(seeds.values()))) for m, seeds in by_method.items() if seeds}


def successor_floors(records: Iterable[ResultRecord]) -> dict[tuple[str, str, str], dict]:
    """Per (protocol, domain, split, reference plan): the floor of the successor-set cells from the records'
    ``hit_chance@k``, ``successors`` and ``at_most@k`` (written by the protocol, the same for every
    method; :func:`planarena.protocols.successor_set.successor_floor`), one value per trajectory:
    ``hit_chance@k`` and ``successors`` are means over the trajectories, ``trivial@k`` says every step
    of every trajectory has at most k successors (Hit@k is then 1 for any ranker), ``n`` counts the
    trajectories."""
    per_traj: dict[tuple, dict[str, dict]] = defaultdict(dict)
    for r in latest_records(records):
        extra = r.extra or {}
        if record_task(r) != "rank_successors" or "successors" not in extra:
            continue
        group = (_group_value(r, "protocol"), r.domain, r.split, _group_value(r, "reference_plan"))
        per_traj[group].setdefault(r.problem, extra)
    out = {}
    for group, trajs in per_traj.items():
        vals = list(trajs.values())
        floor: dict[str, Any] = {"n": len(vals), "successors": float(np.mean([v["successors"] for v in vals]))}
        for key in vals[0]:
            m = re.match(r"^(hit_chance|at_most)@(\d+)$", str(key))
            if m and m.group(1) == "hit_chance":
                floor[key] = float(np.mean([v.get(key, math.nan) for v in vals]))
            elif m:
                floor[f"trivial@{m.group(2)}"] = all(v.get(key) == 1.0 for v in vals)
        out[group] = floor
    return out


def successor_set_table(records: Iterable[ResultRecord]) -> pd.DataFrame | None:
    """The section's table: :func:`task_metric_table` of ``rank_successors`` by protocol,
    domain and split, with the records' ``inputs`` and trajectory counts, and each cell's floor
    (:func:`successor_floors`): a first row per (protocol, domain, split) for the uniform random
    ranker, a ``successors`` column (mean successors per step), and Hit@k values marked
    ``trivial`` where every step has at most k successors. ``records`` should hold no
    candidate-pool records (those have their own subsection)."""
    records = list(records)
    table = task_metric_table(
        records,
        "rank_successors",
        None,
        GROUPS,
        text_keys=("inputs",),
        unit="trajectories",
    )
    if table is None:
        return None
    floors = successor_floors(records)
    hit_keys = [c for c in table.columns if RANK_KEY.match(str(c))]
    rows = []
    for group, g in table.groupby(list(GROUPS), sort=False):
        floor = floors.get(group)
        if floor is not None:
            chance = {k: f"{floor[f'hit_chance@{k[4:]}']:.2f}" if f"hit_chance@{k[4:]}" in floor else DASH
                      for k in hit_keys}
            rows.append({**dict(zip(GROUPS, group, strict=True)), "method": CHANCE_ROW,
                         "inputs": DASH, "seeds": DASH, "trajectories": str(floor["n"]), **chance})
        for row in g.to_dict("records"):
            for k in hit_keys:
                if floor and floor.get(k.replace("hit", "trivial")) and row[k] != DASH:
                    row[k] = f"{row[k]} ({TRIVIAL})"
            rows.append(row)
    out = pd.DataFrame(rows, columns=list(table.columns))
    succ = {g: f"{f['successors']:.1f}" for g, f in floors.items()}
    out.insert(out.columns.get_loc("trajectories") + 1, "successors",
               [succ.get(tuple(r[g] for g in GROUPS), DASH) for r in out.to_dict("records")])
    return out.rename(columns={"reference_plan": "reference plan"})


def render_task(
    title: str, table: pd.DataFrame | None, task: str, how: str, description: str | None = None
) -> list[str]:
    """A task section: ``## title``, then the table with its description, or a sentence saying
    that no method of ``task`` has results (``how``: which records would count)."""
    out = [f"## {title}", ""]
    if table is None:
        out.append(f"No `{task}` method has results yet ({how}).")
    else:
        out.append(description or DEFAULT_DESCRIPTION)
        out += ["", md_table(table)]
    return out


def successor_set_pivots(table: pd.DataFrame | None) -> list[tuple[str, str, pd.DataFrame]]:
    """:func:`successor_set_table` pivoted: per (domain, Hit@k) a table with a row per method (the
    *uniform random ranker* first, then ``inputs`` and ``seeds``), a column per split and reference plan
    (``split`` alone when the split has one kind of reference plan), and two closing rows with
    each column's mean successors per step and trajectory count. Returns (domain, k key, table)
    triples in the table's order (protocols other than ``successor_set`` keep their name in the
    domain title)."""
    if table is None or table.empty:
        return []
    hit_keys = [c for c in table.columns if RANK_KEY.match(str(c))]
    out = []
    t = table.copy()
    t["where"] = [d if p == "successor_set" else f"{d} ({p})" for p, d in zip(t["protocol"], t["domain"], strict=True)]
    for where in dict.fromkeys(t["where"]):
        d = t[t["where"] == where]
        cols: dict[tuple[str, str], str] = {}
        for split in dict.fromkeys(d["split"]):
            refs = list(dict.fromkeys(d[d["split"] == split]["reference plan"]))
            for ref in refs:
                cols[(split, ref)] = split if len(refs) == 1 else f"{split} ({ref})"
        methods = list(dict.fromkeys(m for m in d["method"] if m != CHANCE_ROW))
        by = {(r["method"], r["split"], r["reference plan"]): r for r in d.to_dict("records")}
        for key in hit_keys:
            rows = []
            for m in [CHANCE_ROW, *methods]:
                cells = [by.get((m, s, ref)) for s, ref in cols]
                inputs = "; ".join(dict.fromkeys(c["inputs"] for c in cells if c)) or DASH
                seeds = "; ".join(dict.fromkeys(c["seeds"] for c in cells if c)) or DASH
                rows.append({"method": m, "inputs": inputs, "seeds": seeds,
                             **{title: (by[(m, *c)][key] if (m, *c) in by else DASH) for c, title in cols.items()}})
            for label, field in (("*successors per step*", "successors"), ("*trajectories*", "trajectories")):
                rows.append({"method": label, "inputs": DASH, "seeds": DASH, **{
                    title: next((r[field] for r in d.to_dict("records")
                                 if (r["split"], r["reference plan"]) == c), DASH) for c, title in cols.items()}})
            # floor rows without any value (records without the floor fields) are left out
            rows = [r for r in rows if r["method"] in methods
                    or any(r[title] != DASH for title in cols.values())]
            out.append((where, key, pd.DataFrame(rows, columns=["method", "inputs", "seeds", *cols.values()])))
    return out


def render(table: pd.DataFrame | None) -> list[str]:
    """Markdown lines of the detail page's section: the successor-set tables pivoted per domain
    and Hit@k (:func:`successor_set_pivots`)."""
    out = ["## Hit@k", ""]
    if table is None:
        out.append("No `rank_successors` method has results yet (records whose `extra` has "
                   "`task: rank_successors` or `hit@k`/`acc@k` values).")
        return out
    out.append(DESCRIPTION)
    for where, key, pivot in successor_set_pivots(table):
        out += ["", f"### {where}: {key}", "", md_table(pivot)]
    return out
