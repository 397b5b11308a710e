"""Published reference numbers, copied from the papers, kept apart from every measured number.

DESIGN.md ("Contracts: Published reference rows"): numbers copied from the papers appear only in
clearly separated rows/tables labelled with paper and table number, never mixed into measured rows.
This module is the single place where such numbers live, as data with their citation; the report
(:mod:`planarena.report.leaderboard`) renders each :class:`PublishedMatrix` in its own labelled subsection of
"Published reference rows", plus a side-by-side view (measured vs published) for every harness
method that has a published column.

A :class:`PublishedMatrix` is one wide table of a paper: rows keyed by harness (domain, split),
columns keyed by the system label as printed in the paper and, where the harness runs the same
system, the harness method name (:attr:`PublishedColumn.method`); each cell is a
:class:`PublishedCell` (mean and, when the paper gives one, std).

To add a published table: append a :class:`PublishedMatrix` to :data:`PUBLISHED_TABLES`, copying
the values verbatim from the paper (``../shared/papers/<paper>.txt``) and naming the table number.
Each row is written as the paper prints it (``"1.00 0.56±0.16 ..."``, one token per column) and
parsed by :func:`parse_cells`, which rejects a row whose token count differs from the columns.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

#: One published value: ``"0.60"`` (no std) or ``"0.56±0.16"``.
_CELL = re.compile(r"^(\d+(?:\.\d+)?)(?:±(\d+(?:\.\d+)?))?$")


@dataclass(frozen=True)
class PublishedCell:
    """One published value: ``mean`` and ``std`` (``None`` when the paper gives no spread)."""

    mean: float
    std: float | None = None

    def format(self) -> str:
        """``"0.56 ± 0.16"``, or ``"0.60"`` without a std (two decimals, as in the papers)."""
        if self.std is None:
            return f"{self.mean:.2f}"
        return f"{self.mean:.2f} ± {self.std:.2f}"


def parse_cells(text: str) -> tuple[PublishedCell, ...]:
    """Cells of one row written as the paper prints it: whitespace-separated ``mean[±std]``.

    Raises:
        ValueError: a token is not ``mean`` or ``mean±std``.
    """
    cells = []
    for token in text.split():
        m = _CELL.match(token)
        if not m:
            raise ValueError(f"not a published value (mean or mean±std): {token!r}")
        std = None if m.group(2) is None else float(m.group(2))
        cells.append(PublishedCell(float(m.group(1)), std))
    return tuple(cells)


@dataclass(frozen=True)
class PublishedColumn:
    """One column (system) of a published table.

    ``label``: the system as printed in the paper (``"WL-XGB delta"``); ``method``: the harness
    method name that runs the same system (``"wl_xgb_delta"``), or ``None`` when the harness has
    none; ``group``: display group (wide tables are rendered as one markdown table per group).
    """

    label: str
    method: str | None
    group: str

    @property
    def heading(self) -> str:
        """Column title: the paper's label, with the harness method in parentheses if any."""
        return self.label if self.method is None else f"{self.label} ({self.method})"


@dataclass(frozen=True)
class PublishedMatrixRow:
    """One row: harness ``domain``/``split``, the paper's labels for them, one cell per column."""

    domain: str
    split: str
    domain_label: str
    split_label: str
    cells: tuple[PublishedCell, ...]


@dataclass(frozen=True)
class PublishedMatrix:
    """A wide block of numbers copied from one table of one paper.

    Attributes:
        key: short identifier (stable; used in tests and for lookups).
        paper_title: the paper's title, verbatim.
        paper_file: path of the paper's plain-text copy, relative to the repository root.
        table: the table as numbered in the paper (``"Table 1"``).
        caption: the start of the paper's caption, verbatim (to find the table in the text).
        metric: what the values are, in the harness's terms (``"coverage"``).
        aggregation: how the values aggregate runs (``"mean ± std over 3 seeds"``).
        columns: the systems, in the paper's order.
        rows: the copied rows, in the paper's order; every row has one cell per column.
        notes: caveats a reader needs to compare these numbers with measured ones.

    Raises:
        ValueError: a row's cell count differs from the column count, or a column label, a
            harness method or a (domain, split) row key appears twice.
    """

    key: str
    paper_title: str
    paper_file: str
    table: str
    caption: str
    metric: str
    aggregation: str
    columns: tuple[PublishedColumn, ...]
    rows: tuple[PublishedMatrixRow, ...]
    notes: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        labels = [c.label for c in self.columns]
        methods = [c.method for c in self.columns if c.method is not None]
        keys = [(r.domain, r.split) for r in self.rows]
        for what, items in (("column label", labels), ("harness method", methods), ("row", keys)):
            dup = sorted({str(x) for x in items if items.count(x) > 1})
            if dup:
                raise ValueError(f"{self.key}: {what} repeated: {', '.join(dup)}")
        for r in self.rows:
            if len(r.cells) != len(self.columns):
                raise ValueError(
                    f"{self.key}: row {r.domain_label} {r.split_label} has {len(r.cells)} values, "
                    f"expected {len(self.columns)} (one per column)"
                )

    @property
    def label(self) -> str:
        """Heading that says these numbers were copied, not measured, and where from."""
        return (
            f"Published (not measured here): {self.table} of '{self.paper_title}' — "
            f"{self.metric}, {self.aggregation}"
        )

    @property
    def groups(self) -> tuple[str, ...]:
        """Column groups in first-appearance order."""
        return tuple(dict.fromkeys(c.group for c in self.columns))

    @property
    def methods(self) -> tuple[str, ...]:
        """Harness methods that have a column, in column order."""
        return tuple(c.method for c in self.columns if c.method is not None)

    def column(self, name: str) -> PublishedColumn | None:
        """The column whose harness method or paper label is ``name`` (method first)."""
        for c in self.columns:
            if c.method == name:
                return c
        for c in self.columns:
            if c.label == name:
                return c
        return None

    def row(self, domain: str, split: str) -> PublishedMatrixRow | None:
        """The row of harness ``domain``/``split``, or ``None`` if the paper has none."""
        for r in self.rows:
            if (r.domain, r.split) == (domain, split):
                return r
        return None

    def cell(self, domain: str, split: str, column: str) -> PublishedCell | None:
        """Published value for harness ``domain``/``split`` and a column (method or paper label);
        ``None`` when the paper has no such row or column."""
        col = self.column(column)
        row = self.row(domain, split)
        if col is None or row is None:
            return None
        return row.cells[self.columns.index(col)]


_BASELINES = "Baselines"
_STATE_CENTRIC = "State-centric transition models (the paper's 8 configurations)"

#: Columns of Table 1, in the paper's order (17: FD without std, then 16 systems with mean ± std).
_TABLE1_COLUMNS = (
    PublishedColumn("FD", "fd_astar_lmcut", _BASELINES),
    PublishedColumn("Plansformer (greedy)", None, _BASELINES),
    PublishedColumn("PlanGPT greedy", None, _BASELINES),
    PublishedColumn("PlanGPT appl.", None, _BASELINES),
    PublishedColumn("PlanGPT regr.", None, _BASELINES),
    PublishedColumn("SATr (enc) greedy", None, _BASELINES),
    PublishedColumn("SATr (enc-dec) greedy", None, _BASELINES),
    PublishedColumn("SATr (enc-dec) appl.", None, _BASELINES),
    PublishedColumn("SATr (enc-dec) regr.", None, _BASELINES),
    PublishedColumn("WL-LSTM state", "wl_lstm_state", _STATE_CENTRIC),
    PublishedColumn("WL-LSTM delta", "wl_lstm_delta", _STATE_CENTRIC),
    PublishedColumn("WL-XGB state", "wl_xgb_state", _STATE_CENTRIC),
    PublishedColumn("WL-XGB delta", "wl_xgb_delta", _STATE_CENTRIC),
    PublishedColumn("FSF-LSTM state", "fsf_lstm_state", _STATE_CENTRIC),
    PublishedColumn("FSF-LSTM delta", "fsf_lstm_delta", _STATE_CENTRIC),
    PublishedColumn("FSF-XGB state", "fsf_xgb_state", _STATE_CENTRIC),
    PublishedColumn("FSF-XGB delta", "fsf_xgb_delta", _STATE_CENTRIC),
)

_DOMAINS = {"Blocks": "blocksworld", "Gripper": "gripper", "VisitAll": "visitall",
            "Logistics": "logistics"}  # fmt: skip
_SPLITS = {"Val.": "validation", "Interp.": "interpolation", "Extrap.": "extrapolation"}

#: Table 1 rows as printed (../shared/papers/state-centric-transition-models.txt, the 12 lines
#: after "Table 1: Coverage rates"), with the text extraction's duplicated underline markup
#: (``¯{}_{\scriptscriptstyle\pm\underline{0.16}}`` after ``0.56±0.16``: second best) removed.
#: Token order = :data:`_TABLE1_COLUMNS`.
# fmt: off
_TABLE1_TEXT = (
    ("Blocks", "Val.",
     "1.00 1.00±0.00 0.00±0.00 0.00±0.00 0.00±0.00 1.00±0.00 1.00±0.00 1.00±0.00 0.00±0.00 "
     "0.56±0.16 0.67±0.00 1.00±0.00 0.67±0.00 0.00±0.00 0.00±0.00 0.00±0.00 0.00±0.00"),
    ("Blocks", "Interp.",
     "1.00 1.00±0.00 0.56±0.16 0.56±0.16 0.00±0.00 1.00±0.00 1.00±0.00 1.00±0.00 1.00±0.00 "
     "0.56±0.16 0.89±0.16 1.00±0.00 1.00±0.00 0.00±0.00 0.00±0.00 0.00±0.00 0.00±0.00"),
    ("Blocks", "Extrap.",
     "0.60 0.10±0.00 0.00±0.00 0.00±0.00 0.00±0.00 0.05±0.07 0.07±0.02 0.13±0.05 0.00±0.00 "
     "0.03±0.02 0.15±0.07 0.25±0.00 0.45±0.00 0.00±0.00 0.00±0.00 0.00±0.00 0.00±0.00"),
    ("Gripper", "Val.",
     "1.00 0.00±0.00 0.00±0.00 0.00±0.00 0.00±0.00 1.00±0.00 0.17±0.24 1.00±0.00 1.00±0.00 "
     "1.00±0.00 0.67±0.47 0.00±0.00 0.00±0.00 0.17±0.24 0.33±0.24 0.00±0.00 0.00±0.00"),
    ("Gripper", "Interp.",
     "1.00 0.00±0.00 0.00±0.00 0.44±0.16 0.00±0.00 0.89±0.16 0.67±0.00 1.00±0.00 1.00±0.00 "
     "1.00±0.00 0.67±0.47 0.00±0.00 0.00±0.00 0.45±0.32 0.00±0.00 0.67±0.00 0.00±0.00"),
    ("Gripper", "Extrap.",
     "0.13 0.00±0.00 0.00±0.00 0.00±0.00 0.00±0.00 0.02±0.03 0.00±0.00 0.15±0.06 0.79±0.16 "
     "0.25±0.08 0.17±0.19 0.00±0.00 0.00±0.00 0.06±0.00 0.00±0.00 0.00±0.00 0.00±0.00"),
    ("VisitAll", "Val.",
     "1.00 0.00±0.00 0.00±0.00 0.14±0.12 0.00±0.00 1.00±0.00 0.33±0.09 0.93±0.04 0.99±0.02 "
     "0.99±0.02 0.79±0.29 1.00±0.00 1.00±0.00 0.03±0.04 0.49±0.02 0.13±0.00 0.92±0.00"),
    ("VisitAll", "Interp.",
     "1.00 0.00±0.00 0.05±0.04 0.67±0.18 0.41±0.22 1.00±0.00 0.87±0.01 0.99±0.01 1.00±0.00 "
     "1.00±0.00 0.99±0.01 1.00±0.00 1.00±0.00 0.56±0.02 0.38±0.02 0.86±0.00 0.95±0.00"),
    ("VisitAll", "Extrap.",
     "0.50 0.00±0.00 0.00±0.00 0.02±0.02 0.00±0.00 0.42±0.11 0.00±0.00 0.15±0.05 0.64±0.12 "
     "0.47±0.05 0.59±0.40 0.08±0.00 0.87±0.00 0.00±0.00 0.03±0.01 0.00±0.00 0.13±0.00"),
    ("Logistics", "Val.",
     "1.00 0.00±0.00 0.00±0.00 0.08±0.12 0.00±0.00 0.00±0.00 0.00±0.00 0.00±0.00 0.00±0.00 "
     "0.17±0.12 0.08±0.12 0.00±0.00 0.00±0.00 0.00±0.00 0.00±0.00 0.00±0.00 0.00±0.00"),
    ("Logistics", "Interp.",
     "1.00 0.00±0.00 0.07±0.05 0.44±0.09 0.19±0.14 0.11±0.00 0.22±0.31 0.26±0.29 0.22±0.31 "
     "0.78±0.16 0.29±0.10 0.11±0.00 0.00±0.00 0.18±0.10 0.11±0.00 0.44±0.00 0.11±0.00"),
    ("Logistics", "Extrap.",
     "0.26 0.00±0.00 0.00±0.00 0.00±0.00 0.00±0.00 0.00±0.00 0.00±0.00 0.00±0.00 0.00±0.00 "
     "0.00±0.00 0.00±0.00 0.00±0.00 0.00±0.00 0.00±0.00 0.00±0.00 0.00±0.00 0.00±0.00"),
)
# fmt: on

#: Table 1 of the state-centric transition-model paper: coverage of FD (A*+LM-cut, 60 s), the
#: action-centric baselines (Plansformer, PlanGPT and SATr; PlanGPT/SATr taken by the paper from
#: Fritzsche et al. 2025) and the paper's 8 state-centric configurations, on the SATr splits.
STATE_CENTRIC_TABLE1 = PublishedMatrix(
    key="state-centric-table1",
    paper_title="On Sample-Efficient Generalized Planning via Learned Transition Models",
    paper_file="../shared/papers/state-centric-transition-models.txt",
    table="Table 1",
    caption="Table 1: Coverage rates (%) across all configurations.",
    metric="coverage",
    aggregation="mean ± std over 3 seeds",
    columns=_TABLE1_COLUMNS,
    rows=tuple(
        PublishedMatrixRow(_DOMAINS[d], _SPLITS[s], d, s, parse_cells(text))
        for d, s, text in _TABLE1_TEXT
    ),
    notes=(
        "Values are fractions of instances solved (satisficing plans accepted by VAL); the "
        "caption says 'Coverage rates (%)' but the values are in [0, 1].",
        "FD = Fast Downward A*+LM-cut with a 60 s timeout, one run (no std). PlanGPT and SATr "
        "columns are copied by the paper from Fritzsche et al. (2025), Symmetry-aware transformer "
        "training (three random seeds); Plansformer is its public Blocksworld checkpoint, run "
        "zero-shot on the other domains.",
        "The state-centric paper does not state its seed count in the text; its ± values are "
        "consistent with the population std over 3 seeds (e.g. 0.56 ± 0.16 on 3 instances = "
        "per-seed 1/3, 2/3, 2/3).",
        "The published table has no train split. The paper ran on the Symmetry-Aware Transformer "
        "splits (its Table 4); the instances measured here come from this run's suite and may "
        "differ, so these values are context, not a like-for-like comparison.",
        "The paper's bold (best) and underline (second best, over non-FD columns) marks are not "
        "reproduced.",
    ),
)

#: Every published table the report renders, in display order.
PUBLISHED_TABLES: tuple[PublishedMatrix, ...] = (STATE_CENTRIC_TABLE1,)
