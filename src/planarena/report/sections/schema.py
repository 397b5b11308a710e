"""Section "Schema learning": ``learn_schema`` records (DESIGN.md "Leaderboards": precision,
recall, N_s/N_c/N_sc), each value a declared metric of :mod:`planarena.report.metrics`."""

from __future__ import annotations

from typing import Iterable

import pandas as pd

from planarena.core.records import ResultRecord
from planarena.report.sections.hitk import render_task, task_metric_table

#: ``extra`` keys of ``learn_schema`` records shown in the section, in column order.
SCHEMA_KEYS: tuple[str, ...] = ("precision", "recall", "N_s", "N_c", "N_sc")


def schema_table(records: Iterable[ResultRecord]) -> pd.DataFrame | None:
    """Per domain and method, mean ± std over seeds of :data:`SCHEMA_KEYS`; None without
    ``learn_schema`` records (see :func:`planarena.report.sections.hitk.task_metric_table`)."""
    return task_metric_table(records, "learn_schema", SCHEMA_KEYS, ("domain",))


def render(table: pd.DataFrame | None) -> list[str]:
    """Markdown lines of the section."""
    return render_task(
        "Schema learning", table, "learn_schema", "records whose `extra` has `task: learn_schema`"
    )
