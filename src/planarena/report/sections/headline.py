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
* **Above floor.** Each learned row (role ``model``) is tested against its own untrained twins
  (:attr:`planarena.methods.base.ReportTraits.twin_of`; docs/concepts.md#untrained-twins), every
  other floor of the table whose ``floor_kinds`` include its kind (another row's twin is not one of
  its floors), and the floor of its ``floor_group``, on the pooled held-out problems both attempted
  with :func:`planarena.stats.paired_coverage`; the p-values of the whole table are Holm-corrected;
  "yes" only when the row is above every one of its floors at :data:`planarena.stats.ALPHA`. Two
  floors of a row that solved the same attempts on every held-out problem (of a domain) are tested
  once there, and their rows say so. The *vs untrained twin* column reads the row against its
  twins alone (the same tests).
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
from planarena.report.records import split_sort_key
from planarena.report.traits import PLAIN, floor_of
from planarena.results.matrices import Problem, SolvedMatrices

#: The pooled column of each table.
HELD_OUT = "held-out"
#: Group order of the rows.
GROUPS: tuple[str, ...] = (*KINDS, "floor", "ceiling")


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
        bold: per column, the rows significantly better than every other row of their kind.
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
    #: per column, the best row of each kind and the rows of its kind not significantly worse
    #: than it (the rows the best cannot be told apart from)
    tier: dict[str, set[str]] = field(default_factory=dict)
    #: per (method, column), which of the column's problems the method has a record for (any seed)
    attempted: dict[tuple[str, str], np.ndarray] = field(default_factory=dict)
    #: floors merged for the tests: ``{floor: {other floor: {domain or HELD_OUT}}}`` where the two
    #: solved the same attempts on every held-out problem (of the domain; identical by construction,
    #: e.g. the two random walks in a domain without revisits, or a twin equal to another floor)
    #: and a learned row has both: one test stands for both (:func:`_test_floors`)
    merged: dict[str, dict[str, set[str]]] = field(default_factory=dict)

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

    The matrices are :class:`planarena.results.matrices.SolvedMatrices` (rows: problems, columns:
    seeds). A column's problems are those of the (domain, split) cells some plan method ran on. A
    method's seeds are every seed it ran with on these cells; a seed without a record for a
    problem counts it unsolved (as the per-domain tables do). ``seed`` seeds every bootstrap and
    Monte-Carlo test (the params' ``seed``), so the same records give the same bytes.
    """
    every = SolvedMatrices(records, index)
    # the (domain, split) cells some plan method ran on: a domain nobody ran is not in the set
    held = [c for c, probs in index.items() if is_held_out(c[1]) and probs and c in every.evaluated]
    # a method's seeds are those it ran with on these cells (SolvedMatrices.within)
    data = every.within(held)
    ran = {s: set(data.methods(s)) for s in sorted({s for _, s in held})}  # split -> methods with records
    out = []
    for splits in _tables_of(ran):
        problems = {s: data.problems(s, None) for s in splits}
        problems[HELD_OUT] = [p for s in splits for p in problems[s]]
        methods = sorted({m for s in splits for m in ran[s]})
        group = {m: row_group(traits.get(m, PLAIN)) for m in methods}
        methods.sort(key=lambda m: (GROUPS.index(group[m]), m))
        table = CoverageTable(splits, problems, methods, group, {}, {})
        for m in methods:
            for col in table.columns:
                if col != HELD_OUT and m not in ran[col]:
                    continue
                if col == HELD_OUT and not all(m in ran[s] for s in splits):
                    continue  # a row that skipped a split has no pooled cell on this problem set
                mat, tried = data.matrix_at(m, problems[col])
                table.solved[(m, col)] = mat
                table.attempted[(m, col)] = tried
                table.cells[(m, col)] = stats.proportion_interval(mat, seed)
        _test_floors(table, traits, seed)
        _mark_best(table, seed)
        out.append(table)
    return out


def twins_in(table: CoverageTable, traits: Mapping[str, ReportTraits], m: str) -> list[str]:
    """The untrained twins of learned row ``m`` among the table's rows (:attr:`ReportTraits.twin_of`),
    ``<m>_untrained`` first."""
    return sorted((f for f in table.methods if traits.get(f, PLAIN).twin_of == m),
                  key=lambda f: (f != f"{m}_untrained", f))


def _floors_of(table: CoverageTable, traits: Mapping[str, ReportTraits], m: str) -> list[str]:
    """The floors of learned row ``m``: its own untrained twins first, then every floor of its kind
    (``floor_kinds``) that is no other row's twin, then the floor of its ``floor_group``."""
    t = traits.get(m, PLAIN)
    floors = twins_in(table, traits, m)
    floors += [f for f in table.methods if table.group[f] == "floor" and not traits.get(f, PLAIN).twin_of
               and t.kind in traits.get(f, PLAIN).floor_kinds]
    own = floor_of(traits, m)
    if own and own in table.methods and own not in floors:
        floors.append(own)
    return floors


def _same_floor(table: CoverageTable, a: str, b: str, domain: str | None) -> bool:
    """Whether floors ``a`` and ``b`` solved the same attempts (same seeds) on every pooled
    held-out problem, or on ``domain``'s: a paired test against either gives the same result."""
    sa, sb = table.solved.get((a, HELD_OUT)), table.solved.get((b, HELD_OUT))
    if sa is None or sb is None or sa.shape != sb.shape:
        return False
    rows = (np.ones(len(table.problems[HELD_OUT]), dtype=bool) if domain is None
            else np.array([p[0] == domain for p in table.problems[HELD_OUT]], dtype=bool))
    return (np.array_equal(sa[rows], sb[rows])
            and np.array_equal(table.attempted[(a, HELD_OUT)][rows], table.attempted[(b, HELD_OUT)][rows]))


def _distinct(table: CoverageTable, floors: list[str], domain: str | None) -> list[str]:
    """``floors`` less those identical to an earlier one there (:func:`_same_floor`; the earlier,
    an own twin first, is tested in their place), recording each merge both ways in
    ``table.merged``."""
    kept: list[str] = []
    for f in floors:
        same = next((k for k in kept if _same_floor(table, k, f, domain)), None)
        if same is None:
            kept.append(f)
            continue
        for a, b in ((f, same), (same, f)):
            table.merged.setdefault(a, {}).setdefault(b, set()).add(domain or HELD_OUT)
    return kept


def _test_floors(table: CoverageTable, traits: Mapping[str, ReportTraits], seed: int) -> None:
    """Fill ``table.floor_tests``: each learned row against each of its floors (:func:`_floors_of`:
    its untrained twins included) on the pooled column, Holm-corrected across the table; and
    ``table.domain_floor_tests``: the same on each domain's held-out problems, its own Holm family
    (a row can learn one domain and not another). Floors that solved the same attempts there are
    tested once (:func:`_distinct`, noted in ``table.merged``)."""
    pairs, per_domain = [], []
    domains = sorted({p[0] for p in table.problems[HELD_OUT]})
    for m in table.methods:
        if traits.get(m, PLAIN).role != "model" or not _learns(traits, m):
            continue
        floors = [f for f in _floors_of(table, traits, m) if (f, HELD_OUT) in table.solved]
        if (m, HELD_OUT) not in table.solved:
            continue
        for f in _distinct(table, floors, None):
            pairs.append((m, f, table.paired(m, f, HELD_OUT, seed)))
        if len(domains) > 1:
            for d in domains:
                per_domain += [(m, f, d, table.paired(m, f, HELD_OUT, seed, d)) for f in _distinct(table, floors, d)]
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
    """Fill ``table.tier`` (per column and kind, the best row and every row not significantly worse
    than it, Holm within the column and kind) and ``table.bold`` (the best row where its tier is
    itself alone among two or more rows: significantly better than every other row of its kind)."""
    for col in table.columns:
        table.bold[col], table.tier[col] = set(), set()
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
            tier = {best} | {m for m, t, p in zip(others, tests, adjusted) if t.diff >= 0 or p >= stats.ALPHA}
            table.tier[col] |= tier
            if others and tier == {best}:
                table.bold[col].add(best)


#: Marks a cell of the split a row selected its checkpoint on (:attr:`ReportTraits.selected_on`)
SELECTED = "(sel.)"


def format_cell(iv: stats.Interval, bold: bool = False) -> str:
    """``"0.29 [0.18, 0.41] 31/105"`` (k/N: attempts solved of problems x seeds); bold when
    significantly best of its kind; ``"–"`` without data."""
    if iv.n == 0 or math.isnan(iv.value):
        return DASH
    attempts = iv.n * iv.runs
    solved = round(iv.value * attempts)
    text = f"{iv.value:.2f} {stats.format_interval(iv)} {solved}/{attempts}"
    return f"**{text}**" if bold else text


def format_floor(table: CoverageTable, m: str) -> str:
    """The *above floor* cell (:func:`planarena.stats.verdict` of the row's pooled and per-domain
    floor tests); on a floor's row, the floors it was merged with (``table.merged``): ``= `g` on
    d1, d2`` (every held-out problem: ``= `g` everywhere``), one test standing for both."""
    merged = table.merged.get(m)
    if merged and m not in table.floor_tests:
        parts = []
        for other, scopes in sorted(merged.items()):
            where = "everywhere" if HELD_OUT in scopes else "on " + ", ".join(sorted(scopes))
            parts.append(f"= `{other}` {where}")
        return "; ".join(parts) + " (same attempts solved: tested once)"
    return stats.verdict(table.floor_tests.get(m, []), table.domain_floor_tests.get(m))


#: The column that reads each learned row against its untrained twin(s)
TWIN_COLUMN = "vs untrained twin"


def twin_test(table: CoverageTable, m: str, twin: str) -> tuple[stats.PairedTest, float] | None:
    """The pooled test of learned row ``m`` against its twin and its Holm-adjusted p (the test of
    the floor it was merged with where the twin was merged, :attr:`CoverageTable.merged`), or None."""
    tests = {f: (t, p) for f, t, p in table.floor_tests.get(m, [])}
    if twin in tests:
        return tests[twin]
    same = [f for f, scopes in table.merged.get(twin, {}).items() if HELD_OUT in scopes and f in tests]
    return tests[same[0]] if same else None


def format_twin(table: CoverageTable, traits: Mapping[str, ReportTraits], m: str) -> str:
    """The *vs untrained twin* cell of learned row ``m``: per twin of it in the table (its
    ``untrained`` value named when it has several: ``untrained``, ``uniform``), ``yes`` when the
    pooled paired test puts the row significantly above the twin, ``below`` when significantly
    under it, else ``at twin``, with the Holm-adjusted p of the table's floor family; ``no twin
    records`` for a learned row whose twin has no cell here; ``"–"`` for other rows."""
    if traits.get(m, PLAIN).role != "model" or not _learns(traits, m) or (m, HELD_OUT) not in table.solved:
        return DASH
    twins = [f for f in twins_in(table, traits, m) if (f, HELD_OUT) in table.solved]
    if not twins:
        return "no twin records"
    parts = []
    for twin in twins:
        got = twin_test(table, m, twin)
        if got is None:
            parts.append(f"`{twin}`: not tested")
            continue
        t, p = got
        word = "yes" if t.diff > 0 and p < stats.ALPHA else "below" if t.diff < 0 and p < stats.ALPHA else "at twin"
        label = twin[len(m) + 1:] if twin.startswith(m + "_") else twin
        parts.append(f"{label + ': ' if len(twins) > 1 else ''}{word} ({stats.format_p(p)})")
    return "; ".join(parts)


def render_table(
    table: CoverageTable, traits: Mapping[str, ReportTraits], budget_cells: Mapping[str, str] | None = None,
) -> pd.DataFrame:
    """The table as a frame: kind, method, one column per split and ``held-out`` (titled with
    their problem counts), ``above floor``, ``vs untrained twin`` (:func:`format_twin`) and, when
    ``budget_cells`` is given, ``budget``."""
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
        row[TWIN_COLUMN] = format_twin(table, traits, m)
        if budget_cells is not None:
            row["budget"] = budget_cells.get(m, DASH)
        rows.append(row)
    columns = ["kind", "method", *titles.values(), "above floor", TWIN_COLUMN,
               *(["budget"] if budget_cells is not None else [])]
    return pd.DataFrame(rows, columns=columns)


DESCRIPTION = (
    "Each cell: fraction of attempts solved **and** accepted by the independent validator, its 95 % "
    "interval, and k/N (solved attempts of problems x seeds). Interval: Wilson score for one run; a "
    "hierarchical percentile bootstrap (2,000 resamples of the problems, then the seeds; seeded from "
    "params) for several. Rows are grouped by kind (search, lookahead policy, policy, decoder; then "
    "floors and ceilings) and compared only within it. **Bold**: the row significantly better than every "
    "other row of its kind in that column (paired tests, Holm-adjusted p < 0.05 within the column and kind); "
    "nothing is bold where the best cannot be told apart from another row (the *At a glance* box names "
    "them). Every p shown is Holm-adjusted (the step-down correction over the table's tests), so it can "
    "read 1.00 where the raw test's p is smaller. *Above floor*: the learned row beats "
    "every floor of its kind, its own untrained twin included (another row's twin is not one of its floors; "
    "a lookahead policy's floors are its twin and a uniform choice among its lookahead's candidates, the "
    "primitive random walks are references there), on the pooled held-out problems by a paired test (McNemar's exact test "
    "for one run each, else the exact sign-flip permutation test on per-problem solved fractions; "
    "Holm-corrected across the table; the largest adjusted p is shown: *yes*); failing that, *on d*: it "
    "beats every floor on domain d's held-out problems (the same tests per domain, their own Holm "
    "family); else *at floor at this budget*, with the floor it is least clearly above. Two floors that solved the "
    "same attempts on every held-out problem (of a domain) are tested once there (their rows say `= other`). "
    f"*{TWIN_COLUMN}*: the same pooled test against the row's untrained twin (its block with `untrained: true`: "
    "the same search, decoder, limits and caps, no training): *yes* above it, *at twin*, or *below*, with the "
    "adjusted p. Each table is one problem "
    f"set: its rows ran on the same problems. {SELECTED}: the row selected its checkpoint on this split "
    "(the paper's protocol), so for that row the cell is not a held-out number."
)


__all__: Sequence[str] = ["CoverageTable", "DESCRIPTION", "HELD_OUT", "SELECTED", "TWIN_COLUMN", "coverage_tables",
                          "format_cell", "format_floor", "format_twin", "render_table", "row_group", "twin_test",
                          "twins_in"]
