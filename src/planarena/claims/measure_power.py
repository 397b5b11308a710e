"""The power check of a measurement claim (:mod:`planarena.claims.measure`): its verdict simulated on
synthetic rows at the claim's own number of units, under the paper's and the floor's rates, by the
same code as a real verdict (:func:`planarena.claims.measure.evaluate`).

The claim file declares the model (a measurement has no published per-problem rates to read)::

    power:
      units: 12                 # paired units the run measures (problems, seed pairs)
      paper:                    # what a faithful reproduction shows
        lower: {A: {B: 0.89}}   # P(A's metric is lower than B's on a unit)
        completed: {A: 1.0}     # P(a side completes a unit); default 1
      floor:                    # what no effect shows
        lower: {A: {B: 0.5}}

Each side's value on a unit is ``exp(mu_side + e)``, ``e`` standard normal and independent, so
``P(A < B) = Phi((mu_B - mu_A) / sqrt(2))``; the ``mu`` are solved from the declared pairs along a
spanning tree (a pair that contradicts the tree by more than 0.02 in probability is an error). A
side that does not complete is +inf, as in a real run. Supports the atoms ``lower``,
``lower_in_most`` and ``completed_at_least``; a claim with ``ratio_*`` atoms is not simulated (its
magnitudes would need a model of their own).
"""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
from scipy import stats as sstats

from planarena.claims.spec import BLOCKS, Claim

#: Atoms the simulation models.
SIMULATED = ("lower", "lower_in_most", "completed_at_least")
#: Probabilities are clipped into [EPS, 1 - EPS] before the normal quantile (1.0 would be infinite).
EPS = 1e-4
#: Largest disagreement, in probability, between a declared pair and the fitted means.
TOLERANCE = 0.02


def _means(pairs: dict, sides: list[str], where: str) -> dict[str, float]:
    """``{side: mu}`` from ``{A: {B: P(A < B)}}`` (module docstring).

    Raises:
        ValueError: a pair names an unknown side, a probability is outside [0, 1], or the pairs
            contradict each other (the message names ``where``).
    """
    edges = []
    for a, row in (pairs or {}).items():
        for b, p in (row or {}).items():
            if a not in sides or b not in sides:
                raise ValueError(f"{where}: lower pair ({a}, {b}) names a side outside experiment.methods")
            if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0 <= p <= 1:
                raise ValueError(f"{where}: P({a} lower than {b}) must be in [0, 1], got {p!r}")
            edges.append((a, b, math.sqrt(2) * sstats.norm.ppf(min(max(float(p), EPS), 1 - EPS))))
    mu: dict[str, float] = {}
    for root in sides:
        if root in mu:
            continue
        mu[root] = 0.0
        grew = True
        while grew:
            grew = False
            for a, b, gap in edges:
                if a in mu and b not in mu:
                    mu[b], grew = mu[a] + gap, True
                elif b in mu and a not in mu:
                    mu[a], grew = mu[b] - gap, True
    for a, b, gap in edges:
        fitted = sstats.norm.cdf((mu[b] - mu[a]) / math.sqrt(2))
        wanted = sstats.norm.cdf(gap / math.sqrt(2))
        if abs(fitted - wanted) > TOLERANCE:
            raise ValueError(f"{where}: the lower pairs contradict each other at ({a}, {b}): "
                             f"{wanted:.3f} declared, {fitted:.3f} implied by the others")
    return mu


def simulated_rows(claim: Claim, units: int, mu: dict, completed: dict, rng: np.random.Generator) -> list[dict]:
    """One synthetic measurement (rows as :func:`planarena.claims.measure.run` writes them) of
    ``units`` units per (domain, split) the claim's atoms read, every metric they name."""
    atoms = [a for b in BLOCKS for a in getattr(claim, b).atoms()]
    metrics = sorted({a.metric for a in atoms if a.kind != "completed_at_least"}) or ["value"]
    domains = list(claim.experiment.get("domains") or ["all"])
    cells = sorted({(a.domain or domains[0], a.split or "") for a in atoms})
    rows = []
    for domain, split in cells:
        noise = rng.standard_normal((units, len(mu)))
        done = rng.random((units, len(mu)))
        for i in range(units):
            for j, (side, m) in enumerate(mu.items()):
                ok = bool(done[i, j] < completed.get(side, 1.0))
                value = float(math.exp(m + noise[i, j]))
                rows.append({"domain": domain, "split": split, "problem": f"u{i}", "objects": 0, "side": side,
                             "completed": ok, "values": {k: value for k in metrics} if ok else {}})
    return rows


def check(claim: Claim, draws: int, seed: int = 0):
    """The :class:`~planarena.claims.power.PowerReport` of a measurement claim (module docstring);
    not simulated (and so refused without ``--force``) when the claim declares no ``power.units``
    or uses an atom outside :data:`SIMULATED`."""
    from planarena.claims.measure import evaluate
    from planarena.claims.power import MAX_FLOOR_CONFIRM, MIN_POWER, Design, PowerReport
    from planarena.claims.verdict import VERDICTS

    spec = claim.extra.get("power") or {}
    kinds = sorted({a.kind for b in BLOCKS for a in getattr(claim, b).atoms()} - set(SIMULATED))
    if kinds or not spec.get("units"):
        why = (f"atoms {', '.join(kinds)} have no simulation model" if kinds else
               "declare power.units and the sides' power.paper / power.floor rates "
               "(planarena.claims.measure_power) to simulate it")
        return PowerReport(claim.id, 0, {}, {}, [], Design(), [f"a measurement claim not simulated: {why}; "
                                                               "its run needs --force"], simulated=False)
    units = int(spec["units"])
    sides = list(claim.methods)
    design = Design(notes=[f"{units} {claim.experiment.get('units') or 'problems'} per cell, the claim's power.units"])
    outcome, gate, assumed = {}, {}, []
    for i, scenario in enumerate(("paper", "floor")):
        rates = spec.get(scenario) or {}
        where = f"{claim.source}: power.{scenario}"
        mu = _means(rates.get("lower"), sides, where)
        completed = {s: float(v) for s, v in (rates.get("completed") or {}).items()}
        if not rates.get("lower"):
            assumed.append(f"{scenario}: no lower pairs declared, every side alike")
        rng = np.random.default_rng([seed, i])
        counts: Counter = Counter()
        gates = 0
        for _ in range(draws):
            v = evaluate(claim, simulated_rows(claim, units, mu, completed, rng), int(rng.integers(2 ** 31)))
            counts[v.verdict] += 1
            gates += bool(v.blocks["gate"])
        outcome[scenario] = {k: counts[k] / draws for k in VERDICTS}
        gate[scenario] = gates / draws
    problems = []
    if outcome["paper"]["confirmed"] < MIN_POWER:
        problems.append(f"P(confirmed | paper) = {outcome['paper']['confirmed']:.2f} < {MIN_POWER}")
    if outcome["floor"]["confirmed"] > MAX_FLOOR_CONFIRM:
        problems.append(f"P(confirmed | floor) = {outcome['floor']['confirmed']:.2f} > {MAX_FLOOR_CONFIRM}")
    return PowerReport(claim.id, draws, outcome, gate, assumed, design, problems)


__all__ = ["SIMULATED", "check", "simulated_rows"]
