"""Front-page section "Claims": one row per committed claim verdict (``reports/claims/<id>/
verdict.json``, written by ``planarena claims run``): the claim, what the paper says, what was
measured, the verdict and the cost. The verdicts come from their own runs; this section only reads
them (the report stage declares ``reports/claims`` as a dependency)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Mapping, Sequence

import pandas as pd

from planarena.claims.spec import MEASURE_ATOMS
from planarena.report.markdown import md_text

DESCRIPTION = (
    "Each paper's claims as pre-registered experiments (gate, confirm and refute written before the "
    "run, `claims/`); the verdict is computed from the claim run's records with paired tests "
    "(`planarena claims run ID`). *Measured*: the confirm condition's comparisons, coverage (or Hit@k) "
    "of A vs B on the same problems (queries, domains), Holm-adjusted p or the interval of the gap A - B; "
    "for a measurement claim the geometric means of the measured value and the ratio A / B. "
    "Cost: measured wall time on 2 cores (expected)."
)


def load_verdicts(folder: str | Path) -> list[dict]:
    """Every ``<folder>/<id>/verdict.json``, sorted by claim id (an unreadable file is skipped: the
    claim's own page says what is wrong)."""
    out = []
    for f in sorted(Path(folder).glob("*/verdict.json")):
        try:
            out.append(json.loads(f.read_text()))
        except (OSError, ValueError):
            continue
    return out


def _published(p: Mapping) -> str:
    parts = []
    for k, v in p.items():
        parts.append(f"{k}: " + (", ".join(f"{m} {x}" for m, x in v.items()) if isinstance(v, Mapping) else str(v)))
    return "; ".join(parts)


def _measured(v: Mapping) -> str:
    parts = []
    for a in (v.get("atoms") or {}).get("confirm", []):
        cov = a.get("coverage") or []  # A, then B
        values = " vs ".join(f"{c['value']:.2f}" for c in cov)
        p, gap = a.get("holm_p"), a.get("gap")
        extra = f", p={p:.3g}" if isinstance(p, (int, float)) else ""
        if isinstance(gap, Mapping) and a["atom"].split("(")[0] in MEASURE_ATOMS:  # a measurement claim: A / B
            extra += f", ratio {gap['value']:.3g} [{gap['low']:.3g}, {gap['high']:.3g}]"
        elif isinstance(gap, Mapping):
            extra += f", gap {gap['value']:+.3f} [{gap['low']:+.3f}, {gap['high']:+.3f}]"
        parts.append(f"{a['atom']}: {values}{extra}")
    return "; ".join(parts)


def table(verdicts: Sequence[Mapping]) -> pd.DataFrame:
    """The Claims table: claim (linked to its page), paper says, measured, verdict, cost."""
    rows = []
    for v in verdicts:
        cost = v.get("cost") or {}
        rows.append({
            "claim": f"[{v['claim']}](claims/{v['claim']}/claim.md) ({v.get('paper')}, {v.get('where')})",
            "paper says": md_text(_published(v.get("published") or {}), 400),
            "measured": md_text(_measured(v), 600),
            "verdict": f"**{v['verdict']}**" + ("" if v["blocks"].get("gate") else " (gate failed)"),
            "cost": f"{cost.get('wall_s', 0) / 60:.0f} min ({v.get('expected_cpu_minutes', '?')} expected)",
        })
    return pd.DataFrame(rows, columns=["claim", "paper says", "measured", "verdict", "cost"])


__all__ = ["DESCRIPTION", "load_verdicts", "table"]
