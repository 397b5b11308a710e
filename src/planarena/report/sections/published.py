"""Section "Published reference rows": numbers copied from the papers
(:mod:`planarena.report.published.loader`), each table labelled with paper and table number, a
side-by-side view (measured here vs published) for every harness method that has a published
column, then the tables reproduced as printed of papers about a protocol this run has results of.
They never enter the measured tables or ``metrics.json``."""

from __future__ import annotations

from typing import Sequence

import pandas as pd

from planarena.report.markdown import DASH, md_table
from planarena.report.published.loader import PublishedMatrix, PublishedPaper
from planarena.report.records import split_sort_key
from planarena.report.sections.coverage import COVERAGE_COLUMNS, measured_cell


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
    """Harness methods with plan results (in ``cov``) on at least one (domain, split) row of ``t``
    that have a column in ``t``, in column order (a method measured only on other instances, e.g.
    the generated suite beside an IPC 2023 table, gets no side-by-side table of dashes)."""
    if cov.empty:
        return []
    rows = {(r.domain, r.split) for r in t.rows}
    measured = {m for m, d, s in zip(cov["method"], cov["domain"], cov["split"]) if (d, s) in rows}
    return [m for m in t.methods if m in measured]


#: measured cells that compare with nothing: no records there, or no instances in this run's split
_NOT_MEASURED = (DASH, "no instances")


def side_by_side_table(t: PublishedMatrix, method: str, cov: pd.DataFrame) -> pd.DataFrame:
    """Rows: the published (domain, split) rows in harness order (domains sorted, splits in
    :data:`planarena.report.records.SPLIT_ORDER`) that this run measured, the comparable cells
    (all of them when it measured none, so the page still shows the published column); columns
    ``measured (this run)`` (from ``cov``, as in Coverage) and ``published (<table>)`` (the
    method's column of ``t``).

    Raises:
        KeyError: ``t`` has no column for ``method``.
    """
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
    measured = [r for r in rows if r["measured (this run)"] not in _NOT_MEASURED]
    return pd.DataFrame(measured or rows, columns=["Domain", "Split", "measured (this run)", published])


def comparable_line(t: PublishedMatrix, method: str, cov: pd.DataFrame) -> str:
    """Which published cells of ``method``'s column this run measured: ``"Comparable cells: 3 of 30
    (blocksworld/test-easy, ...); the other 27 were not run here."``"""
    cells = [(r.domain, r.split) for r in sorted(t.rows, key=lambda r: (r.domain, split_sort_key(r.split)))]
    done = [c for c in cells if measured_cell(cov, c[0], c[1], method) not in _NOT_MEASURED]
    line = f"Comparable cells: {len(done)} of {len(cells)}"
    if done:
        line += " (" + ", ".join(f"{d}/{s}" for d, s in done) + ")"
    rest = len(cells) - len(done)
    return line + (f"; the other {rest} were not run here." if rest else ".")


def _matrix_md(t: PublishedMatrix, cov: pd.DataFrame) -> list[str]:
    out = ["", f"### {t.label}", ""]
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
        out += ["", f"{group}:", "", md_table(df)]
    methods = side_by_side_methods(t, cov)
    out += ["", f"### Side by side: measured (this run) vs published ({t.table})", ""]
    out.append(
        f"For each harness method with plan results here and a column in {t.table} of "
        f"'{t.paper_title}', the cells this run measured. \"measured (this run)\": computed from "
        "this run's records exactly as in Coverage (mean ± population std over seeds, n = instances). "
        "\"published\": copied from the paper, on the paper's instances and limits (see the notes above) "
        f"and its protocol ({t.aggregation}); context, not a like-for-like comparison."
    )
    if not methods:
        out += ["", "No method measured here has a published column yet."]
    for m in methods:
        col = t.column(m)
        out += ["", f"#### {m} (published column: {col.label})", "", comparable_line(t, m, cov), ""]
        out.append(md_table(side_by_side_table(t, m, cov)))
    missing = [m for m in t.methods if m not in methods]
    if missing:
        names = ", ".join(f"`{m}`" for m in missing)
        out += ["", f"Published columns without plan results here: {names}."]
    return out


def render_printed(paper: PublishedPaper) -> list[str]:
    """A paper's tables reproduced as printed, under a heading saying they are not measured."""
    out = [f"### Published: {paper.name} (reference values, not measured here)", ""]
    for t in paper.tables:
        out += [t.markdown(), ""]
    return out


def render(
    matrices: Sequence[PublishedMatrix],
    limits: str | None = None,
    coverage: pd.DataFrame | None = None,
    printed: Sequence[PublishedPaper] = (),
    pool_side: pd.DataFrame | None = None,
    pool_notes: Sequence[str] = (),
    pool_reading: Sequence[str] = (),
) -> list[str]:
    """Markdown lines of the section (the published page).

    ``matrices``: the published matrices, each with its side-by-side view against ``coverage``
    (:func:`planarena.report.sections.coverage.coverage_table`); ``limits``: this run's Fast
    Downward limits (said once, as context); ``printed``: papers whose printed tables follow;
    ``pool_side``: the candidate-pool rows with published values, measured Hit@5 beside them
    (:func:`planarena.report.sections.pool.published_summary`), with the papers' ``pool_notes`` and
    the ``pool_reading`` bullets (this run read against the paper's findings).
    """
    out = ["## Published reference rows", ""]
    out.append(
        "Numbers copied from the papers, not measured by this run. They never enter the "
        "measured tables or `metrics.json`."
    )
    if limits:
        out.append(
            f"This run's Fast Downward limits: {limits} (see Info). A published row with another "
            "limit or other instances is context, not a like-for-like comparison: a shorter A* "
            "limit lowers extrapolation coverage."
        )
    cov = coverage if coverage is not None else pd.DataFrame(columns=list(COVERAGE_COLUMNS))
    for t in matrices:
        out += _matrix_md(t, cov)
    if pool_side is not None:
        out += ["", "### Side by side: candidate-pool Hit@5, measured (this run) vs published", ""]
        out += [" ".join(["Measured: percent, mean over domains per seed, then mean ± std over seeds "
                          "(as on the pool page).", *pool_notes]), "", md_table(pool_side)]
        if pool_reading:
            out += ["", "Reading against the paper (numbers from this run):", "", *pool_reading]
    for paper in printed:
        out += ["", *render_printed(paper)]
    return out
