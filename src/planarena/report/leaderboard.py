"""The ``report`` stage: leaderboard markdown, metrics JSON and plots from result records.

Inputs (DESIGN.md, "The pipeline"; all written by earlier stages):

* ``data/results/*.jsonl``: :class:`planarena.core.records.ResultRecord` lines, one per attempt.
* ``data/plans/records.jsonl``: one line per problem from the planning stage (reference plans).
* ``data/problems/manifest.jsonl``: :class:`planarena.core.problemset.ProblemEntry` lines (instance
  counts per domain and split).

Outputs: ``reports/leaderboard.md``, ``reports/metrics.json`` (for ``dvc metrics show`` /
``dvc exp show``) and ``reports/plots/coverage_by_size.png``.

Rules this module implements (DESIGN.md, "Contracts" and "Leaderboards"):

* Every number is computed from the records, never typed in; published numbers come only from
  :mod:`planarena.report.published.state_centric` and are rendered in their own labelled section.
* A plan counts as solved only if ``outcome == "solved"`` *and* the independent validator accepted
  it (:attr:`ResultRecord.counts_as_solved`); plans the validator rejected are listed under
  Problems with the validator's reason.
* Coverage of a (domain, split, method) cell is the mean over seeds of the per-seed fraction of the
  split's instances solved, with the population standard deviation (``ddof=0``) over seeds and the
  instance count. Instances without a record count as unsolved. A split with no instances is
  reported as "no instances" (never a division by zero).
* Sections, in the order DESIGN.md "Leaderboards" fixes: Problems, Info, Coverage, Hit@k, Schema
  learning, Cost, Per-domain detail, Published reference rows, Plots.
* Output is deterministic: the same inputs, params, git state and installed packages give the same
  bytes (no timestamps; all tables sorted).

The computation is split into pure functions (``coverage_table``, ``coverage_sum``,
``cost_table``, ``render_leaderboard``, ...) that the tests call directly; :func:`run_stage` does
the file and subprocess I/O.
"""

from __future__ import annotations

import importlib.metadata
import json
import math
import os
import platform
import re
import subprocess
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from planarena.config import SPLITS, Layout
from planarena.core.io import atomic_write_text, read_jsonl, stable_hash
from planarena.core.problemset import ProblemEntry, ProblemSet
from planarena.core.records import ResultRecord, iter_records
from planarena.report.hitk import (
    is_pool_record,
    plot_hit5_by_protocol,
    pool_summary,
    render_pool_md,
    render_published_md,
)
from planarena.report.published.state_centric import PUBLISHED_TABLES, PublishedMatrix

#: Display order of split names: the SATr splits, then the IPC 2023 Learning Track test splits
#: (DESIGN.md "Contracts: Problem set"); any other split sorts after these, alphabetically.
SPLIT_ORDER: tuple[str, ...] = SPLITS + ("test-easy", "test-medium", "test-hard")

#: Distributions whose versions the Info section lists (planarena's key dependencies).
KEY_PACKAGES: tuple[str, ...] = (
    "dvc",
    "pymimir",
    "wlplan",
    "up-fast-downward",
    "unified-planning",
    "torch",
    "xgboost-cpu",
    "sentence-transformers",
    "pypddl-datasets",
    "pandas",
)

#: ``extra`` keys the Cost section shows when a method reports them, with their column titles.
COST_EXTRA_KEYS: tuple[tuple[str, str], ...] = (
    ("parameters", "parameters"),
    ("tree_nodes", "tree nodes"),
    ("train_time_s", "train time (s)"),
    ("time_per_step_s", "decode time per step (s)"),
)

#: cost keys that vary per attempt: averaged over all records, not taken once per seed
PER_ATTEMPT_COST_KEYS = frozenset({"time_per_step_s"})

#: ``extra`` keys of ``learn_schema`` records shown in the Schema learning section (DESIGN.md
#: "Leaderboards": precision, recall, N_s/N_c/N_sc).
SCHEMA_KEYS: tuple[str, ...] = ("precision", "recall", "N_s", "N_c", "N_sc")

#: Wall times below this (seconds) are raised to it before taking logarithms for geometric means.
MIN_TIME_S = 1e-3

DASH = "–"
NO_INSTANCES = "no instances"
PLOTS_DIR = "plots"
COVERAGE_PLOT = "coverage_by_size.png"
HITK_PLOT = "hit5_by_protocol.png"
LEADERBOARD = "leaderboard.md"
METRICS = "metrics.json"

_RANK_KEY = re.compile(r"^(hit|acc)@(\d+)$", re.IGNORECASE)
_EXAMPLES = 3
_REASON_CHARS = 200

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


# --------------------------------------------------------------------------------------------
# Loading and normalising inputs
# --------------------------------------------------------------------------------------------


@dataclass
class ReportInputs:
    """Everything the report reads, already parsed.

    ``records`` are all result records in file order (superseded duplicates included; see
    :func:`latest_records`); ``plan_records`` the planning stage's per-problem dicts;
    ``manifest`` the problem entries; ``domains``/``splits`` optional names declared in params
    (so that a domain or split with zero problems still gets a "no instances" row).
    """

    records: list[ResultRecord]
    plan_records: list[dict]
    manifest: list[ProblemEntry]
    domains: tuple[str, ...] = ()
    splits: tuple[str, ...] = ()


def load_inputs(
    layout: Layout, domains: Sequence[str] = (), splits: Sequence[str] = ()
) -> ReportInputs:
    """Read results, planning-stage records and the manifest from ``layout``.

    Raises:
        FileNotFoundError: ``data/problems/manifest.jsonl`` is missing (names the stage to run).
        ValueError: a results or plans line other than the last is not JSON (names file:line).
    """
    problems = ProblemSet(layout.problems)
    files = sorted(Path(layout.results).glob("*.jsonl")) if Path(layout.results).is_dir() else []
    records = list(iter_records(files))
    plan_records = read_jsonl(Path(layout.plans) / "records.jsonl")
    return ReportInputs(
        records=records,
        plan_records=plan_records,
        manifest=list(problems.entries),
        domains=tuple(domains),
        splits=tuple(splits),
    )


def declared_names(node: Any, key: str) -> tuple[str, ...]:
    """Names declared under ``node[key]`` when it is a list of names or a mapping keyed by name;
    ``()`` for anything else."""
    value = node.get(key) if isinstance(node, Mapping) else None
    if isinstance(value, Mapping):
        return tuple(str(k) for k in value)
    if isinstance(value, (list, tuple)):
        return tuple(str(v) for v in value if isinstance(v, (str, int)))
    return ()


def declared_domains(params: Mapping) -> tuple[str, ...]:
    """Domains of the selected suite: ``suites.<suite>.domains`` (list, or mapping keyed by name).

    So that a domain that produced zero problems still appears, as "no instances".
    """
    suite = params.get("suite")
    suites = params.get("suites")
    if isinstance(suite, str) and isinstance(suites, Mapping):
        return declared_names(suites.get(suite), "domains")
    return ()


def declared_splits(params: Mapping) -> tuple[str, ...]:
    """Splits methods are asked to run on (``evaluation.splits``); an empty one is reported."""
    return declared_names(params.get("evaluation"), "splits")


def _entries(manifest: Iterable[ProblemEntry | Mapping]) -> list[ProblemEntry]:
    return [e if isinstance(e, ProblemEntry) else ProblemEntry(**e) for e in manifest]


def split_sort_key(split: str) -> tuple[int, str]:
    """Sort key putting splits in :data:`SPLIT_ORDER`, unknown splits last (alphabetically)."""
    try:
        return (SPLIT_ORDER.index(split), "")
    except ValueError:
        return (len(SPLIT_ORDER), split)


def record_task(rec: ResultRecord) -> str:
    """The task of a record: plan, rank_successors or learn_schema (DESIGN.md "Method registry").

    In order: ``extra["task"]`` when set; ``rank_successors`` when ``extra`` holds ``hit@k`` or
    ``acc@k`` values; ``plan`` when the method's declared ``extra["tasks"]`` (written by
    :mod:`planarena.runner.stages`) include it or are absent; else the first declared task.
    """
    extra = rec.extra or {}
    task = extra.get("task")
    if isinstance(task, str) and task:
        return task
    if any(_RANK_KEY.match(str(k)) for k in extra):
        return "rank_successors"
    tasks = extra.get("tasks")
    if isinstance(tasks, (list, tuple)) and tasks and "plan" not in tasks:
        return str(sorted(tasks)[0])
    return "plan"


def record_protocol(rec: ResultRecord) -> str:
    """The record's evaluation protocol (``extra["protocol"]``, e.g. ``successor_set``) as text;
    ``""`` when it has none. Non-text values are rendered as sorted JSON so they compare stably."""
    value = (rec.extra or {}).get("protocol")
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, sort_keys=True, default=str)


def attempt_key(rec: ResultRecord) -> tuple[str, str, str, str, str, str, int]:
    """Identity of an attempt: (method, task, protocol, domain, split, problem, seed).

    Task (:func:`record_task`) and protocol are part of it because one results file holds both
    the plan records and the successor-ranking records of the same method, problem and seed.
    """
    return (
        rec.method,
        record_task(rec),
        record_protocol(rec),
        rec.domain,
        rec.split,
        rec.problem,
        rec.seed,
    )


def _record_sort_key(r: ResultRecord) -> tuple:
    return (
        r.method,
        r.domain,
        split_sort_key(r.split),
        r.problem,
        r.seed,
        record_task(r),
        record_protocol(r),
    )


def latest_records(records: Iterable[ResultRecord]) -> list[ResultRecord]:
    """The last record per attempt (:func:`attempt_key`), sorted.

    Result files are append-only (``records.JsonlWriter``), so a later line for the same attempt
    supersedes an earlier one (e.g. a rerun with another configuration). Records of another task
    or protocol (a ``rank_successors`` record next to the ``plan`` record of the same method,
    problem and seed) are different attempts and never supersede each other.
    """
    last: dict[tuple, ResultRecord] = {}
    for r in records:
        last[attempt_key(r)] = r
    return sorted(last.values(), key=_record_sort_key)


def method_order(records: Iterable[ResultRecord]) -> list[str]:
    """Method names sorted by (family, method): methods of one paper stay together."""
    family: dict[str, str] = {}
    for r in records:
        family.setdefault(r.method, r.family or "")
    return sorted(family, key=lambda m: (family[m], m))


def instance_index(
    manifest: Iterable[ProblemEntry | Mapping],
    records: Iterable[ResultRecord] = (),
    domains: Sequence[str] = (),
    splits: Sequence[str] = (),
) -> dict[tuple[str, str], frozenset[str]]:
    """Problems per (domain, split), over every domain and split known from any input.

    The universe of domains (splits) is the union of those in params, the manifest and the
    records; every combination is present, with an empty set when it has no instances.
    """
    problems: dict[tuple[str, str], set[str]] = defaultdict(set)
    for e in _entries(manifest):
        problems[(e.domain, e.split)].add(e.problem)
    records = list(records)
    all_domains = set(domains) | {d for d, _ in problems} | {r.domain for r in records}
    all_splits = set(splits) | {s for _, s in problems} | {r.split for r in records}
    return {
        (d, s): frozenset(problems.get((d, s), ()))
        for d in sorted(all_domains)
        for s in sorted(all_splits, key=split_sort_key)
    }


# --------------------------------------------------------------------------------------------
# Coverage
# --------------------------------------------------------------------------------------------


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
    (population, ``ddof=0``) over seeds of ``solved / n``; ``status`` is ``ok``, ``no records``
    (the method has no record there; rendered "–") or ``no instances`` (``n == 0``; ``mean`` and
    ``std`` are NaN). Records for problems not in the manifest are ignored here (see Problems).
    """
    latest = [r for r in latest_records(records) if record_task(r) == "plan"]
    index = instance_index(manifest, latest, domains, splits)
    methods = method_order(latest)
    family = {r.method: r.family for r in latest}
    seeds_of: dict[tuple, set[int]] = defaultdict(set)
    solved_by: dict[tuple, set[str]] = defaultdict(set)
    for r in latest:
        seeds_of[(r.method, r.domain, r.split)].add(r.seed)
        if r.counts_as_solved and r.problem in index[(r.domain, r.split)]:
            solved_by[(r.method, r.domain, r.split, r.seed)].add(r.problem)
    rows = []
    for (domain, split), problems in index.items():
        n = len(problems)
        for m in methods:
            seeds = tuple(sorted(seeds_of.get((m, domain, split), ())))
            solved = tuple(len(solved_by.get((m, domain, split, s), ())) for s in seeds)
            mean = std = math.nan
            if n == 0:
                status = "no instances"
            elif not seeds:
                status = "no records"
            else:
                status = "ok"
                fractions = np.asarray(solved, dtype=float) / n
                mean, std = float(fractions.mean()), float(fractions.std(ddof=0))
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
    """The Sum row per method: solved instances averaged over seeds / total instances.

    Sums over the (domain, split) cells where the method has records and instances. ``mean`` is
    ``sum(mean_i * n_i) / sum(n_i)``; ``std`` is the population std over seeds of the per-seed
    totals, over the seeds common to all those cells (NaN if none is common).
    Columns: method, n, mean, std.
    """
    rows = []
    for m in dict.fromkeys(cov["method"]):
        g = cov[(cov["method"] == m) & (cov["status"] == "ok")]
        if g.empty:
            rows.append(dict(method=m, n=0, mean=math.nan, std=math.nan))
            continue
        n = int(g["n"].sum())
        mean = float((g["mean"] * g["n"]).sum() / n)
        common = set.intersection(*(set(s) for s in g["seeds"]))
        std = math.nan
        if common:
            totals = [
                sum(
                    sol[seeds.index(seed)]
                    for sol, seeds in zip(g["solved"], g["seeds"], strict=True)
                )
                / n
                for seed in sorted(common)
            ]
            std = float(np.std(totals, ddof=0))
        rows.append(dict(method=m, n=n, mean=mean, std=std))
    return pd.DataFrame(rows, columns=["method", "n", "mean", "std"])


def best_methods(values: Mapping[str, float]) -> set[str]:
    """Methods whose value equals the row maximum (ties all win); none when the maximum is 0."""
    finite = {m: v for m, v in values.items() if v is not None and not math.isnan(v)}
    if not finite:
        return set()
    best = max(finite.values())
    if best <= 0:
        return set()
    return {m for m, v in finite.items() if math.isclose(v, best, rel_tol=0.0, abs_tol=1e-9)}


def format_coverage_cell(mean: float, std: float, n: int, bold: bool = False) -> str:
    """``"0.67 ± 0.27 (n=3)"``; std ``n/a`` when undefined; wrapped in ``**`` when ``bold``."""
    spread = "n/a" if math.isnan(std) else f"{std:.2f}"
    text = f"{mean:.2f} ± {spread} (n={n})"
    return f"**{text}**" if bold else text


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
        best = best_methods({m: r.mean for m, r in by_method.items() if r.status == "ok"})
        row = {"Domain": domain, "Split": split}
        for m in methods:
            r = by_method[m]
            if r.status == "no instances":
                row[m] = NO_INSTANCES
            elif r.status == "no records":
                row[m] = DASH
            else:
                row[m] = format_coverage_cell(r.mean, r.std, r.n, m in best)
        rows.append(row)
    by_method = {r.method: r for r in sums.itertuples(index=False)}
    best = best_methods({m: r.mean for m, r in by_method.items() if r.n > 0})
    row = {"Domain": "**Sum**", "Split": "all"}
    for m in methods:
        r = by_method[m]
        row[m] = DASH if r.n == 0 else format_coverage_cell(r.mean, r.std, r.n, m in best)
    rows.append(row)
    return _md_table(pd.DataFrame(rows, columns=["Domain", "Split", *methods]))


# --------------------------------------------------------------------------------------------
# Task metrics (Hit@k / Acc@k, schema learning)
# --------------------------------------------------------------------------------------------


def _rank_metric_sort_key(key: str) -> tuple:
    m = _RANK_KEY.match(key)
    return (m.group(1).lower(), int(m.group(2))) if m else (key, 0)


def _group_value(rec: ResultRecord, key: str) -> str:
    """A grouping value: the record field ``key`` if it has one, else ``extra[key]`` (text), else
    "–"."""
    if key in ResultRecord.__dataclass_fields__:
        return str(getattr(rec, key))
    if key == "protocol":
        return record_protocol(rec) or DASH
    value = (rec.extra or {}).get(key)
    return DASH if value is None else _text_value(value)


def _text_value(value: Any) -> str:
    """``extra`` text for a table cell: lists joined with ", ", everything else ``str``."""
    if isinstance(value, (list, tuple)):
        return ", ".join(str(v) for v in value)
    return str(value)


def _group_sort_key(group_by: Sequence[str], group: tuple[str, ...]) -> tuple:
    """Sort key of a (``*group_by`` values, method) group: splits in :data:`SPLIT_ORDER`, the
    other values alphabetically."""
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

    ``metric_keys`` None: every ``hit@k`` / ``acc@k`` key found. ``group_by`` names record fields
    (``"domain"``, ``"split"``) or ``extra`` keys (``"protocol"``); rows are grouped by them plus
    method and sorted by them (splits in :data:`SPLIT_ORDER`), then method. ``text_keys`` are
    ``extra`` keys shown as a column after ``method``: the distinct values in the group, joined
    with "; " ("–" when no record has one), e.g. ``inputs``. Then ``seeds`` (how many) and
    ``unit`` (distinct problems: instances, or the trajectories' problems), both counting only
    records that report a metric value (an ``error`` record reports none; it is listed under
    Problems). Per seed, a metric is the mean over the group's records that report it. Returns
    None when no record has the task (so the section says so instead of an invented table).
    """
    recs = [r for r in latest_records(records) if record_task(r) == task]
    if not recs:
        return None
    if metric_keys is None:
        found = {str(k) for r in recs for k in (r.extra or {}) if _RANK_KEY.match(str(k))}
        metric_keys = sorted(found, key=_rank_metric_sort_key)
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
            row[k] = (
                f"{np.mean(per_seed):.2f} ± {np.std(per_seed, ddof=0):.2f}" if per_seed else DASH
            )
        rows.append(row)
    columns = [*group_by, "method", *text_keys, "seeds", unit, *metric_keys]
    return pd.DataFrame(rows, columns=columns)


# --------------------------------------------------------------------------------------------
# Cost
# --------------------------------------------------------------------------------------------


def geometric_mean(times: Sequence[float], floor: float = MIN_TIME_S) -> float:
    """Geometric mean of times, each raised to at least ``floor`` seconds (log(0) is undefined)."""
    return float(math.exp(np.mean([math.log(max(t, floor)) for t in times])))


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


def _format_number(x: float, key: str) -> str:
    if key == "train_time_s":
        return f"{x:.1f}"
    if key == "time_per_step_s":
        return f"{x:.4f}"
    return f"{int(round(x)):,}" if float(x).is_integer() else f"{x:,.1f}"


def cost_table(records: Iterable[ResultRecord]) -> pd.DataFrame:
    """Cost per (method, domain, task) (DESIGN.md "Metrics": time as geometric mean over commonly
    solved). A method with several tasks (plan and rank_successors) gets one row per task, so that
    the wall times of one task never mix into the other's.

    Columns: ``Task``; ``commonly solved`` (instances over the domain's splits solved by every
    plan method there, see :func:`commonly_solved`); ``time/problem, geo-mean (s)`` (per problem,
    the mean wall time of the method's solved-and-validated attempts, then the geometric mean over
    the commonly solved instances); ``mean wall time, all attempts (s)``; ``attempts``; and, when
    any record has them, the ``extra`` values of :data:`COST_EXTRA_KEYS` (per seed the first value
    reported, then the mean over seeds). The time columns are "–" for tasks other than plan.
    """
    latest = latest_records(records)
    common = commonly_solved(latest)
    extra_present = [
        (k, t) for k, t in COST_EXTRA_KEYS if any(k in (r.extra or {}) for r in latest)
    ]
    groups: dict[tuple[str, str, str], list[ResultRecord]] = defaultdict(list)
    for r in latest:
        groups[(r.method, r.domain, record_task(r))].append(r)
    order = {m: i for i, m in enumerate(method_order(latest))}
    rows = []
    for method, domain, task in sorted(groups, key=lambda k: (order[k[0]], k[1], k[2])):
        recs = groups[(method, domain, task)]
        is_plan = task == "plan"
        row: dict[str, Any] = {"Method": method, "Domain": domain, "Task": task}
        if is_plan:
            solved_times: dict[tuple[str, str], list[float]] = defaultdict(list)
            for r in recs:
                if r.counts_as_solved and r.problem in common.get((r.domain, r.split), ()):
                    solved_times[(r.split, r.problem)].append(r.wall_time)
            per_problem = [float(np.mean(v)) for _, v in sorted(solved_times.items())]
            row["commonly solved"] = str(len(per_problem))
            row["time/problem, geo-mean (s)"] = (
                f"{geometric_mean(per_problem):.3f}" if per_problem else DASH
            )
            # a floor method (random walk) can empty the common set: also show the method's own
            own: dict[tuple[str, str], list[float]] = defaultdict(list)
            for r in recs:
                if r.counts_as_solved:
                    own[(r.split, r.problem)].append(r.wall_time)
            own_times = [float(np.mean(v)) for _, v in sorted(own.items())]
            row["own solved"] = str(len(own_times))
            row["time/problem over own solved, geo-mean (s)"] = (
                f"{geometric_mean(own_times):.3f}" if own_times else DASH
            )
        else:
            row["commonly solved"] = DASH
            row["time/problem, geo-mean (s)"] = DASH
            row["own solved"] = DASH
            row["time/problem over own solved, geo-mean (s)"] = DASH
        row["mean wall time, all attempts (s)"] = f"{np.mean([r.wall_time for r in recs]):.3f}"
        row["attempts"] = str(len(recs))
        for key, title in extra_present:
            per_seed: dict[int, float] = {}
            every: list[float] = []
            for r in recs:
                v = (r.extra or {}).get(key)
                if isinstance(v, (int, float)) and not isinstance(v, bool):
                    per_seed.setdefault(r.seed, float(v))
                    every.append(float(v))
            values = every if key in PER_ATTEMPT_COST_KEYS else list(per_seed.values())
            row[title] = _format_number(float(np.mean(values)), key) if values else DASH
        rows.append(row)
    columns = [
        "Method",
        "Domain",
        "Task",
        "commonly solved",
        "time/problem, geo-mean (s)",
        "own solved",
        "time/problem over own solved, geo-mean (s)",
        "mean wall time, all attempts (s)",
        "attempts",
        *(t for _, t in extra_present),
    ]
    return pd.DataFrame(rows, columns=columns)


# --------------------------------------------------------------------------------------------
# Per-domain detail
# --------------------------------------------------------------------------------------------


def _detail_cell(solved: int, attempted: int, timeouts: int) -> str:
    return f"{solved}/{attempted}, TO {timeouts}"


def detail_tables(
    records: Iterable[ResultRecord],
    plan_records: Iterable[Mapping],
    index: Mapping[tuple[str, str], frozenset[str]],
) -> dict[str, pd.DataFrame]:
    """Per domain, a table split x (plan stage, plan methods): ``solved/attempted, TO timeouts``.

    ``attempted`` counts attempts (records, over all seeds); ``solved`` those solved and
    validated; ``TO`` those that timed out. "–": no records; "no instances": empty split.
    """
    latest = [r for r in latest_records(records) if record_task(r) == "plan"]
    methods = method_order(latest)
    counts: dict[tuple, Counter] = defaultdict(Counter)
    for r in latest:
        c = counts[(r.method, r.domain, r.split)]
        c["attempted"] += 1
        c["solved"] += int(r.counts_as_solved)
        c["timeout"] += int(r.outcome == "timeout")
    stage: dict[tuple, Counter] = defaultdict(Counter)
    for p in plan_records:
        c = stage[(p.get("domain"), p.get("split"))]
        c["attempted"] += 1
        c["solved"] += int(p.get("outcome") == "solved" and bool(p.get("validated")))
        c["timeout"] += int(p.get("outcome") == "timeout")
    out: dict[str, pd.DataFrame] = {}
    for domain in sorted({d for d, _ in index}):
        rows = []
        for (d, split), problems in index.items():
            if d != domain:
                continue
            row = {"Split": split, "instances": str(len(problems))}
            for col, c in [("plan stage", stage.get((d, split)))] + [
                (m, counts.get((m, d, split))) for m in methods
            ]:
                if not problems:
                    row[col] = NO_INSTANCES
                elif not c:
                    row[col] = DASH
                else:
                    row[col] = _detail_cell(c["solved"], c["attempted"], c["timeout"])
            rows.append(row)
        out[domain] = pd.DataFrame(rows, columns=["Split", "instances", "plan stage", *methods])
    return out


# --------------------------------------------------------------------------------------------
# Problems
# --------------------------------------------------------------------------------------------


def _md_text(text: Any, limit: int = _REASON_CHARS) -> str:
    """Free text made safe for one markdown table cell (no newlines or pipes; truncated)."""
    s = " ".join(str(text).split())
    if len(s) > limit:
        s = s[: limit - 1] + "…"
    return s.replace("|", "\\|")


def _examples(items: Sequence[str]) -> str:
    items = sorted(items)
    shown = ", ".join(items[:_EXAMPLES])
    return shown + (f", … (+{len(items) - _EXAMPLES})" if len(items) > _EXAMPLES else "")


def _rejection_reason(reason: Any, validated_by: Any = "", has_validator_field: bool = True) -> str:
    if reason:
        return str(reason)
    if has_validator_field and not validated_by:
        return "(not validated: no validator verdict recorded)"
    return "(validator gave no reason)"


def failed_runs_table(records: Iterable[ResultRecord]) -> pd.DataFrame:
    """Records with outcome ``error`` or ``diverged``, grouped by method, cell and reason."""
    groups: dict[tuple, list[str]] = defaultdict(list)
    for r in latest_records(records):
        if r.outcome in ("error", "diverged"):
            reason = r.failure_reason or "(no failure reason recorded)"
            groups[(r.method, r.domain, r.split, r.outcome, reason)].append(
                f"{r.problem} (seed {r.seed})"
            )
    rows = [
        {
            "Method": m,
            "Domain": d,
            "Split": s,
            "Outcome": o,
            "Attempts": str(len(ex)),
            "Failure reason": _md_text(reason),
            "Examples": _md_text(_examples(ex), 10_000),
        }
        for (m, d, s, o, reason), ex in sorted(
            groups.items(),
            key=lambda kv: (kv[0][0], kv[0][1], split_sort_key(kv[0][2]), *kv[0][3:]),
        )
    ]
    return pd.DataFrame(
        rows,
        columns=["Method", "Domain", "Split", "Outcome", "Attempts", "Failure reason", "Examples"],
    )


def rejected_plans_table(
    records: Iterable[ResultRecord], plan_records: Iterable[Mapping] = ()
) -> pd.DataFrame:
    """Plans with outcome ``solved`` that the validator did not accept, with the validator's reason.

    Covers method results of the ``plan`` task (other tasks produce no plan to validate) and the
    planning stage's reference plans (source ``plan stage (<planner>)``). None of them counts as
    solved anywhere in the report.
    """
    groups: dict[tuple, list[str]] = defaultdict(list)
    for r in latest_records(records):
        if record_task(r) == "plan" and r.outcome == "solved" and not r.validated:
            reason = _rejection_reason(r.validator_reason, r.validated_by)
            groups[(r.method, r.domain, r.split, reason)].append(f"{r.problem} (seed {r.seed})")
    for p in plan_records:
        if p.get("outcome") == "solved" and not p.get("validated"):
            source = f"plan stage ({p.get('planner') or 'unknown planner'})"
            reason = _rejection_reason(p.get("validator_reason"), has_validator_field=False)
            groups[(source, p.get("domain"), p.get("split"), reason)].append(str(p.get("problem")))
    rows = [
        {
            "Source": src,
            "Domain": d,
            "Split": s,
            "Plans": str(len(ex)),
            "Validator reason": _md_text(reason),
            "Examples": _md_text(_examples(ex), 10_000),
        }
        for (src, d, s, reason), ex in sorted(
            groups.items(),
            key=lambda kv: (kv[0][0], str(kv[0][1]), split_sort_key(str(kv[0][2])), kv[0][3]),
        )
    ]
    return pd.DataFrame(
        rows, columns=["Source", "Domain", "Split", "Plans", "Validator reason", "Examples"]
    )


PLAN_STAGE_COLUMNS = (
    "Domain",
    "Split",
    "instances",
    "solved+validated",
    "rejected",
    "unsolved",
    "timeout",
    "memout",
    "error",
    "missing",
)


def plan_stage_summary(
    plan_records: Iterable[Mapping], index: Mapping[tuple[str, str], frozenset[str]]
) -> pd.DataFrame:
    """Planning-stage outcomes per (domain, split) (columns :data:`PLAN_STAGE_COLUMNS`).

    ``missing``: manifest instances without a planning record. Empty splits are left out (they
    are listed once under "Empty splits").
    """
    counts: dict[tuple, Counter] = defaultdict(Counter)
    seen: dict[tuple, set] = defaultdict(set)
    for p in plan_records:
        key = (p.get("domain"), p.get("split"))
        if p.get("problem") not in index.get(key, ()):
            continue
        seen[key].add(p.get("problem"))
        outcome = p.get("outcome")
        if outcome == "solved":
            counts[key]["solved+validated" if p.get("validated") else "rejected"] += 1
        elif outcome in ("unsolved", "timeout", "memout", "error"):
            counts[key][outcome] += 1
        else:
            counts[key]["error"] += 1
    rows = []
    for (d, s), problems in index.items():
        if not problems:
            continue
        c = counts[(d, s)]
        row = {"Domain": d, "Split": s, "instances": len(problems)}
        row.update({k: c[k] for k in PLAN_STAGE_COLUMNS[3:9]})
        row["missing"] = len(problems) - len(seen[(d, s)])
        rows.append(row)
    return pd.DataFrame(rows, columns=list(PLAN_STAGE_COLUMNS))


def plan_stage_failures(plan_records: Iterable[Mapping]) -> pd.DataFrame:
    """Failure reasons of planner attempts (``attempts[*].failure_reason``) of unsolved problems."""
    groups: dict[tuple, list[str]] = defaultdict(list)
    for p in plan_records:
        if p.get("outcome") in ("solved", None):
            continue
        for a in p.get("attempts") or []:
            if a.get("outcome") in ("error", "memout", "timeout") or a.get("failure_reason"):
                reason = a.get("failure_reason") or f"({a.get('outcome')}, no reason recorded)"
                key = (
                    str(p.get("domain")),
                    str(p.get("split")),
                    str(a.get("config")),
                    str(a.get("outcome")),
                    reason,
                )
                groups[key].append(str(p.get("problem")))
    rows = [
        {
            "Domain": d,
            "Split": s,
            "Planner": cfg,
            "Outcome": o,
            "Problems": str(len(ex)),
            "Reason": _md_text(reason),
            "Examples": _md_text(_examples(ex), 10_000),
        }
        for (d, s, cfg, o, reason), ex in sorted(
            groups.items(), key=lambda kv: (kv[0][0], split_sort_key(kv[0][1]), *kv[0][2:])
        )
    ]
    return pd.DataFrame(
        rows, columns=["Domain", "Split", "Planner", "Outcome", "Problems", "Reason", "Examples"]
    )


def consistency_notes(
    records: Sequence[ResultRecord],
    plan_records: Sequence[Mapping],
    index: Mapping[tuple[str, str], frozenset[str]],
) -> list[str]:
    """Data issues that would silently skew numbers: stale records, incomplete seeds, reruns."""
    notes: list[str] = []
    latest = latest_records(records)
    stale: dict[tuple, list[str]] = defaultdict(list)
    for r in latest:
        if r.problem not in index.get((r.domain, r.split), ()):
            stale[(r.method, r.domain, r.split)].append(f"{r.problem} (seed {r.seed})")
    for (m, d, s), ex in sorted(
        stale.items(), key=lambda kv: (kv[0][0], kv[0][1], split_sort_key(kv[0][2]))
    ):
        notes.append(
            f"`{m}` has {len(ex)} record(s) in `{d}/{s}` for problems not in the manifest "
            f"(ignored): {_md_text(_examples(ex), 10_000)}"
        )
    stale_plans = sorted(
        f"{p.get('domain')}/{p.get('split')}/{p.get('problem')}"
        for p in plan_records
        if p.get("problem") not in index.get((p.get("domain"), p.get("split")), ())
    )
    if stale_plans:
        notes.append(
            f"planning stage has {len(stale_plans)} record(s) for problems not in the manifest "
            f"(ignored): {_md_text(_examples(stale_plans), 10_000)}"
        )
    attempted: dict[tuple, set[str]] = defaultdict(set)
    for r in latest:
        if record_task(r) == "plan" and r.problem in index.get((r.domain, r.split), ()):
            attempted[(r.method, r.domain, r.split, r.seed)].add(r.problem)
    for (m, d, s, seed), probs in sorted(
        attempted.items(), key=lambda kv: (kv[0][0], kv[0][1], split_sort_key(kv[0][2]), kv[0][3])
    ):
        n = len(index[(d, s)])
        if len(probs) < n:
            notes.append(
                f"`{m}` seed {seed} has records for {len(probs)} of {n} instances of `{d}/{s}`; "
                "the missing ones count as unsolved"
            )
    superseded = len(records) - len(latest)
    if superseded:
        notes.append(
            f"{superseded} superseded record(s) (same method, task, protocol, problem and seed "
            "written again) ignored; the last line of each attempt is used"
        )
    hashes: dict[str, set[str]] = defaultdict(set)
    for r in latest:
        hashes[r.method].add(r.config_hash or "(none)")
    for m in sorted(hashes):
        if len(hashes[m]) > 1:
            notes.append(
                f"`{m}`: the records in use come from {len(hashes[m])} configurations "
                f"(config_hash {', '.join(sorted(hashes[m]))})"
            )
    return notes


# --------------------------------------------------------------------------------------------
# Plots
# --------------------------------------------------------------------------------------------


def coverage_by_size(
    records: Iterable[ResultRecord], manifest: Iterable[ProblemEntry | Mapping]
) -> pd.DataFrame:
    """Coverage per (domain, method, instance size), over the splits the method was run on.

    ``coverage`` is the mean over the method's seeds in that domain of the fraction of instances
    of that size solved and validated. ``x`` is the manifest's ``size`` (or ``objects`` in a
    domain where no instance has a size); ``x_name`` names it for the axis (``size (blocks)``).
    Columns: domain, method, x_name, x, instances, coverage.
    """
    entries = _entries(manifest)
    latest = [r for r in latest_records(records) if record_task(r) == "plan"]
    ran: set[tuple] = {(r.method, r.domain, r.split) for r in latest}
    seeds: dict[tuple, set[int]] = defaultdict(set)
    solved: dict[tuple, set[tuple[str, str]]] = defaultdict(set)
    for r in latest:
        seeds[(r.method, r.domain)].add(r.seed)
        if r.counts_as_solved:
            solved[(r.method, r.domain, r.seed)].add((r.split, r.problem))
    rows = []
    for domain in sorted({e.domain for e in entries}):
        dom = [e for e in entries if e.domain == domain]
        x_name = "size" if any(e.size is not None for e in dom) else "objects"
        x_label = next((e.size_param for e in dom if e.size is not None and e.size_param), "")
        x_label = f"size ({x_label})" if x_name == "size" and x_label else x_name
        for m in method_order(latest):
            if not seeds.get((m, domain)):
                continue
            by_x: dict[int, list[ProblemEntry]] = defaultdict(list)
            for e in dom:
                x = getattr(e, x_name)
                if (m, domain, e.split) in ran and x is not None:
                    by_x[x].append(e)
            for x in sorted(by_x):
                group = by_x[x]
                fractions = [
                    sum((e.split, e.problem) in solved.get((m, domain, s), ()) for e in group)
                    / len(group)
                    for s in sorted(seeds[(m, domain)])
                ]
                rows.append(
                    dict(
                        domain=domain,
                        method=m,
                        x_name=x_label,
                        x=x,
                        instances=len(group),
                        coverage=float(np.mean(fractions)),
                    )
                )
    return pd.DataFrame(rows, columns=["domain", "method", "x_name", "x", "instances", "coverage"])


_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "<", ">")
_LINESTYLES = ("-", "--", "-.", ":")


def plot_coverage_by_size(data: pd.DataFrame, path: str | os.PathLike) -> Path:
    """Write a PNG with one subplot per domain: coverage vs instance size, one line per method.

    Uses matplotlib's Agg canvas directly (no display, no global pyplot state) and strips the PNG
    ``Software`` metadata so that identical data gives identical bytes.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    domains = list(dict.fromkeys(data["domain"]))
    if not domains:
        fig = Figure(figsize=(5, 2))
        FigureCanvasAgg(fig)
        fig.text(0.5, 0.5, "no plan results to plot yet", ha="center", va="center")
    else:
        methods = list(dict.fromkeys(data["method"]))
        style = {
            m: (_MARKERS[i % len(_MARKERS)], _LINESTYLES[(i // len(_MARKERS)) % len(_LINESTYLES)])
            for i, m in enumerate(methods)
        }
        ncols = min(len(domains), 3)
        nrows = math.ceil(len(domains) / ncols)
        fig = Figure(figsize=(4.5 * ncols, 3.4 * nrows + 0.6), layout="constrained")
        FigureCanvasAgg(fig)
        axes = fig.subplots(nrows, ncols, squeeze=False)
        for i, domain in enumerate(domains):
            ax = axes[i // ncols][i % ncols]
            d = data[data["domain"] == domain]
            for m in methods:
                g = d[d["method"] == m]
                if g.empty:
                    continue
                marker, ls = style[m]
                ax.plot(g["x"], g["coverage"], marker=marker, linestyle=ls, label=m)
            ax.set_title(domain)
            ax.set_xlabel(f"instance {d['x_name'].iloc[0]}")
            ax.set_ylabel("coverage (solved and validated)")
            ax.set_ylim(-0.05, 1.05)
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
            ax.grid(True, alpha=0.3)
        for j in range(len(domains), nrows * ncols):
            axes[j // ncols][j % ncols].set_visible(False)
        handles, labels = [], []
        for ax in fig.axes:
            for h, label in zip(*ax.get_legend_handles_labels(), strict=True):
                if label not in labels:
                    handles.append(h)
                    labels.append(label)
        fig.legend(handles, labels, loc="outside lower center", ncols=min(len(labels), 4))
    fig.savefig(path, format="png", dpi=100, metadata={"Software": None})
    return path


# --------------------------------------------------------------------------------------------
# Info
# --------------------------------------------------------------------------------------------


def _run_git(args: Sequence[str]) -> str | None:
    try:
        out = subprocess.run(["git", *args], capture_output=True, text=True, timeout=30, check=True)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout


def git_state() -> tuple[str | None, bool | None]:
    """Short HEAD revision and whether tracked files differ from it (None, None outside git).

    Changes to ``params.yaml`` (captured by the params hash), ``dvc.lock`` and ``reports/`` (written
    by the pipeline itself) do not make the tree dirty.
    """
    rev = _run_git(["rev-parse", "--short", "HEAD"])
    if rev is None:
        return None, None
    status = _run_git(
        [
            "status",
            "--porcelain",
            "--untracked-files=no",
            "--",
            ".",
            ":(exclude)params.yaml",
            ":(exclude)dvc.lock",
            ":(exclude)reports",
        ]
    )
    return rev.strip(), (None if status is None else bool(status.strip()))


def package_versions(names: Sequence[str] = KEY_PACKAGES) -> dict[str, str]:
    """Installed version of each distribution, or ``not installed``."""
    out = {}
    for name in names:
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            out[name] = "not installed"
    return out


def cpu_model(cpuinfo: str | os.PathLike = "/proc/cpuinfo") -> str:
    """First ``model name`` in ``/proc/cpuinfo``, else :func:`platform.processor`, else unknown."""
    try:
        for line in Path(cpuinfo).read_text().splitlines():
            if line.lower().startswith("model name") and ":" in line:
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _suite_name(params: Mapping) -> str:
    suite = params.get("suite")
    if isinstance(suite, Mapping):
        suite = suite.get("name")
    return str(suite) if suite is not None else "unknown"


def collect_info(params: Mapping) -> dict:
    """Provenance for the Info section (DESIGN.md "Leaderboards": git revision, params hash,
    package versions, profile, hardware)."""
    rev, dirty = git_state()
    return {
        "git_revision": rev,
        "git_dirty": dirty,
        "params_hash": stable_hash(params),
        "profile": str(params.get("profile", "unknown")),
        "suite": _suite_name(params),
        "cpu_model": cpu_model(),
        "cpu_count": os.cpu_count(),
        "python": platform.python_version(),
        "packages": package_versions(),
        "planner_limits": _planner_limits(params),
        "wl_histogram": _wl_histogram(params),
    }


def _wl_histogram(params: Mapping) -> str:
    """How the state-centric models see WL histograms (``transition_models.<lstm|xgb>.normalise``;
    the state-centric issue asks the report to say which of counts / normalised ran)."""
    tm = params.get("transition_models") or {}
    how = {kind: ((tm.get(kind) or {}).get("normalise") or "none") for kind in ("lstm", "xgb")}
    names = {"none": "raw colour counts", "l1": "L1-normalised"}
    if len(set(how.values())) == 1:
        text = names.get(how["lstm"], how["lstm"])
    else:
        text = "; ".join(f"{k}: {names.get(v, v)}" for k, v in how.items())
    return (f"{text} (`transition_models.<lstm|xgb>.normalise`; counts, E.3, is the default: on the "
            "SATr splits it reproduces Table 1 far better than Stage 4's normalised histograms, see README)")


def _planner_limits(params: Mapping) -> str:
    """``"astar_lmcut 10 s / 4096 MiB; lama_first 60 s / 4096 MiB"`` from ``params['planners']``."""
    planners = params.get("planners") or {}
    parts = [
        f"{name} {cfg.get('time_limit')} s / {cfg.get('memory_limit_mb')} MiB"
        for name, cfg in sorted(planners.items())
        if isinstance(cfg, Mapping) and "time_limit" in cfg
    ]
    return "; ".join(parts) or "unknown"


def methods_table(records: Iterable[ResultRecord]) -> pd.DataFrame:
    """One row per method: family, task, seeds, records in use, config hashes."""
    latest = latest_records(records)
    rows = []
    for m in method_order(latest):
        recs = [r for r in latest if r.method == m]
        rows.append(
            {
                "Method": m,
                "Family": recs[0].family,
                "Task": ", ".join(sorted({record_task(r) for r in recs})),
                "Seeds": ", ".join(str(s) for s in sorted({r.seed for r in recs})),
                "Records": str(len(recs)),
                "config_hash": ", ".join(sorted({r.config_hash or "(none)" for r in recs})),
            }
        )
    return pd.DataFrame(
        rows, columns=["Method", "Family", "Task", "Seeds", "Records", "config_hash"]
    )


def render_info(info: Mapping, methods: pd.DataFrame) -> str:
    """The Info section body from :func:`collect_info`'s dict and :func:`methods_table`."""
    rev = info.get("git_revision") or "unknown (not a git checkout)"
    dirty = info.get("git_dirty")
    if dirty is True:
        rev += " (dirty: uncommitted changes to tracked files)"
    elif dirty is False:
        rev += " (clean)"
    kv = pd.DataFrame(
        [
            ("git revision", rev),
            (
                "params hash",
                f"{info.get('params_hash')} (config.stable_hash of the resolved params)",
            ),
            ("profile", info.get("profile")),
            ("suite", info.get("suite")),
            ("CPU", f"{info.get('cpu_model')}, {info.get('cpu_count')} cores"),
            ("Python", info.get("python")),
            ("Fast Downward limits", info.get("planner_limits", "unknown")),
            ("WL histogram (state-centric models)", info.get("wl_histogram", "unknown")),
        ],
        columns=["Item", "Value"],
    )
    pkgs = pd.DataFrame(
        sorted((info.get("packages") or {}).items()), columns=["Package", "Version"]
    )
    parts = [_md_table(kv), "", "Package versions:", "", _md_table(pkgs), ""]
    parts.append("Methods with results:")
    parts.append("")
    parts.append(_md_table(methods) if not methods.empty else "No result records yet.")
    return "\n".join(parts)


# --------------------------------------------------------------------------------------------
# Rendering
# --------------------------------------------------------------------------------------------


def _md_table(df: pd.DataFrame) -> str:
    return df.astype(str).to_markdown(index=False, disable_numparse=True)


@dataclass
class Analysis:
    """Every table the leaderboard and metrics are rendered from (see :func:`analyse`)."""

    index: dict[tuple[str, str], frozenset[str]]
    coverage: pd.DataFrame
    coverage_sum: pd.DataFrame
    failed: pd.DataFrame
    rejected: pd.DataFrame
    plan_summary: pd.DataFrame
    plan_failures: pd.DataFrame
    consistency: list[str]
    hitk: pd.DataFrame | None
    schema: pd.DataFrame | None
    cost: pd.DataFrame
    details: dict[str, pd.DataFrame]
    by_size: pd.DataFrame
    methods: pd.DataFrame
    n_records: int
    n_plan_records: int


def analyse(inputs: ReportInputs) -> Analysis:
    """Compute every table from the inputs (pure)."""
    latest = latest_records(inputs.records)
    index = instance_index(inputs.manifest, latest, inputs.domains, inputs.splits)
    cov = coverage_table(inputs.records, inputs.manifest, inputs.domains, inputs.splits)
    return Analysis(
        index=index,
        coverage=cov,
        coverage_sum=coverage_sum(cov),
        failed=failed_runs_table(inputs.records),
        rejected=rejected_plans_table(inputs.records, inputs.plan_records),
        plan_summary=plan_stage_summary(inputs.plan_records, index),
        plan_failures=plan_stage_failures(inputs.plan_records),
        consistency=consistency_notes(inputs.records, inputs.plan_records, index),
        hitk=task_metric_table(
            [r for r in inputs.records if not is_pool_record(r)],
            "rank_successors",
            None,
            ("protocol", "domain", "split"),
            text_keys=("inputs",),
            unit="trajectories",
        ),
        schema=task_metric_table(inputs.records, "learn_schema", SCHEMA_KEYS, ("domain",)),
        cost=cost_table(inputs.records),
        details=detail_tables(inputs.records, inputs.plan_records, index),
        by_size=coverage_by_size(inputs.records, inputs.manifest),
        methods=methods_table(inputs.records),
        n_records=len(latest),
        n_plan_records=len(inputs.plan_records),
    )


def _problems_md(a: Analysis) -> list[str]:
    out = ["## Problems", ""]
    out += ["### Errors and diverged runs", ""]
    out.append(
        _md_table(a.failed)
        if not a.failed.empty
        else "None: no record has outcome `error` or `diverged`."
    )
    out += ["", "### Plans rejected by the validator", ""]
    if a.rejected.empty:
        out.append("None: every plan reported as solved was accepted by the validator.")
    else:
        out.append(
            "These plans reported `solved` but the independent validator did not accept them; "
            "they count as unsolved everywhere below."
        )
        out += ["", _md_table(a.rejected)]
    out += ["", "### Planning stage (reference plans, `data/plans/records.jsonl`)", ""]
    if a.n_plan_records == 0:
        out.append("No planning-stage records found.")
    else:
        issues = a.plan_summary[
            a.plan_summary[["rejected", "unsolved", "timeout", "memout", "error", "missing"]].sum(
                axis=1
            )
            > 0
        ]
        total = int(a.plan_summary["instances"].sum())
        solved = int(a.plan_summary["solved+validated"].sum())
        out.append(f"{solved} of {total} instances have a validated reference plan.")
        if not issues.empty:
            out += [
                "",
                "Domains and splits with unsolved, failed or missing planning runs:",
                "",
                _md_table(issues),
            ]
        if not a.plan_failures.empty:
            out += [
                "",
                "Planner attempt failures of problems without a plan:",
                "",
                _md_table(a.plan_failures),
            ]
    out += ["", "### Empty splits", ""]
    empty = [f"- `{d}/{s}`: no instances" for (d, s), p in a.index.items() if not p]
    out += empty or ["None: every domain has instances in every split."]
    out += ["", "### Result data consistency", ""]
    out += [f"- {n}" for n in a.consistency] or ["No stale, incomplete or superseded records."]
    return out


def _coverage_md(a: Analysis) -> list[str]:
    out = ["## Coverage", ""]
    if a.coverage.empty:
        out.append("No `plan` results yet: `data/results/` holds no records of methods that plan.")
        return out
    out.append(
        "Fraction of instances solved **and** accepted by the independent validator: mean ± "
        "population std (ddof=0) over seeds, n = instances in the split; instances without a "
        "record count as unsolved. Best per row in bold (ties all bold; nothing bold when the "
        "best is 0). "
        f'"{DASH}": the method has no records there. Sum: solved instances averaged over seeds / '
        "instances, over the splits the method ran on."
    )
    out += ["", coverage_markdown(a.coverage, a.coverage_sum)]
    skipped = unevaluated_splits(a.coverage)
    if skipped:
        names = ", ".join(f"`{d}/{s}`" for d, s in skipped)
        out += ["", f"Not evaluated by any plan method (rows left out): {names}."]
    return out


def _task_md(
    title: str, table: pd.DataFrame | None, task: str, how: str, description: str | None = None
) -> list[str]:
    out = [f"## {title}", ""]
    if table is None:
        out.append(f"No `{task}` method has results yet ({how}).")
    else:
        out.append(
            description
            or "Mean ± population std (ddof=0) over seeds of the per-seed mean over instances."
        )
        out += ["", _md_table(table)]
    return out


HITK_DESCRIPTION = (
    "Successor ranking (`rank_successors` records), per protocol, domain, split and method. "
    "`hit@k`: fraction of a reference trajectory's steps whose true successor the method ranks "
    "in the top k among all successors of the state; per seed the mean over trajectories, then "
    "mean ± population std (ddof=0) over seeds. `inputs`: what the method conditions on (state, "
    "action, goal), as its records declare; `seeds`, `trajectories`: how many the cell averages "
    "(records without values, e.g. errors listed under Problems, are not counted)."
)


def _cost_md(a: Analysis) -> list[str]:
    out = ["## Cost", ""]
    if a.cost.empty:
        out.append("No result records yet.")
        return out
    out.append(
        "Per method, domain and task. Commonly solved: instances solved and validated (in at "
        "least one seed) by every plan method that ran on that domain/split. Time per problem: "
        "mean wall time of the method's solved attempts, then the geometric mean over the "
        f"commonly solved instances (times below {MIN_TIME_S} s count as {MIN_TIME_S} s); "
        f'"{DASH}" for tasks other than plan. Model size and train time come from the records\' '
        "`extra` when the method reports them."
    )
    out += ["", _md_table(a.cost)]
    return out


def _detail_md(a: Analysis) -> list[str]:
    out = ["## Per-domain detail", ""]
    out.append(
        "Cells: solved and validated / attempted (attempts over all seeds), TO = timeouts. "
        f'"plan stage" is the reference planning stage. "{DASH}": no records.'
    )
    for domain, table in a.details.items():
        out += ["", f"### {domain}", "", _md_table(table)]
    return out


def published_group_tables(t: PublishedMatrix) -> list[tuple[str, pd.DataFrame]]:
    """The published matrix as one table per column group: rows domain/split (harness names, the
    paper's row order), one column per system (:attr:`PublishedColumn.heading`)."""
    out = []
    for group in t.groups:
        cols = [(i, c) for i, c in enumerate(t.columns) if c.group == group]
        df = pd.DataFrame(
            [
                {
                    "Domain": r.domain,
                    "Split": r.split,
                    **{c.heading: r.cells[i].format() for i, c in cols},
                }
                for r in t.rows
            ],
            columns=["Domain", "Split", *(c.heading for _, c in cols)],
        )
        out.append((group, df))
    return out


def side_by_side_methods(t: PublishedMatrix, cov: pd.DataFrame) -> list[str]:
    """Harness methods with plan results (in ``cov``) that have a column in ``t``, column order."""
    measured = set(cov["method"]) if not cov.empty else set()
    return [m for m in t.methods if m in measured]


def measured_cell(cov: pd.DataFrame, domain: str, split: str, method: str) -> str:
    """The coverage cell of (domain, split, method) as the Coverage table writes it (no bold):
    ``"0.67 ± 0.27 (n=3)"``, "no instances", or "–" (no records, or not in this run's suite)."""
    hit = cov[(cov["domain"] == domain) & (cov["split"] == split) & (cov["method"] == method)]
    if hit.empty:
        return DASH
    r = hit.iloc[0]
    if r["status"] == "no instances":
        return NO_INSTANCES
    if r["status"] != "ok":
        return DASH
    return format_coverage_cell(r["mean"], r["std"], int(r["n"]))


def side_by_side_table(t: PublishedMatrix, method: str, cov: pd.DataFrame) -> pd.DataFrame:
    """Rows: the published (domain, split) rows in harness order (domains sorted, splits in
    :data:`SPLIT_ORDER`); columns ``measured (this run)`` (from ``cov``, as in Coverage) and
    ``published (<table>)`` (the method's column of ``t``)."""
    col = t.column(method)
    if col is None:
        raise KeyError(f"{t.key}: no column for method {method!r}")
    i = t.columns.index(col)
    published = f"published ({t.table})"
    rows = [
        {
            "Domain": r.domain,
            "Split": r.split,
            "measured (this run)": measured_cell(cov, r.domain, r.split, method),
            published: r.cells[i].format(),
        }
        for r in sorted(t.rows, key=lambda r: (r.domain, split_sort_key(r.split)))
    ]
    return pd.DataFrame(rows, columns=["Domain", "Split", "measured (this run)", published])


def _published_md(
    tables: Sequence[PublishedMatrix],
    limits: str | None = None,
    coverage: pd.DataFrame | None = None,
) -> list[str]:
    out = ["## Published reference rows", ""]
    out.append(
        "Numbers copied from the papers, not measured by this run. They never enter the "
        "measured tables above or `metrics.json`."
    )
    if limits:
        out.append(
            f"This run's Fast Downward limits: {limits} (see Info). A published row with another "
            "limit or other instances is context, not a like-for-like comparison: a shorter A* "
            "limit lowers extrapolation coverage."
        )
    cov = coverage if coverage is not None else pd.DataFrame(columns=list(COVERAGE_COLUMNS))
    for t in tables:
        out += ["", f"### {t.label}", ""]
        out += [f"Source: {t.paper_file}, {t.table} (\"{t.caption}\").", ""]
        labels = ", ".join(
            f"{d} = {h}" for d, h in dict.fromkeys((r.domain_label, r.domain) for r in t.rows)
        )
        splits = ", ".join(
            f"{s} = {h}" for s, h in dict.fromkeys((r.split_label, r.split) for r in t.rows)
        )
        out.append(
            f"Rows in harness names (paper: {labels}; {splits}). Columns are the paper's systems; "
            "a harness method in parentheses marks the column the side-by-side view below "
            "aligns with. Cells: mean ± std as published (no std: a single run)."
        )
        out += [""] + [f"- {note}" for note in t.notes]
        for group, df in published_group_tables(t):
            out += ["", f"{group}:", "", _md_table(df)]
        methods = side_by_side_methods(t, cov)
        out += ["", f"### Side by side: measured (this run) vs published ({t.table})", ""]
        out.append(
            f"For each harness method with plan results here and a column in {t.table} of "
            f"'{t.paper_title}'. \"measured (this run)\": computed from this run's records "
            "exactly as in Coverage (mean ± population std over seeds, n = instances; "
            f'"{DASH}": no records there). "published": copied from the paper, on the paper\'s '
            "instances and limits (see the notes above); context, not a like-for-like comparison."
        )
        if not methods:
            out += ["", "No method measured here has a published column yet."]
        for m in methods:
            col = t.column(m)
            out += ["", f"#### {m} (published column: {col.label})", ""]
            out.append(_md_table(side_by_side_table(t, m, cov)))
        missing = [m for m in t.methods if m not in methods]
        if missing:
            names = ", ".join(f"`{m}`" for m in missing)
            out += ["", f"Published columns without plan results here: {names}."]
    return out


def render_leaderboard(
    a: Analysis,
    info: Mapping,
    plots: Sequence[tuple[str, str]] = (),
    published: Sequence[PublishedMatrix] = PUBLISHED_TABLES,
    pool_md: Sequence[str] = (),
    published_extra_md: Sequence[str] = (),
) -> str:
    """The whole ``leaderboard.md`` text (pure: same arguments, same string).

    ``plots`` are (caption, link relative to the markdown file) pairs; ``pool_md`` are the lines of
    the candidate-pool Hit@k subsection (:func:`planarena.report.hitk.render_pool_md`) and
    ``published_extra_md`` further labelled published tables (EmbedPlan's).
    """
    lines = [
        "# planarena leaderboard",
        "",
        "Generated by the `report` stage from `data/results/*.jsonl`, `data/plans/records.jsonl` "
        "and `data/problems/manifest.jsonl`; do not edit by hand.",
        "",
    ]
    lines += _problems_md(a) + [""]
    lines += ["## Info", "", render_info(info, a.methods), ""]
    lines += _coverage_md(a) + [""]
    lines += _task_md(
        "Hit@k",
        a.hitk,
        "rank_successors",
        "records whose `extra` has `task: rank_successors` or `hit@k`/`acc@k` values",
        HITK_DESCRIPTION,
    ) + [""]
    if pool_md:
        lines += [*pool_md, ""]
    lines += _task_md(
        "Schema learning",
        a.schema,
        "learn_schema",
        "records whose `extra` has `task: learn_schema`",
    ) + [""]
    lines += _cost_md(a) + [""]
    lines += _detail_md(a) + [""]
    lines += _published_md(published, info.get("planner_limits"), a.coverage) + [""]
    if published_extra_md:
        lines += [*published_extra_md, ""]
    lines += ["## Plots", ""]
    for caption, link in plots:
        lines += [f"![{caption}]({link})", "", f"{caption}: [{link}]({link})", ""]
    if not plots:
        lines += ["No plots.", ""]
    return "\n".join(lines).rstrip("\n") + "\n"


def _round(x: float) -> float:
    return round(float(x), 4)


def build_metrics(a: Analysis) -> dict:
    """Small nested dict for ``reports/metrics.json`` (``dvc metrics show`` / ``dvc exp show``).

    ``coverage.<method>.<domain>.<split>``: mean coverage over seeds (cells with records and
    instances only); ``coverage_sum.<method>``; ``problems``: counts of error and diverged
    attempts and of rejected plans (methods and planning stage).
    """
    coverage: dict[str, dict[str, dict[str, float]]] = {}
    for r in a.coverage.itertuples(index=False):
        if r.status == "ok":
            coverage.setdefault(r.method, {}).setdefault(r.domain, {})[r.split] = _round(r.mean)
    sums = {r.method: _round(r.mean) for r in a.coverage_sum.itertuples(index=False) if r.n > 0}
    counts = {
        "error": int(a.failed.loc[a.failed["Outcome"] == "error", "Attempts"].astype(int).sum()),
        "diverged": int(
            a.failed.loc[a.failed["Outcome"] == "diverged", "Attempts"].astype(int).sum()
        ),
        "rejected_plans": int(a.rejected["Plans"].astype(int).sum()),
    }
    return {"coverage": coverage, "coverage_sum": sums, "problems": counts}


def _write_text(path: Path, text: str) -> None:
    atomic_write_text(path, text)


def write_report(
    inputs: ReportInputs,
    info: Mapping,
    reports_dir: str | os.PathLike = "reports",
    acp_dir: Path | None = None,
) -> Analysis:
    """Write ``leaderboard.md``, ``metrics.json`` and ``plots/coverage_by_size.png`` under
    ``reports_dir`` from already-loaded inputs and info; returns the analysis."""
    reports_dir = Path(reports_dir)
    a = analyse(inputs)
    plot_coverage_by_size(a.by_size, reports_dir / PLOTS_DIR / COVERAGE_PLOT)
    plots = [("Coverage vs instance size", f"{PLOTS_DIR}/{COVERAGE_PLOT}")]
    latest = latest_records(inputs.records)
    pool_md = render_pool_md(latest, acp_dir)
    if plot_hit5_by_protocol(pool_summary(latest), reports_dir / PLOTS_DIR / HITK_PLOT):
        plots.append(("Hit@5 by protocol (candidate pool)", f"{PLOTS_DIR}/{HITK_PLOT}"))
    published_extra = render_published_md() if pool_md else []
    _write_text(reports_dir / LEADERBOARD,
                render_leaderboard(a, info, plots, pool_md=pool_md, published_extra_md=published_extra))
    _write_text(
        reports_dir / METRICS, json.dumps(build_metrics(a), indent=2, sort_keys=True) + "\n"
    )
    return a


def run_stage(params: dict, layout: Layout, reports_dir: Path = Path("reports")) -> None:
    """Entry point of the ``report`` DVC stage.

    Reads ``layout.results/*.jsonl``, ``layout.plans/records.jsonl`` and
    ``layout.problems/manifest.jsonl``. Params read: ``profile``, ``suite``, the names under
    ``suites.<suite>.domains`` and ``evaluation.splits`` (so that empty domains and splits are
    reported), and the whole resolved tree for the params hash.

    Raises:
        FileNotFoundError: the problem manifest is missing.
        ValueError: a malformed results/plans line (names the file and line).
    """
    inputs = load_inputs(layout, declared_domains(params), declared_splits(params))
    write_report(inputs, collect_info(params), reports_dir, acp_dir=layout.acp)
