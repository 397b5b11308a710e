"""Training divergences per method and domain (the symmetry-aware-transformers paper's Table E.9:
"Number of divergences for all architectures and domains").

A method that watches its training for divergence (a NaN loss, or a spike that stays on a high
plateau) puts ``diverged_at`` into the ``extra`` of every record (``None`` when its model did not
diverge); a run that diverged before any checkpoint has outcome ``diverged``. This section counts,
per (model, domain), the seeds whose model diverged, from the records only: the row is the
record's ``extra["model"]`` when the method names the trained model it decodes with (blocks that
share one trained model, e.g. one per decoding strategy, are one row, as in Table E.9), else its
method. Methods that do not report the field have no row.
"""

from __future__ import annotations

from typing import Iterable

import pandas as pd

from planarena.core.records import ResultRecord
from planarena.report.markdown import md_table


def divergence_table(records: Iterable[ResultRecord]) -> pd.DataFrame | None:
    """``model`` (``extra["model"]`` or the method) x domain cells ``"k of n seeds"`` (k diverged,
    n seeds with records), or None when no record carries ``diverged_at``."""
    seen: dict[tuple[str, str], set[int]] = {}
    diverged: dict[tuple[str, str], set[int]] = {}
    tracked: set[str] = set()
    for r in records:
        extra = r.extra or {}
        model = extra.get("model") or r.method
        if "diverged_at" in extra or r.outcome == "diverged":
            tracked.add(model)
        key = (model, r.domain)
        seen.setdefault(key, set()).add(r.seed)
        if r.outcome == "diverged" or extra.get("diverged_at") is not None:
            diverged.setdefault(key, set()).add(r.seed)
    if not tracked:
        return None
    domains = sorted({d for m, d in seen if m in tracked})
    rows = []
    for m in sorted(tracked):
        row = {"model": m}
        for d in domains:
            n = len(seen.get((m, d), ()))
            row[d] = f"{len(diverged.get((m, d), ()))} of {n}" if n else "–"
        rows.append(row)
    return pd.DataFrame(rows)


def render(table: pd.DataFrame | None) -> list[str]:
    """The section's markdown lines (empty without a table)."""
    if table is None:
        return []
    return ["## Training divergences", "",
            "Seeds whose training diverged (a NaN loss, or a loss spike that stayed on a plateau), per "
            "trained model and domain (blocks that decode one model with different strategies are one row), from the records (`diverged_at`, or outcome `diverged`): the count of "
            "the symmetry-aware-transformers paper's Table E.9. A diverged run's best checkpoint before "
            "the divergence is still evaluated when it has one, as the paper's are.", "",
            md_table(table), ""]


__all__ = ["divergence_table", "render"]
