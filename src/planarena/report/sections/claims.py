"""Front-page section "Claims": one row per committed claim verdict (``reports/claims/<id>/
verdict.json``, written by ``planarena claims run``): the claim, what the paper says, what was
measured, the verdict and the cost. The verdicts come from their own runs; this section only reads
them (the report stage declares ``reports/claims`` as a dependency)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Mapping, Sequence

import pandas as pd

from planarena.claims.spec import DECIDED, MEASURE_ATOMS
from planarena.report.markdown import md_text

DESCRIPTION = (
    "Each paper's claims as pre-registered experiments (gate, confirm and refute written before the "
    "run, `claims/`); the verdict is recomputed from the records committed beside its page, with the "
    "problem as the unit of every test (`planarena claims report`). One line per claim: the paper's section, "
    "the paper's numbers beside ours (with our 95 % interval; else the numbers that decided it), the verdict "
    "(per domain where the claim spans several) with its reason in one line (*not run*: what it needs), the "
    "power check (P(confirmed) at the paper's rates and at the floors') and the cost (expected CPU minutes on "
    "2 cores; the run's wall time). *Post-hoc*: a report committed before the claim file already held a cell "
    "of its confirm condition. *Superseded*: a later claim file re-decides the paper claim under changed "
    "conditions; the old page and its verdict stay, and only the latest attempt at each paper claim is counted "
    "above. The atom-by-atom detail is on each claim's page."
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


def first_reported(v: Mapping) -> str | None:
    """The claim's first committed verdict (``verdict.json``'s ``first_report``,
    :func:`planarena.claims.provenance.first_report`) when it differs from the verdict now, else None."""
    first = (v.get("first_report") or {}).get("verdict")
    return first if first and first != v.get("verdict") and v.get("verdict") in DECIDED else None


def verdict_line(v: Mapping) -> str:
    """The verdict cell: the verdict, the failed gate, the per-domain verdicts, and the marks
    (post-hoc, forced past a failed power check, not recomputable), or why a registered claim has
    not run (what its file says it needs, else its expected cost)."""
    if v.get("verdict") == "not run":
        if v.get("superseded_by"):
            return f"**not run**: superseded before it ran by `{v['superseded_by']}`"
        return ("**not run**: " + md_text(v["needs"], 200)) if v.get("needs") else "**not run** yet"
    if v.get("verdict") == "not recomputable":
        prev = v.get("previous") or {}
        was = f" (its page said {prev['verdict']}, commit `{prev.get('commit')}`)" if prev.get("verdict") else ""
        return f"**not recomputable: records not kept**{was}" + ("; *post-hoc*" if v.get("posthoc") else "") + _later(v)
    out = f"**{v['verdict']}**" + ("" if (v.get("blocks") or {}).get("gate", True) else " (gate failed)")
    if v.get("domains"):
        out += " (" + ", ".join(f"{d}: {x}" for d, x in v["domains"].items()) + ")"
    if v.get("posthoc"):
        out += "; *post-hoc*"
    first = first_reported(v)
    if first:
        out += f"; *first reported {first} (commit `{v['first_report'].get('commit')}`): changed after its data were seen*"
    if v.get("forced"):
        out += "; *run past a failed power check*"
    return out + _later(v)


def _later(v: Mapping) -> str:
    """``"; *superseded by `b`*"`` for a page whose paper claim a later claim file re-decides."""
    return f"; *superseded by `{v['superseded_by']}`*" if v.get("superseded_by") else ""


def _power(v: Mapping) -> str:
    pw = v.get("power") or {}
    if not pw.get("simulated", False):
        return "not simulated" if pw else "–"
    o = pw.get("outcome") or {}
    return (f"{(o.get('paper') or {}).get('confirmed', 0):.2f} / {(o.get('floor') or {}).get('confirmed', 0):.2f}"
            + ("" if pw.get("passes") else " (fails)"))


def _reason(v: Mapping) -> str:
    """One line: why the verdict is what it is (the first failing gate atom, the refute atom that
    holds, the confirm atom that does not, or all confirm atoms holding)."""
    atoms, blocks = v.get("atoms") or {}, v.get("blocks") or {}
    verdict = v.get("verdict")
    if verdict == "not run":
        return ""
    if verdict == "not recomputable":
        return ""
    if not blocks.get("gate", True):
        bad = [a["atom"] for a in atoms.get("gate", []) if not a["holds"]]
        return "gate failed: " + (bad[0] if bad else "?") + (f" (+{len(bad) - 1})" if len(bad) > 1 else "")
    if verdict == "refuted":
        hit = [a["atom"] for a in atoms.get("refute", []) if a["holds"]]
        return "refute holds: " + (hit[0] if hit else "?")
    confirm = atoms.get("confirm", [])
    if verdict == "confirmed":
        return f"all {len(confirm)} confirm atoms hold" if len(confirm) > 1 else "the confirm atom holds"
    missing = [a["atom"] for a in confirm if not a["holds"]]
    return ("does not hold: " + missing[0] + (f" (+{len(missing) - 1})" if len(missing) > 1 else "")) if missing else ""


def _published_vs_measured(v: Mapping, most: int = 2) -> str:
    """``"wl_xgb_delta blocksworld extrapolation: paper 0.45, here 0.39 [0.29, 0.49]"`` for the first
    published values the page compares (else the deciding atoms' numbers)."""
    checks = v.get("published_check") or []
    if not checks:
        return decisive(v)
    parts = [f"`{c['method']}` {c['domain']} {c['split']}: paper {c['published']:.2f}, here {c['measured']:.2f} "
             f"[{c['low']:.2f}, {c['high']:.2f}]" for c in checks[:most]]
    return "; ".join(parts) + (f"; and {len(checks) - most} more" if len(checks) > most else "")


def _cost(v: Mapping) -> str:
    expected, gpu = v.get("expected_cpu_minutes"), v.get("expected_gpu_hours")
    ran = (v.get("cost") or {}).get("wall_s")
    out = f"~{expected} CPU min" if expected else f"~{gpu} GPU h" if gpu else "–"
    return out + (f"; ran {ran / 60:.0f} min" if isinstance(ran, (int, float)) and ran else "")


def table(verdicts: Sequence[Mapping]) -> pd.DataFrame:
    """The Claims table, one short line per claim: claim (linked to its page, with its paper), the
    paper section, published vs measured, the verdict with a one-line reason, the power check
    (P(confirmed) at the paper's / the floors' rates) and the cost."""
    rows = []
    for v in verdicts:
        reason = _reason(v)
        rows.append({
            "claim": f"[{v['claim']}](claims/{v['claim']}/claim.md) ({v.get('paper')})",
            "paper section": md_text(v.get("where") or "", 90),
            "published vs measured": md_text(_published_vs_measured(v), 300),
            "verdict": verdict_line(v) + (f": {md_text(reason, 160)}" if reason else "")
            + (f"; *read after the verdict*: {md_text(v['reading'], 200)}" if v.get("reading") else ""),
            "power: paper / floor": _power(v),
            "cost": _cost(v),
        })
    return pd.DataFrame(rows, columns=["claim", "paper section", "published vs measured", "verdict",
                                       "power: paper / floor", "cost"])


__all__ = ["DESCRIPTION", "decisive", "first_reported", "load_verdicts", "table", "verdict_line"]
