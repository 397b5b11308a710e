"""The ``report`` stage: ``reports/leaderboard.md`` (the front page), ``reports/detail/*.md`` (the
detail pages), ``reports/metrics.json`` and ``reports/plots/`` (PNGs, their data files and
Vega-Lite templates) from the result records (docs/concepts.md#the-pages).

This module only orchestrates: :func:`analyse` asks each section module of
:mod:`planarena.report.sections` for its tables, :mod:`planarena.report.pages` lays them out on the
front page and the detail pages (:func:`render_leaderboard` is the front page),
:func:`build_metrics` writes the small metrics file, and :func:`run_stage` does the I/O. Rules the
sections implement:

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

import dataclasses
import json
import os
from collections import defaultdict
from pathlib import Path
from typing import Mapping, Sequence

from planarena.config import SCHEMA_SPLIT, Layout
from planarena.core.io import atomic_write_text
from planarena.report import bundle, compare, pages
from planarena.report.model import Analysis
from planarena.report import plots as plotting
from planarena.report.metrics import COVERAGE
from planarena.report.published.loader import PAPERS, PublishedPaper
from planarena.report.records import (
    ReportInputs,
    declared_domains,
    declared_splits,
    instance_index,
    is_pool_record,
    latest_records,
    load_inputs,
    plan_records_of,
    record_task,
)
from planarena.report.sections import claims as claims_section
from planarena.report.sections import (
    budget,
    divergence,
    headline,
    cost,
    coverage,
    detail,
    hitk,
    info,
    pool,
    problems,
    quality,
    ranking,
    schema,
)
from planarena.report.traits import method_traits

LEADERBOARD = "leaderboard.md"
METRICS = "metrics.json"


def analyse(inputs: ReportInputs) -> Analysis:
    """Compute every table from the inputs (pure apart from reading ``inputs.acp_dir``). Records of
    task ``not_applicable`` (a method that does not run on a domain of the suite) enter no table;
    they are listed (:attr:`Analysis.not_applicable`)."""
    dropped = sorted({(r.method, r.domain, r.failure_reason or "") for r in latest_records(inputs.records)
                      if r.outcome == "not_applicable"})
    if dropped:
        inputs = dataclasses.replace(inputs, records=[r for r in inputs.records if r.outcome != "not_applicable"])
    latest = latest_records(inputs.records)
    # candidate-pool records name their protocol's split (``same domain``) and encoder, not a
    # problem of the problem set: they make no (domain, split) cell of the instance index
    index = instance_index(inputs.manifest, [r for r in latest if not is_pool_record(r)],
                           inputs.domains, inputs.splits)
    cov = coverage.coverage_table(inputs.records, inputs.manifest, inputs.domains, inputs.splits)
    schema_all = schema.headline_table(inputs.records, inputs.traits, inputs.seed)
    # the cells some plan method ran on: the horizon ceiling counts only the problems evaluated
    evaluated = {(r.domain, r.split) for r in plan_records_of(inputs.records)}
    cells: dict[str, set] = defaultdict(set)  # method -> the (domain, split) cells it has records on
    for r in plan_records_of(inputs.records):
        cells[r.method].add((r.domain, r.split))
    return Analysis(
        index=index,
        coverage=cov,
        coverage_sum=coverage.coverage_sum(cov),
        ceiling=[*coverage.horizon_ceiling(inputs.plan_records, {k: v for k, v in index.items() if k in evaluated},
                                           {m: t.horizon for m, t in inputs.traits.items()},
                                           dict.fromkeys(cov["method"]),
                                           files=(coverage.problem_files(inputs.manifest, inputs.problems_root)
                                                  if inputs.problems_root is not None else None)),
                 *coverage.cap_ceiling(inputs.plan_records, {k: v for k, v in index.items() if k in evaluated},
                                       {m: (t.max_objects, t.max_tokens) for m, t in inputs.traits.items()},
                                       dict.fromkeys(cov["method"]), cells)],
        successor_hit1=hitk.held_out_mean(inputs.records, "hit@1"),
        quality=quality.quality_table(inputs.records, inputs.plan_records, index),
        ipc=quality.ipc_table(inputs.records, inputs.plan_records, inputs.manifest, inputs.time_limits),
        divergence=divergence.divergence_table(inputs.records),
        problems=problems.analyse(inputs.records, inputs.plan_records, index,
                                  {m: t.role for m, t in inputs.traits.items()}, (SCHEMA_SPLIT,)),
        hitk=hitk.successor_set_table([r for r in inputs.records if not is_pool_record(r)]),
        pool=pool.analyse(latest, inputs.traits, inputs.acp_dir),
        schema=schema.schema_table(inputs.records, inputs.traits),
        cost=cost.cost_table(inputs.records),
        details=detail.detail_tables(inputs.records, inputs.plan_records, index),
        stops=detail.stop_table(inputs.records),
        by_size=plotting.coverage_by_size(inputs.records, inputs.manifest, inputs.traits),
        methods=info.methods_table(inputs.records),
        n_records=len(latest),
        traits=inputs.traits,
        headline=headline.coverage_tables(inputs.records, index, inputs.traits, inputs.seed),
        budgets=budget.budget_cells(inputs.records, inputs.traits),
        rank_records=[r for r in latest if record_task(r) == "rank_successors"],
        seed=inputs.seed,
        ablations=compare.ablations(inputs.records, inputs.traits, inputs.seed, inputs.time_limits),
        ranking=ranking.ranking_cells(inputs.records),
        schema_headline=schema_all,
        method_lines=info.method_lines(inputs.records, inputs.traits),
        plan_domains=sorted({d for (d, _), probs in index.items() if probs}),
        not_applicable=dropped,
    )


def render_leaderboard(
    a: Analysis,
    run_info: Mapping,
    plots: Sequence[pages.Plot] = (),
    papers: Sequence[PublishedPaper] = PAPERS,
) -> str:
    """The front page ``leaderboard.md`` (pure: same arguments, same string); the detail pages are
    :func:`render_pages`.

    ``run_info``: :func:`planarena.report.sections.info.collect_info`'s dict; ``plots``: the
    :class:`planarena.report.plots.Plot` files to link; ``papers``: unused on the front page (the
    published numbers are on the published page), kept for the callers' signature.
    """
    return pages.render_front(a, run_info, plots)


def render_pages(
    a: Analysis,
    run_info: Mapping,
    plots: Sequence[pages.Plot] = (),
    papers: Sequence[PublishedPaper] = PAPERS,
) -> dict[str, str]:
    """Every page, ``{path relative to reports/: markdown}`` (front page first; see
    :func:`planarena.report.pages.render_pages`)."""
    return pages.render_pages(a, run_info, plots, papers)


def build_metrics(a: Analysis) -> dict:
    """The headline numbers for ``reports/metrics.json``, one per method, all fractions in [0, 1],
    so that ``dvc exp show`` fits a sweep on one screen (the rest stays on the pages):

    * ``coverage.<problem set>.<method>``: the pooled held-out coverage of each headline table
      (:mod:`planarena.report.sections.headline`; the problem set is named by its split when it has
      one, else ``held_out``): solved attempts over problems x seeds;
    * ``hit@5.<method>``: for a method without ``plan`` records, its successor-ranking Hit@5: the
      held-out successor-set protocol where it runs it, else the mean over the candidate-pool
      protocols it runs (per protocol the mean over domains and seeds, as the front page shows).

    Values rounded as :data:`planarena.report.metrics.COVERAGE` declares.
    """
    cov: dict[str, dict[str, float]] = {}
    for table in a.headline:
        name = table.splits[0] if len(table.splits) == 1 else "held_out"
        for m in table.methods:
            iv = table.cells.get((m, headline.HELD_OUT))
            if iv is not None and iv.n:
                cov.setdefault(name, {})[m] = COVERAGE.json_value(iv.value)
    planned = {m for c in cov.values() for m in c}
    hit5: dict[str, float] = {}
    cells = a.ranking[(a.ranking["k"] == 5) & a.ranking["method"].notna()] if not a.ranking.empty else a.ranking
    for m, rows in (cells.groupby("method", sort=True) if not cells.empty else ()):
        if m in planned:
            continue
        by_proto = {r.protocol: float(sum(r.per_seed) / len(r.per_seed)) for r in rows.itertuples() if r.per_seed}
        if not by_proto:
            continue
        value = by_proto.get(ranking.SUCCESSOR_SET, sum(by_proto.values()) / len(by_proto))
        hit5[m] = COVERAGE.json_value(value)
    out: dict = {"coverage": cov}
    if hit5:
        out["hit@5"] = hit5
    return out


def write_report(
    inputs: ReportInputs, run_info: Mapping, reports_dir: str | os.PathLike = "reports"
) -> Analysis:
    """Write ``leaderboard.md``, ``detail/*.md``, ``metrics.json`` and the plots (PNG, data file
    and Vega-Lite template each, :mod:`planarena.report.plots`) under ``reports_dir`` from
    already-loaded inputs and info; returns the analysis. Detail pages of an older layout that
    no longer exist are removed, so the folder holds exactly what this run rendered."""
    reports_dir = Path(reports_dir)
    a = analyse(inputs)
    family = dict(zip(a.methods["Method"], a.methods["Family"], strict=True))
    plots = plotting.write_plots(coverage.held_out_by(a.coverage, "domain"), a.by_size, a.pool.summary if a.pool else None, a.coverage_sum, family,
                                 a.traits, reports_dir / plotting.PLOTS_DIR)
    compare.write_ablation_plots(a.ablations, reports_dir / plotting.PLOTS_DIR)
    rendered = render_pages(a, run_info, plots)
    detail_dir = reports_dir / pages.DETAIL_DIR
    if detail_dir.is_dir():
        for old in sorted(detail_dir.glob("*.md")):
            if f"{pages.DETAIL_DIR}/{old.name}" not in rendered:
                old.unlink()
    for rel, text in rendered.items():
        atomic_write_text(reports_dir / rel, text)
    atomic_write_text(
        reports_dir / METRICS, json.dumps(build_metrics(a), indent=2, sort_keys=True) + "\n"
    )
    return a


def run_stage(params: dict, layout: Layout, reports_dir: Path = Path("reports"),
              environment: Mapping | None = None) -> None:
    """Entry point of the ``report`` DVC stage; also ``planarena report`` (on the committed records,
    :mod:`planarena.report.bundle`, where this checkout has none: ``environment`` is then the
    committed run's machine, and the archive is not rewritten).

    Writes ``reports/records.tar.gz`` (:func:`planarena.report.bundle.write`) beside the pages.
    Reads ``layout.results/*.jsonl``, ``layout.plans/records.jsonl``,
    ``layout.problems/manifest.jsonl`` and ``layout.acp/*/summary.json``. Params read:
    ``profile``, ``suite``, the names under ``suites.<suite>.domains`` and ``evaluation.splits``
    (so that empty domains and splits are reported), ``planners``, the ``methods`` blocks of the rows
    that run (:func:`planarena.methods.runs`; each method's
    :meth:`~planarena.methods.base.Method.report_traits`), and the whole resolved tree for the params
    hash.

    Raises:
        FileNotFoundError: the problem manifest is missing.
        ValueError: a malformed results/plans line (names the file and line).
        KeyError: a ``methods`` block names an unregistered method.
    """
    from planarena.methods import running

    configured = set(params.get("methods") or {})
    params = running(params)   # rows off in this profile are not reported, whatever records they left
    off = configured - set(params["methods"])
    traits = method_traits(params)
    inputs = load_inputs(layout, declared_domains(params), declared_splits(params), traits)
    inputs.records = [r for r in inputs.records if r.method not in off]
    inputs.seed = int(params.get("seed", 0) or 0)
    inputs.time_limits = quality.time_limits(params)
    run_info = info.collect_info(params, traits, Path(layout.root) / "inputs", environment)
    run_info["paper_runs"] = list((params.get("report") or {}).get("paper_runs") or [])
    run_info["description"] = (params.get("report") or {}).get("description")
    run_info["claims"] = claims_section.load_verdicts(Path(reports_dir) / "claims")
    run_info["seeds"] = sorted({r.seed for r in inputs.records if r.seed is not None})
    write_report(inputs, run_info, reports_dir)
    if environment is None:   # the records this page was computed from, for a fresh clone
        bundle.write(layout, params["methods"], Path(reports_dir) / bundle.BUNDLE)
