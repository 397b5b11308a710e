"""Readings of a run's candidate-pool numbers against a paper's findings.

A paper's data file names its reading (``pool_summary.reading`` in
``report/published/<paper>.yaml``); :data:`READINGS` maps the name to the function that writes
the markdown bullets. Every number a bullet states about this run is computed from the records;
the paper's numbers come from the paper's :class:`ReferenceColumn` values. Which of the paper's
family's methods is a floor comes from :attr:`planarena.methods.base.ReportTraits.role`.
"""

from __future__ import annotations

from typing import Callable, Mapping, Sequence

import numpy as np

from planarena.core.records import ResultRecord
from planarena.methods.base import ReportTraits
from planarena.protocols.pool import PROTOCOLS
from planarena.report.metrics import seed_means
from planarena.report.published.loader import PublishedPaper
from planarena.report.records import is_pool_record
from planarena.report.traits import role, variant


def protocol_hit5(records: Sequence[ResultRecord], keep: Callable[[ResultRecord], bool]) -> dict[str, float]:
    """Protocol -> Hit@5 (percent; mean over domains per seed, then over seeds) of the usable pool
    records (not ``error``) for which ``keep(record)`` holds; protocols without values are absent."""
    out = {}
    recs = [r for r in records if is_pool_record(r) and r.outcome != "error" and keep(r)]
    for proto in PROTOCOLS:
        sub = [r for r in recs if (r.extra or {})["protocol"] == proto]
        dom = seed_means(sub, lambda r: r.domain, "hit@5")
        seeds = sorted({s for d in dom.values() for s in d})
        if seeds:
            out[proto] = 100 * float(np.mean([np.mean([d[s] for d in dom.values() if s in d]) for s in seeds]))
    return out


def generalisation_hierarchy(
    records: Sequence[ResultRecord], traits: Mapping[str, ReportTraits], paper: PublishedPaper
) -> list[str]:
    """EmbedPlan's generalisation hierarchy (its Table 4 and Table 12) read against this run: the
    trained methods of ``paper.family`` (Interpolation above Extrapolation; transfer below it;
    Multi-Domain vs Extrapolation) and its floor against chance and the paper's untrained row,
    each with the known reason for a gap. Uses the paper's ``llama_table4`` and ``mpnet``
    reference columns. Empty without trained records of the family.

    Raises:
        KeyError: the paper lacks one of those reference columns.
    """
    own = lambda r: r.family == paper.family
    trained = protocol_hit5(records, lambda r: own(r) and role(traits, r.method) != "floor")
    # the paper's floor (its untrained network): a floor row with no variant; other floors (the
    # identity predictor) are not the paper's and are read through the lift column instead
    floor = protocol_hit5(records, lambda r: own(r) and role(traits, r.method) == "floor"
                          and not variant(traits, r.method))
    if not trained:
        return []
    llama, mpnet = paper.reference("llama_table4"), paper.reference("mpnet")
    notes = []
    if "interpolation" in trained and "extrapolation" in trained:
        i, e = trained["interpolation"], trained["extrapolation"]
        text = (f"Interpolation {i:.1f} % vs Extrapolation {e:.1f} % (trained {paper.name} methods, mean): "
                f"{'above, as in the paper' if i > e else 'NOT above, unlike the paper'}.")
        if i < mpnet.values["interpolation"]:
            text += (f" Interpolation is below the paper's {llama.values['interpolation']} % (Llama) / "
                     f"{mpnet.values['interpolation']} % (MPNet): this profile stores few transitions per domain "
                     "(the optimal plans plus `acp.space_transitions` sampled state-space edges per problem; "
                     "the paper every edge) and may train for fewer epochs than Table 6.")
        notes.append(text)
    transfer = [trained[p] for p in ("cross_domain", "leave_one_out") if p in trained]
    if transfer and "extrapolation" in trained:
        notes.append(f"Cross-Domain / Leave-One-Out {' / '.join(f'{t:.1f}' for t in transfer)} % vs Extrapolation "
                     f"{trained['extrapolation']:.1f} %: transfer across domains "
                     f"{'fails, as in the paper' if max(transfer) < trained['extrapolation'] else 'does NOT fall below extrapolation, unlike the paper'}.")
    if "multi_domain" in trained and "extrapolation" in trained:
        m, e = trained["multi_domain"], trained["extrapolation"]
        if m > e:
            notes.append(f"Multi-Domain {m:.1f} % is above Extrapolation {e:.1f} %, the opposite of the paper's "
                         "Table 12: with a few hundred training transitions per domain, pooling the domains' data "
                         "helps more than sharing capacity costs.")
    if floor:
        u = float(np.mean(list(floor.values())))
        notes.append(f"Untrained floor {u:.1f} % Hit@5 (mean over protocols) vs chance 5/128 = 3.9 % "
                     f"(paper: {llama.floor} %). The residual transition network with random "
                     "weights predicts roughly the current state's own latent, and the true successor differs "
                     "from the current state by one action's effects, so it tends to outrank random distractors "
                     "of the same problem; a floor above chance is therefore expected from this architecture "
                     "(`benchmarks/embedplan_floor.py` compares it with the identity predictor z' = z_s on "
                     "the same pools).")
    identity = protocol_hit5(records, lambda r: own(r) and role(traits, r.method) == "floor"
                             and variant(traits, r.method) == "identity")
    below = [p for p in trained if p in identity and trained[p] <= identity[p]]
    if below:
        cells = ", ".join(f"{p.replace('_', '-').title()} {trained[p]:.1f} vs {identity[p]:.1f} %" for p in below)
        notes.append(f"The trained networks do not beat the identity floor z' = z_s (the encoder's own similarity, "
                     f"no training) on {cells} (trained mean vs identity): on these protocols, at this profile, "
                     "they add nothing over the frozen sentence embeddings.")
    return [f"- {n}" for n in notes]


#: Reading name (a paper file's ``pool_summary.reading``) -> function writing its bullets.
READINGS: dict[str, Callable[[Sequence[ResultRecord], Mapping[str, ReportTraits], PublishedPaper], list[str]]] = {
    "generalisation_hierarchy": generalisation_hierarchy,
}


def reading_notes(
    records: Sequence[ResultRecord], traits: Mapping[str, ReportTraits], paper: PublishedPaper
) -> list[str]:
    """The bullets of ``paper``'s reading (none when it names no reading).

    Raises:
        ValueError: the paper names an unknown reading (the message lists the valid names).
    """
    if not paper.pool_reading:
        return []
    if paper.pool_reading not in READINGS:
        raise ValueError(f"{paper.family}: unknown pool_summary.reading {paper.pool_reading!r}; "
                         f"valid: {', '.join(READINGS)}")
    return READINGS[paper.pool_reading](records, traits, paper)
