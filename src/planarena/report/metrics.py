"""Every metric of the leaderboard, declared once (docs/concepts.md).

A :class:`Metric` says what a number is: its name and column title, whether higher is better
(which decides the bold "best" cell), how the values of several seeds or attempts combine into a
cell (:data:`AGGREGATIONS`), how a Sum row combines cells (:data:`SUMMARIES`) and how the cell is
printed. Tables never repeat that logic: they call :meth:`Metric.aggregate`, :meth:`Metric.best`,
:meth:`Metric.format`, :func:`instance_weighted` and :func:`geometric_mean`. The shape follows
Downward Lab's ``Attribute(name, min_wins=..., function=...)`` and lm-evaluation-harness's
``register_metric(higher_is_better=..., aggregation=...)``.

Metrics named by a pattern (``hit@k``, ``acc@k``, ``plan_mean_hit@k``, ``plan_exact_hit@k``, for
any ``k``) are built on first use by :func:`metric`; the others are in :data:`METRICS`.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections import defaultdict
from dataclasses import dataclass
from typing import Any, Callable, Hashable, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from planarena.results.records import RANK_KEY  # noqa: F401  (successor-ranking keys of ``extra``)

#: How the values of one table cell combine (name -> what it does).
AGGREGATIONS: dict[str, str] = {
    "seed_mean": "per seed the mean over the cell's records, then mean ± population std "
    "(ddof=0) over seeds",
    "first_per_seed": "per seed the first value reported (a per-run fact), then the mean over seeds",
    "attempt_mean": "the mean over every attempt",
    "geometric_mean": "the geometric mean over the commonly solved instances (times below "
    "MIN_TIME_S count as MIN_TIME_S)",
}

#: How a Sum row combines the cells of one method (name -> what it does).
SUMMARIES: dict[str, str] = {
    "instance_weighted": "solved instances averaged over seeds / instances, over the cells with "
    "records and instances; std over the seeds common to every cell",
}

#: Wall times below this (seconds) are raised to it before taking logarithms for geometric means.
MIN_TIME_S = 1e-3

#: A formatted cell: mean, optional "± std", optional "(...)" notes.
_CELL = re.compile(r"^(-?[\d,]+(?:\.\d+)?)(?: ± (n/a|-?[\d,]+(?:\.\d+)?))?(?: \(.*\))?$")


#: Pattern families: regex on the name -> title template (``{k}``) of a ``seed_mean`` metric whose
#: higher values are better.
_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"^hit@(\d+)$", re.IGNORECASE), "Hit@{k}"),
    (re.compile(r"^acc@(\d+)$", re.IGNORECASE), "Acc@{k}"),
    (re.compile(r"^plan_mean_hit@(\d+)$"), "Plan mean Hit@{k}"),
    (re.compile(r"^plan_exact_hit@(\d+)$"), "Plan exact Hit@{k}"),
)


@dataclass(frozen=True)
class Metric:
    """One metric, declared once.

    Attributes:
        name: key in the records (``extra[name]``) or the computed quantity (``coverage``).
        title: column title in the tables.
        higher_is_better: ``True`` (max wins), ``False`` (min wins) or ``None`` (shown for context,
            never ranked: counts, sizes).
        aggregation: a key of :data:`AGGREGATIONS`.
        spec: format spec of one value (``".2f"``).
        integer: integral values print as integers with thousands separators (``1,000``); other
            values use ``spec``.
        scale: factor applied to every value before aggregating (100 for percent).
        summary: a key of :data:`SUMMARIES` for the Sum row, or ``None`` (no Sum row).
        json_digits: decimals kept in ``reports/metrics.json``.

    Raises:
        ValueError: an unknown ``aggregation`` or ``summary`` (the message lists the valid ones).
    """

    name: str
    title: str
    higher_is_better: bool | None
    aggregation: str = "seed_mean"
    spec: str = ".2f"
    integer: bool = False
    scale: float = 1.0
    summary: str | None = None
    json_digits: int = 4

    def __post_init__(self) -> None:
        if self.aggregation not in AGGREGATIONS:
            raise ValueError(
                f"metric {self.name!r}: unknown aggregation {self.aggregation!r}; "
                f"valid: {', '.join(AGGREGATIONS)}"
            )
        if self.summary is not None and self.summary not in SUMMARIES:
            raise ValueError(
                f"metric {self.name!r}: unknown summary {self.summary!r}; valid: {', '.join(SUMMARIES)}"
            )

    # -- aggregation ----------------------------------------------------------------------------

    def aggregate(self, per_seed: Sequence[float]) -> tuple[float, float]:
        """Mean and population std (``ddof=0``) of the per-seed values, after :attr:`scale`.

        ``per_seed``: one value per seed, in the order the caller collected them. NaN for both
        when it is empty.
        """
        if len(per_seed) == 0:
            return math.nan, math.nan
        vals = np.asarray(per_seed, dtype=float) * self.scale
        return float(vals.mean()), float(vals.std(ddof=0))

    def combine(self, values: Sequence[tuple[int, float]]) -> float | None:
        """One number from ``(seed, value)`` pairs in record order, by :attr:`aggregation`:
        ``first_per_seed`` (the first value of each seed, then their mean), ``attempt_mean``
        (mean of all) or ``seed_mean`` (mean per seed, then the mean over seeds). ``None`` when
        there are no values.

        Raises:
            ValueError: the metric aggregates with ``geometric_mean`` (see :func:`geometric_mean`).
        """
        if self.aggregation == "attempt_mean":
            vals = [v for _, v in values]
        elif self.aggregation == "first_per_seed":
            first: dict[int, float] = {}
            for seed, v in values:
                first.setdefault(seed, v)
            vals = list(first.values())
        elif self.aggregation == "seed_mean":
            by_seed: dict[int, list[float]] = {}
            for seed, v in values:
                by_seed.setdefault(seed, []).append(v)
            vals = [float(np.mean(v)) for v in by_seed.values()]
        else:
            raise ValueError(f"metric {self.name!r}: combine() does not do {self.aggregation!r}")
        return float(np.mean(vals)) if vals else None

    def best(self, values: Mapping[str, float]) -> set[str]:
        """Keys (methods) whose value is the best of ``values`` (ties all win, to 1e-9).

        NaN and ``None`` values never win. Nothing wins for a metric that is not ranked, nor, when
        higher is better, when the best value is 0 or less (nothing was achieved).
        """
        finite = {k: v for k, v in values.items() if v is not None and not math.isnan(v)}
        if not finite or self.higher_is_better is None:
            return set()
        target = max(finite.values()) if self.higher_is_better else min(finite.values())
        if self.higher_is_better and target <= 0:
            return set()
        return {k for k, v in finite.items() if math.isclose(v, target, rel_tol=0.0, abs_tol=1e-9)}

    # -- presentation ---------------------------------------------------------------------------

    def format_value(self, x: float) -> str:
        """One value as printed in a cell (:attr:`spec`, or an integer when :attr:`integer`)."""
        if self.integer and float(x).is_integer():
            return f"{int(round(x)):,}"
        return format(x, self.spec)

    def format(
        self, mean: float, std: float | None = None, n: int | None = None, bold: bool = False,
        runs: int | None = None,
    ) -> str:
        """A cell: ``"0.67 ± 0.27 (n=3)"``; the std part only when ``std`` is given (``n/a``
        when NaN), the count only when ``n`` is given; wrapped in ``**`` when ``bold``. With
        ``runs == 1`` (one seed) there is no spread to show: ``"0.67 (1 run, n=3)"``."""
        text = self.format_value(mean)
        notes = []
        if runs == 1:
            notes.append("1 run")
        elif std is not None:
            text += " ± " + ("n/a" if math.isnan(std) else self.format_value(std))
        if n is not None:
            notes.append(f"n={n}")
        if notes:
            text += f" ({', '.join(notes)})"
        return f"**{text}**" if bold else text

    @staticmethod
    def parse(cell: str) -> tuple[float, float]:
        """The (mean, std) of a cell that :meth:`format` wrote (``"**0.67 ± 0.27 (n=3)**"``,
        ``"55.4 (1 run)"``: std 0; ``"n/a"`` std: NaN), for plots drawn from rendered tables.

        Raises:
            ValueError: the text is not such a cell (e.g. "–").
        """
        m = _CELL.match(cell.strip().strip("*"))
        if not m:
            raise ValueError(f"not a metric cell: {cell!r}")
        mean = float(m.group(1).replace(",", ""))
        std = m.group(2)
        return mean, (math.nan if std == "n/a" else float(std.replace(",", "")) if std else 0.0)

    def json_value(self, x: float) -> float:
        """``x`` rounded for ``reports/metrics.json``."""
        return round(float(x), self.json_digits)

    def percent(self) -> Metric:
        """The same metric in percent with one decimal (the candidate-pool tables' convention)."""
        return dataclasses.replace(self, scale=100.0, spec=".1f")


def instance_weighted(cells: pd.DataFrame) -> tuple[int, float, float]:
    """The ``instance_weighted`` Sum of one method's cells: ``(n, mean, std)``.

    ``cells`` has one row per (domain, split) with columns ``n`` (instances), ``mean`` (fraction
    solved, mean over seeds), ``seeds`` (tuple of seeds) and ``solved`` (per-seed counts, same
    order). ``mean`` is ``sum(mean_i * n_i) / sum(n_i)``; ``std`` is the population std over the
    seeds common to every cell of the per-seed totals / ``n`` (NaN if no seed is common).
    ``(0, nan, nan)`` for no cells.
    """
    if cells.empty:
        return 0, math.nan, math.nan
    n = int(cells["n"].sum())
    mean = float((cells["mean"] * cells["n"]).sum() / n)
    common = set.intersection(*(set(s) for s in cells["seeds"]))
    std = math.nan
    if common:
        totals = [
            sum(
                sol[seeds.index(seed)]
                for sol, seeds in zip(cells["solved"], cells["seeds"], strict=True)
            )
            / n
            for seed in sorted(common)
        ]
        std = float(np.std(totals, ddof=0))
    return n, mean, std


def seed_means(
    records: Iterable[Any], key_fn: Callable[[Any], Hashable], name: str
) -> dict[Hashable, dict[int, float]]:
    """``group -> seed -> mean of extra[name]`` over the records (with ``seed`` and ``extra``)
    that report a finite number under ``name``; ``key_fn(record)`` gives the group. Groups and
    seeds are in first-appearance order."""
    acc: dict[Hashable, dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
    for r in records:
        v = (r.extra or {}).get(name)
        if isinstance(v, (int, float)) and not isinstance(v, bool) and np.isfinite(v):
            acc[key_fn(r)][r.seed].append(float(v))
    return {g: {s: float(np.mean(v)) for s, v in seeds.items()} for g, seeds in acc.items()}


def geometric_mean(times: Sequence[float], floor: float = MIN_TIME_S) -> float:
    """Geometric mean of times in seconds, each raised to at least ``floor`` (log(0) is undefined)."""
    return float(math.exp(np.mean([math.log(max(t, floor)) for t in times])))


def rank_metric_sort_key(key: str) -> tuple:
    """Sort key of ``hit@k`` / ``acc@k`` keys: all ``acc`` before all ``hit``, then by ``k``."""
    m = RANK_KEY.match(key)
    return (m.group(1).lower(), int(m.group(2))) if m else (key, 0)


#: Declared metrics by name (pattern families are built by :func:`metric`).
METRICS: dict[str, Metric] = {}


def register_metric(m: Metric) -> Metric:
    """Add ``m`` to :data:`METRICS` and return it.

    Raises:
        ValueError: a metric of that name is already registered.
    """
    if m.name in METRICS:
        raise ValueError(f"metric {m.name!r} registered twice")
    METRICS[m.name] = m
    return m


def metric(name: str) -> Metric:
    """The declared metric ``name``, or the member of a pattern family (``hit@3``).

    Raises:
        KeyError: ``name`` is neither declared nor of a pattern family (lists the valid names).
    """
    if name in METRICS:
        return METRICS[name]
    for pattern, title in _PATTERNS:
        m = pattern.match(name)
        if m:
            return Metric(name, title.format(k=m.group(1)), higher_is_better=True)
    raise KeyError(
        f"unknown metric {name!r}; declared: {', '.join(sorted(METRICS))}; patterns: "
        + ", ".join(p.pattern for p, _ in _PATTERNS)
    )


# -- the declarations ---------------------------------------------------------------------------

#: Fraction of a split's instances solved and validated
#: (docs/concepts.md#coverage-and-plan-quality).
COVERAGE = register_metric(
    Metric("coverage", "coverage", True, "seed_mean", ".2f", summary="instance_weighted")
)
#: Plan quality (symmetry-aware-transformers paper, Appendix E, Eq. 1-2): mean of |pi*| / |pi|
#: over every problem (unsolved: 0) and over the solved problems only.
QS = register_metric(Metric("QS", "QS", True))
QS_S = register_metric(Metric("QS_S", "QS_S", True))
#: Wall time per commonly solved problem (seconds).
TIME = register_metric(
    Metric("time", "time/problem, geo-mean (s)", False, "geometric_mean", ".3f")
)
#: Mean wall time over every attempt (seconds).
WALL_TIME = register_metric(
    Metric("wall_time", "mean wall time, all attempts (s)", False, "attempt_mean", ".3f")
)
#: Schema learning (docs/concepts.md#tasks: precision, recall, N_s/N_c/N_sc).
PRECISION = register_metric(Metric("precision", "precision", True))
RECALL = register_metric(Metric("recall", "recall", True))
N_S = register_metric(Metric("N_s", "N_s", None))
N_C = register_metric(Metric("N_c", "N_c", None))
N_SC = register_metric(Metric("N_sc", "N_sc", None))
#: Cost facts methods report in ``extra`` (model size, training and decoding time).
PARAMETERS = register_metric(
    Metric("parameters", "parameters", False, "first_per_seed", ",.1f", integer=True)
)
TREE_NODES = register_metric(
    Metric("tree_nodes", "tree nodes", False, "first_per_seed", ",.1f", integer=True)
)
TRAIN_TIME = register_metric(Metric("train_time_s", "train time (s)", False, "first_per_seed", ".1f"))
TIME_PER_STEP = register_metric(
    Metric("time_per_step_s", "decode time per step (s)", False, "attempt_mean", ".4f")
)
TIME_PER_DECISION = register_metric(
    Metric("time_per_decision_s", "time per decision (s)", False, "attempt_mean", ".4f")
)
