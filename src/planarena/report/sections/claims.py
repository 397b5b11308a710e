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
    "run, `claims/`); the verdict is recomputed from the records committed beside its page, with the "
    "problem as the unit of every test (`planarena claims report`). One line per claim: the verdict (per "
    "domain where the claim spans several; *not run* with what it needs), the numbers that decided it with their problem counts, and the "
    "power check (P(confirmed) at the paper's rates and at the floors'). *Post-hoc*: a report committed "
    "before the claim file already held a cell of its confirm condition. The atom-by-atom detail is on "
    "each claim's page."
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


def _atom_short(a: Mapping) -> str:
    """``"label: 0.60 vs 0.20, p=0.003, n=20"`` of one atom of ``verdict.json``."""
    cov = a.get("coverage") or []  # A, then B
    values = " vs ".join(f"{c['value']:.2f}" for c in cov if isinstance(c.get("value"), (int, float)))
    n = max((c.get("problems") or 0 for c in cov), default=0)
    test = a.get("test") or {}
    p = a.get("holm_p", test.get("p"))
    extra = f", p={p:.3g}" if isinstance(p, (int, float)) else ""
    gap = a.get("gap")
    if isinstance(gap, Mapping) and a["atom"].split("(")[0] in MEASURE_ATOMS:  # a measurement claim: A / B
        extra += f", ratio {gap['value']:.3g} [{gap['low']:.3g}, {gap['high']:.3g}]"
    elif isinstance(gap, Mapping):
        extra += f", gap {gap['value']:+.2f} [{gap['low']:+.2f}, {gap['high']:+.2f}]"
    if a.get("note"):
        extra += f", {a['note']}"
    unit = test.get("n") or n
    return f"{a['atom']}: {values}{extra}" + (f", n={unit}" if unit else "")


def decisive(v: Mapping, most: int = 2) -> str:
    """The atoms that decided the verdict: the failing gate atoms (gate failed), the refute atoms
    that hold (refuted), the confirm atoms (confirmed), or the confirm atoms that do not hold."""
    atoms = v.get("atoms") or {}
    blocks = v.get("blocks") or {}
    if not atoms:
        return ""
    if not blocks.get("gate", True):
        pick = [a for a in atoms.get("gate", []) if not a["holds"]]
    elif v.get("verdict") == "refuted":
        pick = [a for a in atoms.get("refute", []) if a["holds"]] or \
               [a for a in atoms.get("confirm", []) if not a["holds"]]
    elif v.get("verdict") == "confirmed":
        pick = list(atoms.get("confirm", []))
    else:
        pick = [a for a in atoms.get("confirm", []) if not a["holds"]] or list(atoms.get("confirm", []))
    more = f"; and {len(pick) - most} more" if len(pick) > most else ""
    return "; ".join(_atom_short(a) for a in pick[:most]) + more


def verdict_line(v: Mapping) -> str:
    """The verdict cell: the verdict, the failed gate, the per-domain verdicts, and the marks
    (post-hoc, forced past a failed power check, not recomputable), or why a registered claim has
    not run (what its file says it needs, else its expected cost)."""
    if v.get("verdict") == "not run":
        return ("**not run**: " + md_text(v["needs"], 300)) if v.get("needs") else \
            f"**not run** yet (~{v.get('expected_cpu_minutes', '?')} CPU min on 2 cores)"
    if v.get("verdict") == "not recomputable":
        prev = v.get("previous") or {}
        was = f" (its page said {prev['verdict']}, commit `{prev.get('commit')}`)" if prev.get("verdict") else ""
        return f"**not recomputable: records not kept**{was}" + ("; *post-hoc*" if v.get("posthoc") else "")
    out = f"**{v['verdict']}**" + ("" if (v.get("blocks") or {}).get("gate", True) else " (gate failed)")
    if v.get("domains"):
        out += " (" + ", ".join(f"{d}: {x}" for d, x in v["domains"].items()) + ")"
    if v.get("posthoc"):
        out += "; *post-hoc*"
    if v.get("forced"):
        out += "; *run past a failed power check*"
    return out


def _power(v: Mapping) -> str:
    pw = v.get("power") or {}
    if not pw.get("simulated", False):
        return "not simulated" if pw else "–"
    o = pw.get("outcome") or {}
    return (f"{(o.get('paper') or {}).get('confirmed', 0):.2f} / {(o.get('floor') or {}).get('confirmed', 0):.2f}"
            + ("" if pw.get("passes") else " (fails)"))


def table(verdicts: Sequence[Mapping]) -> pd.DataFrame:
    """The Claims table, one short line per claim: claim (linked to its page), verdict, the deciding
    numbers, the power check (P(confirmed) at the paper's / the floors' rates)."""
    rows = []
    for v in verdicts:
        rows.append({
            "claim": f"[{v['claim']}](claims/{v['claim']}/claim.md) ({v.get('paper')})",
            "verdict": verdict_line(v),
            "decided by": md_text(decisive(v), 400),
            "power: paper / floor": _power(v),
        })
    return pd.DataFrame(rows, columns=["claim", "verdict", "decided by", "power: paper / floor"])


__all__ = ["DESCRIPTION", "decisive", "load_verdicts", "table", "verdict_line"]
