"""Section "Per-domain detail": per domain, split x (planning stage, plan methods) with
``solved/attempted, TO timeouts`` counts over all seeds."""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Iterable, Mapping

import pandas as pd

from planarena.core.records import ResultRecord
from planarena.report.markdown import DASH, NO_INSTANCES, md_table
from planarena.report.records import method_order, plan_records_of


def _detail_cell(solved: int, attempted: int, timeouts: int) -> str:
    return f"{solved}/{attempted}, TO {timeouts}"


def detail_tables(
    records: Iterable[ResultRecord],
    plan_records: Iterable[Mapping],
    index: Mapping[tuple[str, str], frozenset[str]],
) -> dict[str, pd.DataFrame]:
    """Per domain, a table split x (plan stage, plan methods): ``solved/attempted, TO timeouts``.

    ``attempted`` counts attempts (records, over all seeds); ``solved`` those solved and
    validated; ``TO`` those that timed out. "–": no records; "no instances": empty split.
    Columns: Split, instances, plan stage, one per plan method (family order).
    """
    latest = plan_records_of(records)
    methods = method_order(latest)
    counts: dict[tuple, Counter] = defaultdict(Counter)
    for r in latest:
        c = counts[(r.method, r.domain, r.split)]
        c["attempted"] += 1
        c["solved"] += int(r.counts_as_solved)
        c["timeout"] += int(r.outcome == "timeout")
    stage: dict[tuple, Counter] = defaultdict(Counter)
    for p in plan_records:
        c = stage[(p.get("domain"), p.get("split"))]
        c["attempted"] += 1
        c["solved"] += int(p.get("outcome") == "solved" and bool(p.get("validated")))
        c["timeout"] += int(p.get("outcome") == "timeout")
    out: dict[str, pd.DataFrame] = {}
    for domain in sorted({d for d, _ in index}):
        rows = []
        for (d, split), problems in index.items():
            if d != domain:
                continue
            row = {"Split": split, "instances": str(len(problems))}
            for col, c in [("plan stage", stage.get((d, split)))] + [
                (m, counts.get((m, d, split))) for m in methods
            ]:
                if not problems:
                    row[col] = NO_INSTANCES
                elif not c:
                    row[col] = DASH
                else:
                    row[col] = _detail_cell(c["solved"], c["attempted"], c["timeout"])
            rows.append(row)
        out[domain] = pd.DataFrame(rows, columns=["Split", "instances", "plan stage", *methods])
    return out


def render(details: Mapping[str, pd.DataFrame]) -> list[str]:
    """Markdown lines of the section from :func:`detail_tables`."""
    out = ["## Per-domain detail", ""]
    out.append(
        "Cells: solved and validated / attempted (attempts over all seeds), TO = timeouts. "
        f'"plan stage" is the reference planning stage. "{DASH}": no records.'
    )
    for domain, table in details.items():
        out += ["", f"### {domain}", "", md_table(table)]
    return out
