"""The power check of a claim (``planarena claims check ID``): could this experiment have confirmed
the paper, and could a model that learned nothing have confirmed it?

Before a claim runs, its verdict is simulated on synthetic data at the claim's own **design**: its
problems per (domain, split) (from the suite's files or generator sizes:
:func:`planarena.datasets.suites.planned_problems`), each method's seeds (a deterministic method runs
once), its schema-learning runs, its Hit@k problems, and its atoms, Holm families and verdict rule,
evaluated by the same code as a real verdict (:func:`planarena.claims.verdict.evaluate_data`). Two
scenarios, ``draws`` simulations each:

* ``paper``: every method at the rate its paper publishes (the claim's ``published`` values, or the
  claim file's ``power.paper`` rates): what a faithful reproduction would show;
* ``floor``: every learned method at its floor's rate (the claim file's ``power.floor`` rates, else
  the highest rate of the claim's floor rows in that cell, else an assumed rate): no learning.

A cell no source gives a rate for gets an **assumed** rate, listed in the output: a learned
method's own published rate in that domain (no evidence that it does better on another split),
else :data:`ASSUMED` (a floor solves little, a ceiling everything, a learned method most of its
training distribution and half of a held-out split). A claim that needs a better rate declares it
(``power: {paper: {method: rate | {domain: rate | {split: rate}}}, floor: {...}, icc: 0.5}``). Problem difficulty is shared by every method and seed of a problem (a latent normal
effect, ``power.icc`` of the latent variance, default :data:`ICC`): a problem one method finds hard
the others find hard too, and its seeds are not independent draws.

``planarena claims run`` refuses a claim with P(confirmed | paper) < :data:`MIN_POWER` or
P(confirmed | floor) > :data:`MAX_FLOOR_CONFIRM` unless forced; a forced run's page says so.
Measurement claims (:mod:`planarena.claims.measure`) have no published rates: their model is declared
in the claim file and simulated by :mod:`planarena.claims.measure_power`.
"""

from __future__ import annotations

import contextlib
import math
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

import numpy as np
from scipy import stats as sstats

from planarena import stats
from planarena.config import Layout
from planarena.results import ProblemMatrix
from planarena.claims.spec import BLOCKS, RETIRED, Claim
from planarena.claims.verdict import VERDICTS, evaluate_data

#: Smallest P(confirmed | the paper's rates) for ``claims run`` to start without ``--force``.
MIN_POWER = 0.8
#: Largest P(confirmed | the floors' rates) for ``claims run`` to start without ``--force``.
MAX_FLOOR_CONFIRM = 0.05
#: Simulated verdicts per scenario unless the caller asks for another number.
DRAWS = 200
#: Share of the latent variance that is the problem's (difficulty shared by methods and seeds).
ICC = 0.5
#: Queries per problem of a simulated Hit@k cell.
QUERIES = 20
#: Rates used where neither the paper nor the claim file gives one (listed as assumptions).
ASSUMED = {"floor": 0.05, "floor_runs": 0.0, "ceiling": 1.0, "learned_in_distribution": 0.9, "learned_held_out": 0.5,
           "runs": 0.9}
#: Splits on which a learned method is read as in distribution for :data:`ASSUMED`.
IN_DISTRIBUTION = ("train", "validation", "interpolation")
#: Monte-Carlo sign patterns of the permutation tests inside the simulation (the report's 200,000
#: would make a check take hours; 2,000 resolve p = 0.05 to about +-0.01).
SIM_PERMUTATIONS = 2000
SIM_EXACT_LIMIT = 12


@dataclass
class Design:
    """What the claim's run will measure: ``problems`` per (domain, split); ``seeds`` per method
    (one for a deterministic method); ``runs`` per (method, domain) of a schema-learning method;
    ``hit_problems`` per (protocol, domain) of a Hit@k atom; ``floors``: the claim's floor rows;
    ``notes``: where the design was read from or assumed."""

    problems: dict = field(default_factory=dict)
    seeds: dict = field(default_factory=dict)
    runs: dict = field(default_factory=dict)
    hit_problems: dict = field(default_factory=dict)
    floors: set = field(default_factory=set)
    ceilings: set = field(default_factory=set)
    notes: list = field(default_factory=list)


@dataclass
class PowerReport:
    """The check of one claim: per scenario the share of draws giving each verdict and passing the
    gate; ``assumed``: the cells whose rate was assumed; ``problems``: what keeps the claim from
    running without ``--force`` (empty: it passes)."""

    claim: str
    draws: int
    outcome: dict
    gate: dict
    assumed: list
    design: Design
    problems: list
    simulated: bool = True
    #: the page's name of the "paper" scenario when its rates are not the paper's published numbers
    paper_label: str = ""

    @property
    def passes(self) -> bool:
        return not self.problems

    def p(self, scenario: str, verdict: str) -> float:
        return self.outcome.get(scenario, {}).get(verdict, math.nan)

    def table(self) -> list[str]:
        """The check as markdown lines (the claim page and docs/claims.md show it): :func:`power_table`."""
        return power_table(self.to_json())

    def to_json(self) -> dict:
        return {"claim": self.claim, "draws": self.draws, "outcome": self.outcome, "gate": self.gate,
                "assumed": self.assumed, "problems": self.problems, "passes": self.passes,
                "simulated": self.simulated, "design_notes": self.design.notes,
                **({"paper_label": self.paper_label} if self.paper_label else {})}


def power_table(check: dict) -> list[str]:
    """A power check (:meth:`PowerReport.to_json`, also the ``power`` of a committed
    ``verdict.json``) as markdown lines: the share of each verdict per scenario and whether it passes."""
    draws, claim, problems = check["draws"], check["claim"], list(check.get("problems") or [])
    if not check.get("simulated", True):
        return [f"Power check: not simulated ({'; '.join(problems)})."]
    outcome, gate = check.get("outcome") or {}, check.get("gate") or {}
    se = math.sqrt(0.25 / max(draws, 1))
    lines = [f"Power check ({draws} simulated runs per scenario at this claim's design, each share "
             f"within about +-{2 * se:.2f}; `planarena claims check {claim}`):", "",
             "| scenario | P(confirmed) | P(refuted) | P(inconclusive) | P(gate passes) |", "|---|---|---|---|---|"]
    paper = check.get("paper_label") or "paper's rates (a faithful reproduction)"
    for sc, label in (("paper", paper), ("floor", "floors' rates (no learning)")):
        o = outcome.get(sc, {})
        lines.append(f"| {label} | {o.get('confirmed', 0):.2f} | {o.get('refuted', 0):.2f} | "
                     f"{o.get('inconclusive', 0):.2f} | {gate.get(sc, 0):.2f} |")
    lines.append("")
    verdict = "**passes**" if not problems else "**fails**: " + "; ".join(problems)
    lines.append(f"Check {verdict} (needs P(confirmed | paper) >= {MIN_POWER} and P(confirmed | floor) <= "
                 f"{MAX_FLOOR_CONFIRM}).")
    assumed = list(check.get("assumed") or [])
    if assumed:
        shown = assumed[:12]
        more = f" and {len(assumed) - len(shown)} more" if len(assumed) > len(shown) else ""
        lines += ["", "Rates assumed where neither the paper nor the claim file gives one: "
                  + "; ".join(shown) + more + "."]
    notes = list(check.get("design_notes") or [])
    if notes:
        lines += ["", "Design: " + "; ".join(notes) + "."]
    return lines


def _latent(rate: float, icc: float) -> float:
    """The latent mean giving a solved probability ``rate`` under a problem effect of variance
    ``icc / (1 - icc)`` plus a unit attempt noise (a probit model)."""
    if rate <= 0:
        return -math.inf
    if rate >= 1:
        return math.inf
    sigma2 = icc / (1 - icc)
    return float(sstats.norm.ppf(rate)) * math.sqrt(1 + sigma2)


class Rates:
    """The rate of each (method, domain, split or protocol) cell under one scenario (module
    docstring), remembering which were assumed."""

    def __init__(self, claim: Claim, design: Design, scenario: str):
        self.claim, self.design, self.scenario = claim, design, scenario
        self.power = dict(claim.extra.get("power") or {})
        self.assumed: set[str] = set()

    def _given(self, table: dict, method: str, domain: str | None, where: str) -> float | None:
        v = (table or {}).get(method)
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            return float(v)
        if isinstance(v, dict):
            v = v.get(domain, v.get(where))
            if isinstance(v, dict):
                v = v.get(where)
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                return float(v)
        return None

    def _published(self, method: str, domain: str | None, where: str, metric: str) -> float | None:
        pub = self.claim.published or {}
        if metric.startswith("hit@") or where in pub:
            v = (pub.get(where) or {}).get(method) if isinstance(pub.get(where), dict) else None
            return None if v is None else float(v) / 100
        if metric in ("sound_complete", "sound", "complete"):
            if method in self.design.floors | self.design.ceilings:   # the paper's N_* are its learner's
                return None
            key = {"sound_complete": "N_sc", "sound": "N_s", "complete": "N_c"}[metric]
            v = (pub.get(domain) or {}).get(key) if isinstance(pub.get(domain), dict) else None
            return None if v is None else float(v) / 10   # the DIAS paper's 10 runs
        if self.claim.extra.get("published_split") == where and isinstance(pub.get(domain), dict):
            v = pub[domain].get(method)
            return None if v is None else float(v) / 100
        return None

    def paper(self, method: str, domain: str | None, where: str, metric: str = "coverage") -> float:
        """The rate under the paper's scenario."""
        v = self._given(self.power.get("paper"), method, domain, where)
        if v is None:
            v = self._published(method, domain, where, metric)
        if v is None and metric == "trained":
            v = 1.0
        if v is None:
            runs = metric in ("sound_complete", "sound", "complete")
            if method in self.design.ceilings:
                kind = "ceiling"
            elif method in self.design.floors:
                kind = "floor_runs" if runs else "floor"
            elif metric in ("sound_complete", "sound", "complete"):
                kind = "runs"
            else:
                kind = "learned_in_distribution" if where in IN_DISTRIBUTION else "learned_held_out"
            v = ASSUMED[kind]
            near = None if kind in ("floor", "floor_runs", "ceiling", "runs") else self._nearest(method, domain)
            if near is not None:     # the method's own published rate in the domain: no evidence it does better
                v = near
                self.assumed.add(f"`{method}` {domain or 'all domains'}/{where}: {v:g} (its published rate on "
                                 f"{self.claim.extra.get('published_split')})")
            else:
                self.assumed.add(f"`{method}` {domain or 'all domains'}/{where}: {v:g}")
        return v

    def _nearest(self, method: str, domain: str | None) -> float | None:
        """The method's published rate on the claim's ``published_split`` in ``domain`` (or the mean
        over the domains when None), where the paper gives one."""
        split = self.claim.extra.get("published_split")
        if not split:
            return None
        pub = self.claim.published or {}
        vals = [float(pub[d][method]) / 100 for d in ([domain] if domain else list(pub))
                if isinstance(pub.get(d), dict) and isinstance(pub[d].get(method), (int, float))]
        return float(np.mean(vals)) if vals else None

    def rate(self, method: str, domain: str | None, where: str, metric: str = "coverage") -> float:
        """The rate of the cell under this object's scenario."""
        if self.scenario == "paper" or method in self.design.floors | self.design.ceilings or metric == "trained":
            return self.paper(method, domain, where, metric)
        v = self._given(self.power.get("floor"), method, domain, where)
        if v is not None:
            return v
        floors = [self.paper(f, domain, where, metric) for f in sorted(self.design.floors)]
        if floors:
            return max(floors)
        v = ASSUMED["floor"]
        self.assumed.add(f"`{method}` at the floor, {domain or 'all domains'}/{where}: {v:g}")
        return v


class SimulatedData:
    """One simulated run: solved matrices, Hit@k problem matrices and schema-run counts drawn at
    the design's sizes and the scenario's rates, with the interfaces the verdict reads
    (``matrix``, ``problem_matrix``, ``count``)."""

    def __init__(self, design: Design, rates: Rates, rng: np.random.Generator, icc: float):
        self.design, self.rates, self.rng, self.icc = design, rates, rng, icc
        self.sigma = math.sqrt(icc / (1 - icc))
        self._effects: dict = {}
        self._cache: dict = {}

    def _effect(self, key: tuple, n: int) -> np.ndarray:
        if key not in self._effects:
            self._effects[key] = self.rng.standard_normal(n) * self.sigma
        return self._effects[key]

    def _draw(self, method: str, cells: list[tuple[str, str]], where_of, metric: str, seeds: int,
              queries: int = 0) -> np.ndarray:
        blocks = []
        for domain, where in cells:
            n = len(self.design.problems.get((domain, where), ())) if not queries else \
                self.design.hit_problems.get((where, domain), 0)
            if not n:
                continue
            a = _latent(self.rates.rate(method, domain, where_of(where), metric), self.icc)
            eff = self._effect((domain, where), n)
            if queries:
                p = sstats.norm.cdf(a + eff)    # per-problem hit probability; queries are attempts
                blocks.append(self.rng.binomial(queries, np.repeat(p[:, None], seeds, axis=1)) / queries)
            else:
                noise = self.rng.standard_normal((n, seeds))
                blocks.append(((a + eff[:, None] + noise) > 0).astype(float))
        return np.vstack(blocks) if blocks else np.zeros((0, seeds))

    def matrix(self, method: str, split: str, domain: str | None, seed: int | None = None):
        key = ("cov", method, split, domain)
        if key not in self._cache:
            cells = [(d, s) for (d, s) in sorted(self.design.problems) if s == split and domain in (None, d)]
            seeds = self.design.seeds.get(method, [0])
            mat = self._draw(method, cells, lambda w: w, "coverage", len(seeds))
            self._cache[key] = (mat, seeds)
        mat, seeds = self._cache[key]
        if seed is not None:
            mat = mat[:, [i for i, s in enumerate(seeds) if s == seed]]
        return mat, np.ones(mat.shape[0], dtype=bool)

    def problem_matrix(self, method: str, protocol: str, k: int, domain: str | None):
        key = ("hit", method, protocol, domain)
        if key not in self._cache:
            doms = sorted({d for (p, d) in self.design.hit_problems if p == protocol and domain in (None, d)})
            seeds = len(self.design.seeds.get(method, [0]))
            mats, keys = [], []
            for d in doms:
                m = self._draw(method, [(d, protocol)], lambda w: w, f"hit@{k}", seeds, QUERIES)
                mats.append(m)
                keys += [(d, f"p{i}") for i in range(m.shape[0])]
            self._cache[key] = ProblemMatrix(keys, np.vstack(mats) if mats else np.zeros((0, seeds)),
                                             list(range(seeds)))
        return self._cache[key]

    def count(self, method: str, domain: str | None, metric: str) -> tuple[int, int]:
        doms = sorted(d for (m, d) in self.design.runs if m == method and domain in (None, d))
        k = n = 0
        for d in doms:
            runs = self.design.runs[(method, d)]
            k += int(self.rng.binomial(runs, self.rates.rate(method, d, "schema-test", metric)))
            n += runs
        return k, n


@contextlib.contextmanager
def _fast_permutations() -> Iterator[None]:
    old = stats.PERMUTATIONS, stats.EXACT_LIMIT
    stats.PERMUTATIONS, stats.EXACT_LIMIT = SIM_PERMUTATIONS, SIM_EXACT_LIMIT
    try:
        yield
    finally:
        stats.PERMUTATIONS, stats.EXACT_LIMIT = old


def design_of(claim: Claim, params: dict) -> Design:
    """The claim's :class:`Design` from its workspace params (:func:`planarena.claims.run.claim_params`)."""
    from planarena.datasets.suites import planned_problems
    from planarena.methods import resolve, with_twins
    from planarena.report.traits import method_traits

    params = with_twins(params)   # a workspace names its twins compactly ({twin_of: row}); complete them
    d = Design()
    planned = planned_problems(params)
    if planned is None:
        d.notes.append(f"suite `{params.get('suite')}` not readable here: 20 problems per (domain, split) assumed")
        doms = claim.experiment.get("domains") or ["all"]
        splits = {a.split for b in BLOCKS for a in getattr(claim, b).atoms() if a.split}
        planned = {(dm, s): [f"p{i}" for i in range(20)] for dm in doms for s in splits}
    d.problems = planned
    seeds = list((params.get("evaluation") or {}).get("seeds") or [0])
    traits = method_traits(params, claim.methods)
    for m in claim.methods:
        try:
            cls, config = resolve(m, params)
        except KeyError:
            d.seeds[m] = seeds
            continue
        try:   # `stochastic` may depend on the block (an XGBoost state-centric row runs one seed)
            d.seeds[m] = cls(m, config, params, Layout(root=Path("data"))).seeds()
        except Exception:   # a plugin whose constructor needs more: its class attribute
            d.seeds[m] = list(config.get("seeds") or seeds) if getattr(cls, "stochastic", True) is not False \
                else seeds[:1]
        role = traits[m].role if traits.get(m) is not None else "model"
        if role == "floor":
            d.floors.add(m)
        elif role == "ceiling":
            d.ceilings.add(m)
        if "learn_schema" in getattr(cls, "tasks", ()):
            doms = config.get("domains") or (params.get("schema") or {}).get("domains") or []
            for dom in doms:
                d.runs[(m, dom)] = len(d.seeds[m])
    hit_atoms = [a for b in BLOCKS for a in getattr(claim, b).atoms() if a.is_hit]
    if hit_atoms:
        acp = params.get("acp") or {}
        n = int(acp.get("problems", 4))
        for a in hit_atoms:
            for p in a.protocols:
                for dom in acp.get("domains") or []:
                    d.hit_problems[(p, dom)] = n
        d.notes.append(f"Hit@k: {n} test problems per ACP domain and protocol, {QUERIES} queries each")
    return d


def check(claim: Claim, params: dict, draws: int = DRAWS, seed: int = 0) -> PowerReport:
    """Simulate the claim's verdict ``draws`` times under each scenario (module docstring) and
    return the :class:`PowerReport`; ``params``: the workspace params the run would use."""
    problems: list[str] = []
    retired = sorted({a.kind for b in BLOCKS for a in getattr(claim, b).atoms() if a.kind in RETIRED})
    if claim.is_measure:
        return PowerReport(claim.id, 0, {}, {}, [], Design(), [
            "a measurement claim: planarena.claims.measure_power.check simulates it"], simulated=False)
    design = design_of(claim, params)
    icc = float((claim.extra.get("power") or {}).get("icc", ICC))
    outcome, gate, assumed = {}, {}, []
    with _fast_permutations():
        for i, scenario in enumerate(("paper", "floor")):
            rates = Rates(claim, design, scenario)
            rng = np.random.default_rng([seed, i])
            counts: Counter = Counter()
            gates = 0
            for _ in range(draws):
                sim = SimulatedData(design, rates, rng, icc)
                v = evaluate_data(claim, sim, sim, sim, int(rng.integers(2 ** 31)), intervals=False)
                counts[v.verdict] += 1
                gates += bool(v.blocks["gate"])
            outcome[scenario] = {k: counts[k] / draws for k in VERDICTS}
            gate[scenario] = gates / draws
            assumed += sorted(rates.assumed - set(assumed))
    if outcome["paper"]["confirmed"] < MIN_POWER:
        problems.append(f"P(confirmed | paper) = {outcome['paper']['confirmed']:.2f} < {MIN_POWER}")
    if outcome["floor"]["confirmed"] > MAX_FLOOR_CONFIRM:
        problems.append(f"P(confirmed | floor) = {outcome['floor']['confirmed']:.2f} > {MAX_FLOOR_CONFIRM}")
    if retired:
        problems.append(f"uses the retired atom(s) {', '.join(retired)}")
    return PowerReport(claim.id, draws, outcome, gate, list(dict.fromkeys(assumed)), design, problems)


__all__ = ["ASSUMED", "DRAWS", "Design", "ICC", "MAX_FLOOR_CONFIRM", "MIN_POWER", "PowerReport", "Rates",
           "SimulatedData", "check", "design_of", "power_table"]
