"""The front page's coverage tables: every cell with its count and 95 % interval, rows grouped by
kind, each learned row tested against the floors of its kind, and the best of each column and kind
marked as a significance tier.

* **One problem set per table and column.** Held-out splits that share a method form one table
  (connected components of "a method ran on both"), so rows of one table ran on the same problems;
  the schema-learning test problems, which only schema-learning rows plan, get a table of their own.
  The ``held-out`` column pools the table's splits.
* **Cells.** ``value [low, high] k/N``: the fraction of attempts solved and validated (k solved of N
  = problems x seeds), with :func:`planarena.stats.proportion_interval` (Wilson for one run,
  the hierarchical bootstrap over problems then seeds for several), seeded from params.
* **Kinds.** Rows are grouped by :attr:`planarena.methods.base.ReportTraits.kind` (search, lookahead
  policy, policy, decoder), then floors, then ceilings: a search planner is never ranked beside a
  policy.
* **Above floor.** Each learned row (role ``model``) is tested against every floor of the table whose
  ``floor_kinds`` include its kind, and against the floor of its ``floor_group``, on the pooled
  held-out problems both attempted with :func:`planarena.stats.paired_coverage`; the p-values of the whole
  table are Holm-corrected; "yes" only when the row is above every one of its floors at
  :data:`planarena.stats.ALPHA`.
* **Bold.** Per column and kind, the best learned-or-planner row, and every row of that kind not
  significantly worse than it (paired test, Holm within the column and kind): a tier, not a single
  winner. Nothing is bold when the best solves nothing.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from planarena.config import is_held_out
from planarena.core.records import ResultRecord
from planarena.methods.base import KINDS, ReportTraits
from planarena import stats
from planarena.report.markdown import DASH
from planarena.report.records import plan_records_of, split_sort_key
from planarena.report.traits import PLAIN, floor_of

#: The pooled column of each table.
HELD_OUT = "held-out"
#: Group order of the rows.
GROUPS: tuple[str, ...] = (*KINDS, "floor", "ceiling")

Problem = tuple[str, str, str]  # (domain, split, problem)


@dataclass
class CoverageTable:
    """One problem set's headline table (see the module docstring).

    Attributes:
        splits: the held-out splits of the table (its columns before ``held-out``), in display order.
        problems: per column (each split and :data:`HELD_OUT`), its problems in a fixed order.
        methods: the rows in display order.
        group: per method, its row group (a kind, ``floor`` or ``ceiling``).
        solved: per (method, column), the 0/1 matrix (problems, seeds) of that column's problems.
        cells: per (method, column), the :class:`planarena.stats.Interval` of the cell.
        floor_tests: per learned method, ``(floor, PairedTest, Holm-adjusted p)`` for each floor on
            the pooled held-out problems (Holm across the table).
        domain_floor_tests: the same per learned method and domain (a second Holm family across the
            table's rows, floors and domains).
        bold: per column, the methods in its best tier.
    """

    splits: list[str]
    problems: dict[str, list[Problem]]
    methods: list[str]
    group: dict[str, str]
    solved: dict[tuple[str, str], np.ndarray]
    cells: dict[tuple[str, str], stats.Interval]
    floor_tests: dict[str, list[tuple[str, stats.PairedTest, float]]] = field(default_factory=dict)
    domain_floor_tests: dict[str, dict[str, list[tuple[str, stats.PairedTest, float]]]] = field(default_factory=dict)
    bold: dict[str, set[str]] = field(default_factory=dict)
    #: per (method, column), which of the column's problems the method has a record for (any seed)
    attempted: dict[tuple[str, str], np.ndarray] = field(default_factory=dict)

    def paired(self, a: str, b: str, column: str, seed: int, domain: str | None = None) -> stats.PairedTest:
        """:func:`stats.paired_coverage` of ``a`` against ``b`` on the problems of ``column`` both
        attempted (a row measured on part of a split by configuration is compared where it ran),
        only ``domain``'s when given."""
        both = self.attempted[(a, column)] & self.attempted[(b, column)]
        if domain is not None:
            both = both & np.array([p[0] == domain for p in self.problems[column]], dtype=bool)
        return stats.paired_coverage(self.solved[(a, column)][both], self.solved[(b, column)][both], seed)

    @property
    def columns(self) -> list[str]:
        """The splits and the pooled column."""
        return [*self.splits, HELD_OUT]

    def above_floor(self, method: str) -> bool | None:
        """True when ``method`` is significantly above every one of its floors, False when not,
        None when it has no floor in this table (or is not a learned row)."""
        tests = self.floor_tests.get(method)
        if not tests:
            return None
        return all(t.diff > 0 and p < stats.ALPHA for _, t, p in tests)


def row_group(t: ReportTraits) -> str:
    """The row group of a method: ``floor``, ``ceiling`` or its kind."""
    return t.role if t.role in ("floor", "ceiling") else t.kind


def _tables_of(ran: Mapping[str, set[str]]) -> list[list[str]]:
    """Held-out splits grouped into tables: connected components of "some method ran on both"
    (``ran``: split -> methods with records there), each sorted, tables in split order."""
    parent = {s: s for s in ran}

    def find(s: str) -> str:
        while parent[s] != s:
            s = parent[s]
        return s

    by_method: dict[str, list[str]] = defaultdict(list)
    for s, methods in ran.items():
        for m in methods:
            by_method[m].append(s)
    for splits in by_method.values():
        for s in splits[1:]:
            parent[find(s)] = find(splits[0])
    groups: dict[str, list[str]] = defaultdict(list)
    for s in ran:
        groups[find(s)].append(s)
    tables = [sorted(g, key=split_sort_key) for g in groups.values()]
    return sorted(tables, key=lambda g: split_sort_key(g[0]))


def coverage_tables(
    records: Iterable[ResultRecord],
    index: Mapping[tuple[str, str], Iterable[str]],
    traits: Mapping[str, ReportTraits],
    seed: int = 0,
) -> list[CoverageTable]:
    """The headline tables from the records and the instance index
    (:func:`planarena.report.records.instance_index`).

    A column's problems are those of the (domain, split) cells some plan method ran on. A method's
    seeds are every seed it ran with anywhere; a seed without a record for a problem counts it
    unsolved (as the per-domain tables do). ``seed`` seeds every bootstrap and Monte-Carlo
    test (the params' ``seed``), so the same records give the same bytes.
    """
    latest = plan_records_of(records)
    # the (domain, split) cells some plan method ran on: a domain nobody ran is not in the set
    evaluated = {(r.domain, r.split) for r in latest}
    held = {(d, s): sorted(p) for (d, s), p in index.items() if is_held_out(s) and p and (d, s) in evaluated}
    seeds: dict[str, set[int]] = defaultdict(set)
    ran: dict[str, set[str]] = defaultdict(set)
    solved: set[tuple[str, int, str, str, str]] = set()
    tried: set[tuple[str, str, str, str]] = set()
    for r in latest:
        if (r.domain, r.split) not in held:
            continue
        seeds[r.method].add(r.seed)
        ran[r.split].add(r.method)
        tried.add((r.method, r.domain, r.split, r.problem))
        if r.counts_as_solved:
            solved.add((r.method, r.seed, r.domain, r.split, r.problem))
    out = []
    for splits in _tables_of(ran):
        problems = {s: [(d, s2, p) for (d, s2), probs in sorted(held.items()) if s2 == s for p in probs]
                    for s in splits}
        problems[HELD_OUT] = [p for s in splits for p in problems[s]]
        methods = sorted({m for s in splits for m in ran[s]})
        group = {m: row_group(traits.get(m, PLAIN)) for m in methods}
        methods.sort(key=lambda m: (GROUPS.index(group[m]), m))
        table = CoverageTable(splits, problems, methods, group, {}, {})
        for m in methods:
            ms = sorted(seeds[m])
            for col in table.columns:
                if col != HELD_OUT and m not in ran[col]:
                    continue
                if col == HELD_OUT and not all(m in ran[s] for s in splits):
                    continue  # a row that skipped a split has no pooled cell on this problem set
                mat = np.array([[(m, s, *p) in solved for s in ms] for p in problems[col]], dtype=float)
                table.solved[(m, col)] = mat
                table.attempted[(m, col)] = np.array([(m, *p) in tried for p in problems[col]], dtype=bool)
                table.cells[(m, col)] = stats.proportion_interval(mat, seed)
        _test_floors(table, traits, seed)
        _mark_best(table, seed)
        out.append(table)
    return out


def _floors_of(table: CoverageTable, traits: Mapping[str, ReportTraits], m: str) -> list[str]:
    t = traits.get(m, PLAIN)
    floors = [f for f in table.methods if table.group[f] == "floor" and t.kind in traits.get(f, PLAIN).floor_kinds]
    own = floor_of(traits, m)
    if own and own in table.methods and own not in floors:
        floors.append(own)
    return floors


def _test_floors(table: CoverageTable, traits: Mapping[str, ReportTraits], seed: int) -> None:
    """Fill ``table.floor_tests``: each learned row against each of its floors on the pooled
    column, Holm-corrected across the table; and ``table.domain_floor_tests``: the same on each
    domain's held-out problems, its own Holm family (a row can learn one domain and not another)."""
    pairs, per_domain = [], []
    domains = sorted({p[0] for p in table.problems[HELD_OUT]})
    for m in table.methods:
        if traits.get(m, PLAIN).role != "model" or not _learns(traits, m):
            continue
        for f in _floors_of(table, traits, m):
            if (m, HELD_OUT) in table.solved and (f, HELD_OUT) in table.solved:
                pairs.append((m, f, table.paired(m, f, HELD_OUT, seed)))
                if len(domains) > 1:
                    per_domain += [(m, f, d, table.paired(m, f, HELD_OUT, seed, d)) for d in domains]
    adjusted = stats.holm([t.p for _, _, t in pairs])
    for (m, f, t), p in zip(pairs, adjusted):
        table.floor_tests.setdefault(m, []).append((f, t, p))
    adjusted = stats.holm([t.p for *_, t in per_domain])
    for (m, f, d, t), p in zip(per_domain, adjusted):
        table.domain_floor_tests.setdefault(m, {}).setdefault(d, []).append((f, t, p))


def _learns(traits: Mapping[str, ReportTraits], m: str) -> bool:
    """A learned row: a model with a budget, or one read against a floor group (no budget
    declared). Classical planners are models without either."""
    t = traits.get(m, PLAIN)
    return t.budget is not None or bool(t.floor_group)


def _mark_best(table: CoverageTable, seed: int) -> None:
    """Fill ``table.bold``: per column and kind, the best row and every row not significantly
    worse than it (Holm within the column and kind)."""
    for col in table.columns:
        table.bold[col] = set()
        for kind in KINDS:
            rows = [m for m in table.methods if table.group[m] == kind and (m, col) in table.cells]
            if not rows:
                continue
            best = max(rows, key=lambda m: (table.cells[(m, col)].value, -rows.index(m)))
            if table.cells[(best, col)].value <= 0:
                continue
            others = [m for m in rows if m != best]
            tests = [table.paired(m, best, col, seed) for m in others]
            adjusted = stats.holm([t.p for t in tests])
            table.bold[col].add(best)
            for m, t, p in zip(others, tests, adjusted):
                if t.diff >= 0 or p >= stats.ALPHA:
                    table.bold[col].add(m)


#: Marks a cell of the split a row selected its checkpoint on (:attr:`ReportTraits.selected_on`)
SELECTED = "(sel.)"


def format_cell(iv: stats.Interval, bold: bool = False) -> str:
    """``"0.29 [0.18, 0.41] 31/105"`` (k/N: attempts solved of problems x seeds); bold when in the
    best tier; ``"–"`` without data."""
    if iv.n == 0 or math.isnan(iv.value):
        return DASH
    attempts = iv.n * iv.runs
    solved = round(iv.value * attempts)
    text = f"{iv.value:.2f} {stats.format_interval(iv)} {solved}/{attempts}"
    return f"**{text}**" if bold else text


def format_floor(table: CoverageTable, m: str) -> str:
    """The *above floor* cell (:func:`planarena.stats.verdict` of the row's pooled and per-domain
    floor tests)."""
    return stats.verdict(table.floor_tests.get(m, []), table.domain_floor_tests.get(m))


def render_table(
    table: CoverageTable, traits: Mapping[str, ReportTraits], budget_cells: Mapping[str, str] | None = None,
) -> pd.DataFrame:
    """The table as a frame: kind, method, one column per split and ``held-out`` (titled with
    their problem counts), ``above floor`` and, when ``budget_cells`` is given, ``budget``."""
    titles = {c: f"{c} (n={len(table.problems[c])})" for c in table.columns}
    rows = []
    for m in table.methods:
        row = {"kind": table.group[m], "method": m}
        for c, title in titles.items():
            iv = table.cells.get((m, c))
            row[title] = DASH if iv is None else format_cell(iv, m in table.bold.get(c, ()))
            if iv is not None and c == traits.get(m, PLAIN).selected_on:
                row[title] += f" {SELECTED}"
        row["above floor"] = format_floor(table, m)
        if budget_cells is not None:
            row["budget"] = budget_cells.get(m, DASH)
        rows.append(row)
    columns = ["kind", "method", *titles.values(), "above floor", *(["budget"] if budget_cells is not None else [])]
    return pd.DataFrame(rows, columns=columns)


DESCRIPTION = (
    "Each cell: fraction of attempts solved **and** accepted by the independent validator, its 95 % "
    "interval, and k/N (solved attempts of problems x seeds). Interval: Wilson score for one run; a "
    "hierarchical percentile bootstrap (2,000 resamples of the problems, then the seeds; seeded from "
    "params) for several. Rows are grouped by kind (search, lookahead policy, policy, decoder; then "
    "floors and ceilings) and compared only within it. **Bold**: the best of its column and kind and "
    "every row of that kind not significantly worse than it (paired test, Holm-corrected within the "
    "column and kind; nothing bold when the best solves nothing). *Above floor*: the learned row beats "
    "every floor of its kind on the pooled held-out problems by a paired test (McNemar's exact test "
    "for one run each, else the exact sign-flip permutation test on per-problem solved fractions; "
    "Holm-corrected across the table; the largest adjusted p is shown: *yes*); failing that, *on d*: it "
    "beats every floor on domain d's held-out problems (the same tests per domain, their own Holm "
    "family); else *at floor at this budget*, with the floor it is least clearly above. Each table is one problem "
    f"set: its rows ran on the same problems. {SELECTED}: the row selected its checkpoint on this split "
    "(the paper's protocol), so for that row the cell is not a held-out number."
)


__all__: Sequence[str] = ["CoverageTable", "DESCRIPTION", "HELD_OUT", "SELECTED", "coverage_tables", "format_cell",
                          "format_floor", "render_table", "row_group"]
