"""Front-page box "At a glance": what a reader needs in one minute, before any table.

* per problem set and kind (search, lookahead policy, policy, decoder): the row with the highest
  pooled held-out coverage, with its interval, and whether it is **significantly** best of its kind
  (its tier in the headline table holds it alone: it is bold) or which rows it cannot be told apart from;
* the learned rows above their untrained twin (same search, decoder and caps, no training) and
  those that are not, by the headline table's paired test (Holm-adjusted across the table);
* the claims, by verdict.

Every word comes from the headline tables (:mod:`planarena.report.sections.headline`) and the
committed claim verdicts (:mod:`planarena.report.sections.claims`); nothing is computed here.
"""

from __future__ import annotations

from typing import Mapping, Sequence

from planarena import stats
from planarena.methods.base import KINDS, ReportTraits
from planarena.report.sections import claims, headline

#: Row groups that are compared (floors and ceilings are read against them, not ranked).
KINDS_RANKED = KINDS
#: The order of verdicts in the claims line.
VERDICT_ORDER = ("confirmed", "refuted", "inconclusive", "not recomputable", "not run")


def _best_line(table: headline.CoverageTable, kind: str) -> str | None:
    rows = [m for m in table.methods if table.group[m] == kind and (m, headline.HELD_OUT) in table.cells]
    if not rows:
        return None
    best = max(rows, key=lambda m: (table.cells[(m, headline.HELD_OUT)].value, -rows.index(m)))
    iv = table.cells[(best, headline.HELD_OUT)]
    tier = sorted(table.tier.get(headline.HELD_OUT, set()) & set(rows))
    if iv.value == 0:
        verdict = "nothing solved"
    elif tier == [best]:
        verdict = "significantly best of its kind"
    elif len(rows) == 1:
        verdict = "the only row of its kind"
    else:
        others = [m for m in tier if m != best]
        verdict = ("not significantly better than " + ", ".join(f"`{m}`" for m in others)) if others else \
            "best of its kind"
    return f"**{kind}**: `{best}` {iv.value:.2f} [{iv.low:.2f}, {iv.high:.2f}] ({verdict})"


def _twin_line(table: headline.CoverageTable, traits: Mapping[str, ReportTraits]) -> str | None:
    above, at, below = [], [], []
    for m in table.methods:
        twins = [f for f in headline.twins_in(table, traits, m) if (f, headline.HELD_OUT) in table.solved]
        if not twins or (m, headline.HELD_OUT) not in table.solved:
            continue
        got = headline.twin_test(table, m, twins[0])
        if got is None:
            continue
        t, p = got
        (above if t.diff > 0 and p < stats.ALPHA else below if t.diff < 0 and p < stats.ALPHA else at).append(m)
    if not (above or at or below):
        return None
    names = lambda ms: ", ".join(f"`{m}`" for m in ms) or "none"  # noqa: E731
    return (f"Above their untrained twin (paired test over the held-out problems, Holm-adjusted p < "
            f"{stats.ALPHA}): {names(above)}. At their twin: {names(at)}"
            + (f". Below it: {names(below)}" if below else "") + ".")


def claims_line(verdicts: Sequence[Mapping]) -> str | None:
    """``"Claims: confirmed 2 (a, b); refuted 1 (c); ...; superseded by a later claim file, not
    counted: 1 (d by a)"`` from the committed verdicts. Each paper claim counts once, by its latest attempt: a page whose
    ``verdict.json`` names a ``superseded_by`` is listed apart with its successor, never in a verdict's
    count (an old attempt's verdict, kept as history, would otherwise count the same paper claim twice)."""
    if not verdicts:
        return None
    by: dict[str, list[str]] = {}
    old = [v for v in verdicts if v.get("superseded_by")]
    for v in (v for v in verdicts if not v.get("superseded_by")):
        first = claims.first_reported(v)
        by.setdefault(str(v.get("verdict")), []).append(
            f"`{v.get('claim')}`" + (f" (first reported {first})" if first else ""))
    order = [k for k in VERDICT_ORDER if k in by] + sorted(k for k in by if k not in VERDICT_ORDER)
    parts = [f"**{k}** {len(by[k])} (" + ", ".join(by[k]) + ")" for k in order]
    if old:
        parts.append(f"superseded by a later claim file, not counted: {len(old)} ("
                     + ", ".join(f"`{v.get('claim')}` by `{v['superseded_by']}`" for v in old) + ")")
    return "Claims ([table](#claims)): " + "; ".join(parts) + "."


def lines(tables: Sequence[headline.CoverageTable], traits: Mapping[str, ReportTraits],
          verdicts: Sequence[Mapping] = ()) -> list[str]:
    """The box's bullet lines (``[]`` when there is nothing to say)."""
    out = []
    for i, table in enumerate(tables):
        where = f" (problem set {i + 1}: {', '.join(table.splits)})" if len(tables) > 1 else ""
        best = [b for b in (_best_line(table, k) for k in KINDS_RANKED) if b]
        if best:
            out.append(f"- Best on held-out problems{where}: " + "; ".join(best) + ".")
        twin = _twin_line(table, traits)
        if twin:
            out.append(f"- {twin}")
    said = claims_line(verdicts)
    if said:
        out.append(f"- {said}")
    return out


__all__ = ["KINDS_RANKED", "claims_line", "lines"]
