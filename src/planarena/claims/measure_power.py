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
side that does not complete is +inf, as in a real run.

Magnitudes, for the ``ratio_*`` atoms and ``lower`` on costs: a declared ratio model replaces A's
value by B's times ``exp(log_mean + slope * z + sd * e)``, ``z`` the unit's size rank in its
(domain, split) cell scaled to [-1, 1] (units grow in ``objects``), so ``slope < 0`` is a ratio
that falls as problems grow::

      paper:
        ratio: {A: {B: {log_mean: -1.1, slope: -0.5, sd: 0.4}}}   # each a number or {domain: number, "*": default}
        ratio: {A: {B: {expanded: {log_mean: -1.1}, cpu_s: {log_mean: -0.9}}}}   # or one model per metric

Every metric starts from the same latent values per side (the ``lower`` pairs), and a metric's
ratio models then set A from B.

The cells are the claim's domains (``experiment.domains``) times the splits its atoms name (one
unnamed split when none does), ``units`` each.
"""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
from scipy import stats as sstats

from planarena.claims.spec import BLOCKS, Claim

#: Atoms the simulation models.
SIMULATED = ("lower", "lower_in_most", "completed_at_least", "ratio_at_most", "ratio_at_least", "ratio_falls_with")
#: Keys of a declared ratio model, with their defaults.
RATIO_KEYS = {"log_mean": 0.0, "slope": 0.0, "sd": 0.5}
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


def _ratios(spec: dict | None, sides: list[str], where: str) -> list[tuple[str, str, str | None, dict]]:
    """``[(A, B, metric, {log_mean, slope, sd})]`` from ``{A: {B: model}}`` (module docstring),
    ``model`` either the keys of :data:`RATIO_KEYS` (every metric; ``metric`` None) or
    ``{metric: {...}}`` (one model per metric the atoms name).

    Raises:
        ValueError: an unknown side or key, or a value that is neither a number nor a
            ``{domain: number}`` mapping (names ``where``).
    """
    out = []
    for a, row in (spec or {}).items():
        for b, model in (row or {}).items():
            if a not in sides or b not in sides:
                raise ValueError(f"{where}: ratio ({a}, {b}) names a side outside experiment.methods")
            model = model or {}
            per_metric = bool(model) and all(isinstance(v, dict) and set(v) <= set(RATIO_KEYS) and k not in RATIO_KEYS
                                             for k, v in model.items())
            for metric, m in (model.items() if per_metric else [(None, model)]):
                unknown = set(m) - set(RATIO_KEYS)
                if unknown:
                    raise ValueError(f"{where}: ratio ({a}, {b}) has unknown key(s) {', '.join(sorted(unknown))}; "
                                     f"one of {', '.join(RATIO_KEYS)}, or a metric mapping to them")
                for k, v in m.items():
                    values = v.values() if isinstance(v, dict) else [v]
                    if any(isinstance(x, bool) or not isinstance(x, (int, float)) for x in values):
                        raise ValueError(f"{where}: ratio ({a}, {b}).{k} must be a number or {{domain: number}}, "
                                         f"got {v!r}")
                out.append((a, b, metric, {**RATIO_KEYS, **m}))
    return out


def _at(value, domain: str) -> float:
    """A ratio-model value for ``domain``: the number, or the mapping's entry (``*``: the default)."""
    if isinstance(value, dict):
        return float(value.get(domain, value.get("*", 0.0)))
    return float(value)


def cells(claim: Claim) -> list[tuple[str, str]]:
    """The simulated (domain, split) cells: ``experiment.domains`` (``all`` when none) times the
    splits the atoms name (one unnamed split when none does)."""
    atoms = [a for b in BLOCKS for a in getattr(claim, b).atoms()]
    domains = sorted({*(claim.experiment.get("domains") or []), *(a.domain for a in atoms if a.domain)}) or ["all"]
    splits = sorted({a.split for a in atoms if a.split}) or [""]
    return [(d, s) for d in domains for s in splits]


def simulated_rows(claim: Claim, units: int, mu: dict, completed: dict, rng: np.random.Generator,
                   ratios: list | None = None) -> list[dict]:
    """One synthetic measurement (rows as :func:`planarena.claims.measure.run` writes them) of
    ``units`` units per cell (:func:`cells`), every metric the claim's atoms name; ``ratios`` from
    :func:`_ratios`."""
    atoms = [a for b in BLOCKS for a in getattr(claim, b).atoms()]
    metrics = sorted({a.metric for a in atoms if a.kind != "completed_at_least"}) or ["value"]
    sides = list(mu)
    rows = []
    for domain, split in cells(claim):
        base = np.exp(np.array([mu[s] for s in sides])[None, :] + rng.standard_normal((units, len(sides))))
        z = np.linspace(-1.0, 1.0, units) if units > 1 else np.zeros(1)
        values = {}
        for metric in metrics:
            v = base.copy()
            for a, b, only, model in ratios or []:
                if only is None or only == metric:
                    log = (_at(model["log_mean"], domain) + _at(model["slope"], domain) * z
                           + _at(model["sd"], domain) * rng.standard_normal(units))
                    v[:, sides.index(a)] = v[:, sides.index(b)] * np.exp(log)
            values[metric] = v
        done = rng.random((units, len(sides)))
        for i in range(units):
            for j, side in enumerate(sides):
                ok = bool(done[i, j] < completed.get(side, 1.0))
                rows.append({"domain": domain, "split": split, "problem": f"u{i}", "objects": 10 * (i + 1),
                             "side": side, "completed": ok,
                             "values": {k: float(values[k][i, j]) for k in metrics} if ok else {}})
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
    design = Design(notes=[f"{units} {claim.experiment.get('units') or 'problems'} per (domain, split) cell "
                           f"({len(cells(claim))} cells), the claim's power.units"])
    outcome, gate, assumed = {}, {}, []
    for i, scenario in enumerate(("paper", "floor")):
        rates = spec.get(scenario) or {}
        where = f"{claim.source}: power.{scenario}"
        mu = _means(rates.get("lower"), sides, where)
        ratios = _ratios(rates.get("ratio"), sides, where)
        completed = {s: float(v) for s, v in (rates.get("completed") or {}).items()}
        if not rates.get("lower") and not ratios:
            assumed.append(f"{scenario}: no lower pairs or ratio models declared, every side alike")
        rng = np.random.default_rng([seed, i])
        counts: Counter = Counter()
        gates = 0
        for _ in range(draws):
            v = evaluate(claim, simulated_rows(claim, units, mu, completed, rng, ratios), int(rng.integers(2 ** 31)))
            counts[v.verdict] += 1
            gates += bool(v.blocks["gate"])
        outcome[scenario] = {k: counts[k] / draws for k in VERDICTS}
        gate[scenario] = gates / draws
    problems = []
    if outcome["paper"]["confirmed"] < MIN_POWER:
        problems.append(f"P(confirmed | paper) = {outcome['paper']['confirmed']:.2f} < {MIN_POWER}")
    if outcome["floor"]["confirmed"] > MAX_FLOOR_CONFIRM:
        problems.append(f"P(confirmed | floor) = {outcome['floor']['confirmed']:.2f} > {MAX_FLOOR_CONFIRM}")
    # no published number: the "paper" scenario is the rates the claim file derived (its power.paper comment says from what)
    label = "" if claim.published else "the claim file's `power.paper` rates (no published number to simulate)"
    return PowerReport(claim.id, draws, outcome, gate, assumed, design, problems, paper_label=label)


__all__ = ["RATIO_KEYS", "SIMULATED", "cells", "check", "simulated_rows"]
