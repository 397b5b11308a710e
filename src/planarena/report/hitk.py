"""Former home of the candidate-pool Hit@k tables, kept for its importers (tests of the pool
protocol); the code lives in :mod:`planarena.report.sections.pool` and
:mod:`planarena.report.sections.pool_reading`.

These functions take an optional ``traits`` (method -> :class:`ReportTraits`, see
:func:`planarena.report.traits.method_traits`). Without it, the methods are classified by the
``params.yaml`` of the working directory (none: every method is a plain model); the ``report``
stage always passes them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Mapping, Sequence

import pandas as pd

from planarena.config import load_params
from planarena.core.records import ResultRecord
from planarena.methods.base import ReportTraits
from planarena.report.records import is_pool_record
from planarena.report.sections import pool
from planarena.report.sections.pool import (
    cross_domain_matrix,
    dataset_counts,
    pool_table,
)
from planarena.report.sections.pool_reading import reading_notes
from planarena.report.traits import method_traits

__all__ = ["cross_domain_matrix", "dataset_counts", "gap_notes", "is_pool_record", "pool_summary",
           "pool_table", "render_pool_md"]  # fmt: skip


def _traits(traits: Mapping[str, ReportTraits] | None) -> Mapping[str, ReportTraits]:
    if traits is not None:
        return traits
    path = Path("params.yaml")
    return method_traits(load_params(path)) if path.exists() else {}


def pool_summary(
    records: Sequence[ResultRecord], traits: Mapping[str, ReportTraits] | None = None
) -> pd.DataFrame | None:
    """:func:`planarena.report.sections.pool.pool_summary` (see the module docstring for ``traits``)."""
    return pool.pool_summary(records, _traits(traits))


def gap_notes(
    records: Sequence[ResultRecord], traits: Mapping[str, ReportTraits] | None = None
) -> list[str]:
    """The bullets reading the run against each pool paper
    (:func:`planarena.report.sections.pool_reading.reading_notes`)."""
    traits = _traits(traits)
    return [n for p in pool.pool_papers() for n in reading_notes(records, traits, p)]


def render_pool_md(
    records: Sequence[ResultRecord],
    acp_dir: Path | None = None,
    traits: Mapping[str, ReportTraits] | None = None,
) -> list[str]:
    """:func:`planarena.report.sections.pool.render_pool_md` (see the module docstring)."""
    return pool.render_pool_md(records, acp_dir, _traits(traits))
