"""The ``report`` stage: ``reports/leaderboard.md``, ``reports/metrics.json`` and
``reports/plots/*.png`` from the result records (DESIGN.md "Leaderboards").

This module only orchestrates: :func:`analyse` asks each section module of
:mod:`planarena.report.sections` for its tables, :func:`render_leaderboard` joins the sections'
markdown in the order DESIGN.md fixes (Problems, Info, Coverage, Hit@k, Schema learning, Cost,
Per-domain detail, Published reference rows, Plots), :func:`build_metrics` writes the small
metrics file, and :func:`run_stage` does the I/O. Rules the sections implement:

* Every number is computed from the records, never typed in; numbers copied from papers come only
  from :mod:`planarena.report.published` (data files) and appear only in labelled published
  tables and columns.
* A plan counts as solved only if ``outcome == "solved"`` *and* the independent validator
  accepted it (:attr:`ResultRecord.counts_as_solved`); rejected plans are listed under Problems.
* Each metric is declared once (:mod:`planarena.report.metrics`): higher-is-better, aggregation
  over seeds, Sum row and format; the tables derive "best", sums and cells from it.
* The report knows no method family: what is family-specific comes from the records or from
  :meth:`planarena.methods.base.Method.report_traits` (:mod:`planarena.report.traits`).
* Output is deterministic: the same inputs, params, git state and installed packages give the same
  bytes (no timestamps; all tables sorted).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

import pandas as pd

from planarena.config import Layout, is_held_out
from planarena.core.io import atomic_write_text
from planarena.report import plots as plotting
from planarena.report.markdown import DASH
from planarena.report.metrics import COVERAGE, Metric, instance_weighted
from planarena.report.published.loader import PAPERS, PublishedPaper
from planarena.report.records import (
    ReportInputs,
    declared_domains,
    declared_splits,
    instance_index,
    is_pool_record,
    latest_records,
    load_inputs,
)
from planarena.report.sections import (
    cost,
    coverage,
    detail,
    hitk,
    info,
    pool,
    problems,
    quality,
    published,
    schema,
)
from planarena.report.traits import method_traits

LEADERBOARD = "leaderboard.md"
METRICS = "metrics.json"


@dataclass
class Analysis:
    """Every table the leaderboard and metrics are rendered from (see :func:`analyse`)."""

    index: dict[tuple[str, str], frozenset[str]]
    coverage: pd.DataFrame
    coverage_sum: pd.DataFrame
    ceiling: list[str]
    successor_hit1: dict[str, float]
    quality: pd.DataFrame
    problems: problems.Problems
    hitk: pd.DataFrame | None
    pool: pool.Pool | None
    schema: pd.DataFrame | None
    cost: pd.DataFrame
    details: dict[str, pd.DataFrame]
    by_size: pd.DataFrame
    methods: pd.DataFrame
    n_records: int


def analyse(inputs: ReportInputs) -> Analysis:
    """Compute every table from the inputs (pure apart from reading ``inputs.acp_dir``)."""
    latest = latest_records(inputs.records)
    index = instance_index(inputs.manifest, latest, inputs.domains, inputs.splits)
    cov = coverage.coverage_table(inputs.records, inputs.manifest, inputs.domains, inputs.splits)
    return Analysis(
        index=index,
        coverage=cov,
        coverage_sum=coverage.coverage_sum(cov),
        ceiling=coverage.horizon_ceiling(inputs.plan_records, index,
                                         {m: t.horizon for m, t in inputs.traits.items()},
                                         dict.fromkeys(cov["method"])),
        successor_hit1=hitk.held_out_mean(inputs.records, "hit@1"),
        quality=quality.quality_table(inputs.records, inputs.plan_records, index),
        problems=problems.analyse(inputs.records, inputs.plan_records, index),
        hitk=hitk.successor_set_table([r for r in inputs.records if not is_pool_record(r)]),
        pool=pool.analyse(latest, inputs.traits, inputs.acp_dir),
        schema=schema.schema_table(inputs.records),
        cost=cost.cost_table(inputs.records),
        details=detail.detail_tables(inputs.records, inputs.plan_records, index),
        by_size=plotting.coverage_by_size(inputs.records, inputs.manifest),
        methods=info.methods_table(inputs.records),
        n_records=len(latest),
    )


def render_leaderboard(
    a: Analysis,
    run_info: Mapping,
    plots: Sequence[tuple[str, str]] = (),
    papers: Sequence[PublishedPaper] = PAPERS,
) -> str:
    """The whole ``leaderboard.md`` text (pure: same arguments, same string).

    ``run_info``: :func:`planarena.report.sections.info.collect_info`'s dict; ``plots``: (caption,
    link relative to the markdown file) pairs; ``papers``: the published numbers (their matrices
    always, their printed tables when this run has results of the protocol they are about).
    """
    results_of = {"pool": a.pool is not None}
    lines = [
        "# planarena leaderboard",
        "",
        "Generated by the `report` stage from `data/results/*.jsonl`, `data/plans/records.jsonl` "
        "and `data/problems/manifest.jsonl`; do not edit by hand.",
        "",
    ]
    for section in (
        problems.render(a.problems),
        info.render(run_info, a.methods),
        coverage.render(a.coverage, a.coverage_sum, a.ceiling),
        quality.render(a.quality),
        hitk.render(a.hitk, pool.render(a.pool)),
        schema.render(a.schema),
        cost.render(a.cost),
        detail.render(a.details),
        published.render(
            [m for p in papers for m in p.matrices],
            run_info.get("planner_limits"),
            a.coverage,
            [p for p in papers if p.tables and results_of.get(p.protocol, True)],
        ),
    ):
        lines += [*section, ""]
    lines += ["## Plots", ""]
    for caption, link in plots:
        lines += [f"![{caption}]({link})", "", f"{caption}: [{link}]({link})", ""]
    if not plots:
        lines += ["No plots.", ""]
    return "\n".join(lines).rstrip("\n") + "\n"


def build_metrics(a: Analysis) -> dict:
    """The headline numbers for ``reports/metrics.json`` (``dvc metrics show`` / ``dvc exp show``
    fit a terminal; the per-domain tables are in the leaderboard).

    ``coverage.<method>.<split>``: held-out coverage per split, all domains together (instance
    weighted, mean over seeds); ``coverage_sum.<method>``: over every held-out split;
    ``hit@1_successor_set.<method>``: successor-set Hit@1 over held-out trajectories (per seed the
    mean over trajectories, then the mean over seeds); ``hit@5_pool.<protocol>.<method>``: the pool
    summary's Hit@5 (percent, mean over domains); ``problems``: counts of error and diverged
    attempts and of rejected plans. Values rounded as :data:`planarena.report.metrics.COVERAGE`
    declares.
    """
    cov: dict[str, dict[str, float]] = {}
    ok = a.coverage[(a.coverage["status"] == "ok") & a.coverage["split"].map(is_held_out).astype(bool)]
    for (method, split), cells in ok.groupby(["method", "split"], sort=False):
        n, mean, _ = instance_weighted(cells)
        if n:
            cov.setdefault(method, {})[split] = COVERAGE.json_value(mean)
    sums = {
        r.method: COVERAGE.json_value(r.mean)
        for r in a.coverage_sum.itertuples(index=False)
        if r.n > 0
    }
    failed, rejected = a.problems.failed, a.problems.rejected
    counts = {
        "error": int(failed.loc[failed["Outcome"] == "error", "Attempts"].astype(int).sum()),
        "diverged": int(failed.loc[failed["Outcome"] == "diverged", "Attempts"].astype(int).sum()),
        "rejected_plans": int(rejected["Plans"].astype(int).sum()),
    }
    out: dict = {"coverage": cov, "coverage_sum": sums}
    if a.successor_hit1:
        out["hit@1_successor_set"] = {m: COVERAGE.json_value(v) for m, v in a.successor_hit1.items()}
    if a.pool is not None and a.pool.summary is not None:
        pool_hit5: dict[str, dict[str, float]] = {}
        for r in a.pool.summary.to_dict("records"):
            if r.get("Hit@5") not in (None, DASH):
                pool_hit5.setdefault(r["protocol"], {})[r["method"]] = Metric.parse(r["Hit@5"])[0]
        out["hit@5_pool"] = pool_hit5
    out["problems"] = counts
    return out


def write_report(
    inputs: ReportInputs, run_info: Mapping, reports_dir: str | os.PathLike = "reports"
) -> Analysis:
    """Write ``leaderboard.md``, ``metrics.json`` and the plots under ``reports_dir`` from
    already-loaded inputs and info; returns the analysis."""
    reports_dir = Path(reports_dir)
    a = analyse(inputs)
    plot_dir = reports_dir / plotting.PLOTS_DIR
    plotting.plot_coverage_by_size(a.by_size, plot_dir / plotting.COVERAGE_PLOT)
    plots = [("Coverage vs instance size", f"{plotting.PLOTS_DIR}/{plotting.COVERAGE_PLOT}")]
    if plotting.plot_hit5_by_protocol(a.pool.summary if a.pool else None, plot_dir / plotting.HITK_PLOT):
        plots.append(("Hit@5 by protocol (candidate pool)", f"{plotting.PLOTS_DIR}/{plotting.HITK_PLOT}"))
    atomic_write_text(reports_dir / LEADERBOARD, render_leaderboard(a, run_info, plots))
    atomic_write_text(
        reports_dir / METRICS, json.dumps(build_metrics(a), indent=2, sort_keys=True) + "\n"
    )
    return a


def run_stage(params: dict, layout: Layout, reports_dir: Path = Path("reports")) -> None:
    """Entry point of the ``report`` DVC stage.

    Reads ``layout.results/*.jsonl``, ``layout.plans/records.jsonl``,
    ``layout.problems/manifest.jsonl`` and ``layout.acp/*/summary.json``. Params read:
    ``profile``, ``suite``, the names under ``suites.<suite>.domains`` and ``evaluation.splits``
    (so that empty domains and splits are reported), ``planners``, the ``methods`` blocks (each
    method's :meth:`~planarena.methods.base.Method.report_traits`), and the whole resolved tree
    for the params hash.

    Raises:
        FileNotFoundError: the problem manifest is missing.
        ValueError: a malformed results/plans line (names the file and line).
        KeyError: a ``methods`` block names an unregistered method.
    """
    traits = method_traits(params)
    inputs = load_inputs(layout, declared_domains(params), declared_splits(params), traits)
    write_report(inputs, info.collect_info(params, traits), reports_dir)
