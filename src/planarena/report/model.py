"""The report's model: :class:`Analysis`, every table the pages and ``metrics.json`` are rendered
from, computed by :func:`planarena.report.leaderboard.analyse`.

Defined below both :mod:`planarena.report.leaderboard` (which fills it) and
:mod:`planarena.report.pages` (which lays it out), so that neither imports the other's module
for it (tests/test_layers.py: no import cycle).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Mapping

import pandas as pd

from planarena.methods.base import ReportTraits
from planarena.report import compare
from planarena.report.sections import headline, pool, problems, schema


@dataclass
class Analysis:
    """Every table the leaderboard and metrics are rendered from (see :func:`analyse`)."""

    index: dict[tuple[str, str], frozenset[str]]
    coverage: pd.DataFrame
    coverage_sum: pd.DataFrame
    ceiling: list[str]
    successor_hit1: dict[str, float]
    quality: pd.DataFrame
    divergence: pd.DataFrame | None
    problems: problems.Problems
    hitk: pd.DataFrame | None
    pool: pool.Pool | None
    schema: schema.Schema | None
    cost: pd.DataFrame
    details: dict[str, pd.DataFrame]
    by_size: pd.DataFrame
    methods: pd.DataFrame
    n_records: int
    traits: Mapping[str, ReportTraits]
    ranking: pd.DataFrame
    schema_headline: pd.DataFrame | None
    method_lines: list[str]
    plan_domains: list[str]
    #: the front page's coverage tables, one per problem set (:mod:`planarena.report.sections.headline`)
    headline: list[headline.CoverageTable] = dataclasses.field(default_factory=list)
    #: the budget column: method -> cell (:mod:`planarena.report.sections.budget`)
    budgets: dict[str, str] = dataclasses.field(default_factory=dict)
    #: the records the ranking table's intervals and floor tests read (``rank_successors`` only)
    rank_records: list = dataclasses.field(default_factory=list)
    #: seeds the report's resampling (params ``seed``)
    seed: int = 0
    #: the declared ablation pairs compared problem by problem (:mod:`planarena.report.compare`)
    ablations: list[compare.Ablation] = dataclasses.field(default_factory=list)
    #: IPC 2023 Learning Track quality / agile scores per domain (:func:`planarena.report.sections.quality.ipc_table`)
    ipc: pd.DataFrame | None = None
    #: per plan method, its attempts by how they ended (:func:`planarena.report.sections.detail.stop_table`)
    stops: pd.DataFrame | None = None
    #: ``(method, domain, reason)`` of every suite domain a method does not run on (task ``not_applicable``)
    not_applicable: list[tuple[str, str, str]] = dataclasses.field(default_factory=list)


__all__ = ["Analysis"]
