"""Section "Per-domain detail": why attempts stopped, per method (a budget stop apart from a dead
end or an exhausted search), then per domain, (planning stage, plan methods) x split with
``solved/attempted, TO timeouts`` counts over all seeds."""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Iterable, Mapping

import pandas as pd

from planarena.core.records import STOPS, ResultRecord
from planarena.report.markdown import DASH, NO_INSTANCES, md_table
from planarena.report.records import method_order, plan_records_of


def _detail_cell(solved: int, attempted: int, timeouts: int) -> str:
    return f"{solved}/{attempted}, TO {timeouts}"


def detail_tables(
    records: Iterable[ResultRecord],
    plan_records: Iterable[Mapping],
    index: Mapping[tuple[str, str], frozenset[str]],
) -> dict[str, pd.DataFrame]:
    """Per domain, a table (instances, plan stage, plan methods) x split: ``solved/attempted, TO
    timeouts``; a row per method (family order), a column per split.

    ``attempted`` counts attempts (records, over all seeds); ``solved`` those solved and
    validated; ``TO`` those that timed out. "–": no records; "no instances": empty split. The
    first row counts the split's instances, the second is the reference planning stage.
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
        splits = [(s, probs) for (d, s), probs in index.items() if d == domain]
        rows = [{"source": "instances", **{s: str(len(probs)) for s, probs in splits}}]
        for col, source in [("plan stage", stage)] + [(m, None) for m in methods]:
            row = {"source": col}
            for split, problems in splits:
                c = stage.get((domain, split)) if source is not None else counts.get((col, domain, split))
                if not problems:
                    row[split] = NO_INSTANCES
                elif not c:
                    row[split] = DASH
                else:
                    row[split] = _detail_cell(c["solved"], c["attempted"], c["timeout"])
            rows.append(row)
        out[domain] = pd.DataFrame(rows, columns=["source", *(s for s, _ in splits)])
    return out


def stop_table(records: Iterable[ResultRecord]) -> pd.DataFrame:
    """Per plan method (rows, family order), its attempts over all domains, splits and seeds by how
    they ended: ``solved`` (and validated), then each stop of :data:`planarena.core.records.STOPS`
    that occurs (:attr:`ResultRecord.stop`): a budget stop (a cap or a time limit) is counted apart
    from a dead end or an exhausted search. Columns: ``method``, ``attempts``, ``solved``, the stops
    (ints). Empty without plan records."""
    latest = [r for r in plan_records_of(records) if r.outcome != "not_applicable"]
    counts: dict[str, Counter] = defaultdict(Counter)
    for r in latest:
        counts[r.method]["attempts"] += 1
        counts[r.method]["solved" if r.counts_as_solved else r.stop] += 1
    used = [s for s in STOPS if any(c[s] for c in counts.values())]
    rows = [{"method": m, "attempts": counts[m]["attempts"], "solved": counts[m]["solved"],
             **{s: counts[m][s] for s in used}} for m in method_order(latest)]
    return pd.DataFrame(rows, columns=["method", "attempts", "solved", *used])


def render(details: Mapping[str, pd.DataFrame], stops: pd.DataFrame | None = None) -> list[str]:
    """Markdown lines of the section: :func:`stop_table` first, then the tables of :func:`detail_tables`."""
    out = ["## Per-domain detail", ""]
    if stops is not None and not stops.empty:
        out += ["### Why attempts stopped", "",
                "Attempts over all domains, splits and seeds. *budget*: stopped by a cap or limit (CPU time, "
                "memory, steps, choices, horizon, tokens, expansions), so a larger budget might have solved "
                "it; *dead end*: no applicable or unvisited successor left; *exhausted*: a complete search "
                "ran out of states; *cycle*: a deterministic policy returned to a state on its path; *early "
                "stop*: a decoder ended before the goal; *invalid action*: a malformed or inapplicable "
                "action; *rejected plan*: the validator rejected the plan; *error*: the run failed.", "",
                md_table(stops), ""]
    out.append(
        "Cells: solved and validated / attempted (attempts over all seeds), TO = timeouts. "
        f'"plan stage" is the reference planning stage. "{DASH}": no records.'
    )
    for domain, table in details.items():
        out += ["", f"### {domain}", "", md_table(table)]
    return out
