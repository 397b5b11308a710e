"""Published reference numbers, copied from the papers, kept apart from every measured number.

DESIGN.md ("Contracts: Published reference rows"): numbers copied from the papers appear only in
clearly separated rows/tables labelled with paper and table number, never mixed into measured rows.
This module is the single place where such numbers live, as data with their citation; the report
(:mod:`planarena.report`) renders each :class:`PublishedTable` in its own labelled section.

To add a published table: append a :class:`PublishedTable` to :data:`PUBLISHED_TABLES`, copying the
values verbatim from the paper (``../shared/papers/<paper>.txt``) and naming the table number.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PublishedRow:
    """One row of a published table.

    ``domain`` is the harness domain name (as in ``data/problems/<domain>``); ``label`` is the row
    name as printed in the paper; ``values`` maps a harness split name to the published value.
    """

    domain: str
    label: str
    values: tuple[tuple[str, float], ...]

    def value(self, split: str) -> float | None:
        """The published value for ``split``, or ``None`` if the paper reports none."""
        return dict(self.values).get(split)


@dataclass(frozen=True)
class PublishedTable:
    """A block of numbers copied from one table of one paper.

    Attributes:
        key: short identifier (stable; used in tests and for lookups).
        system: what was measured in the paper (planner/method and its budget).
        paper_title: the paper's title, verbatim.
        paper_file: path of the paper's plain-text copy, relative to the repository root.
        table: the table as numbered in the paper (``"Table 1"``).
        metric: what the values mean, in the harness's terms.
        splits: the harness split names the table has columns for, in display order.
        rows: the copied rows.
        notes: caveats a reader needs to compare these numbers with measured ones.
    """

    key: str
    system: str
    paper_title: str
    paper_file: str
    table: str
    metric: str
    splits: tuple[str, ...]
    rows: tuple[PublishedRow, ...]
    notes: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        """Heading that says these numbers were copied, not measured, and where from."""
        return (
            f"Published (not measured here): {self.system} — {self.table} of "
            f"'{self.paper_title}' ({self.paper_file})"
        )


#: Fast Downward A*+LM-cut with a 60 s limit: the "FD" column of Table 1 of the state-centric
#: transition-model paper (../shared/papers/state-centric-transition-models.txt, Table 1: "Coverage
#: rates ... FD = Fast Downward (60s timeout)"). Values are fractions of instances solved.
FD_LMCUT_STATE_CENTRIC_TABLE1 = PublishedTable(
    key="state-centric-table1-fd-lmcut",
    system="Fast Downward A*+LM-cut, 60 s",
    paper_title="On Sample-Efficient Generalized Planning via Learned Transition Models",
    paper_file="../shared/papers/state-centric-transition-models.txt",
    table="Table 1",
    metric="coverage (fraction of instances solved)",
    splits=("validation", "interpolation", "extrapolation"),
    rows=(
        PublishedRow(
            "blocksworld",
            "Blocks",
            (("validation", 1.00), ("interpolation", 1.00), ("extrapolation", 0.60)),
        ),
        PublishedRow(
            "gripper",
            "Gripper",
            (("validation", 1.00), ("interpolation", 1.00), ("extrapolation", 0.13)),
        ),
        PublishedRow(
            "visitall",
            "VisitAll",
            (("validation", 1.00), ("interpolation", 1.00), ("extrapolation", 0.50)),
        ),
        PublishedRow(
            "logistics",
            "Logistics",
            (("validation", 1.00), ("interpolation", 1.00), ("extrapolation", 0.26)),
        ),
    ),
    notes=(
        "The published table has no train split.",
        "The paper ran on the Symmetry-Aware Transformer splits; the instances measured here "
        "come from this run's suite and may differ, so these values are context, not a "
        "comparable row.",
        "The caption says 'Coverage rates (%)' but the values are fractions in [0, 1].",
    ),
)

#: Every published table the report renders, in display order.
PUBLISHED_TABLES: tuple[PublishedTable, ...] = (FD_LMCUT_STATE_CENTRIC_TABLE1,)
