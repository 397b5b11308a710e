"""A claim's verdict from records: ``confirmed``, ``refuted`` or ``inconclusive``.

The gate is evaluated first: if it fails, the models are not competent enough for the test to mean
anything and the verdict is ``inconclusive``. Otherwise ``confirmed`` when the confirm condition
holds, ``refuted`` when the refute condition holds, and ``inconclusive`` when neither does (or both).
A claim over several domains also gets a verdict per domain (:func:`domain_verdicts`), and a
conjunctive claim (confirm is ``all``) is refuted when one of its domains is (:func:`overall`).

Every atom is computed from matrices with the **problem as the unit and its seeds nested in it**
(:mod:`planarena.results`): coverage is the fraction of attempts solved and validated (problems x
seeds, a missing record counts unsolved) with its 95 % interval (never of zero width:
:func:`planarena.stats.proportion_interval`); paired coverage atoms use
:func:`planarena.stats.paired_coverage` on the problems both methods attempted. Holm's correction
runs over the ``better`` atoms below an ``any`` of a block (:func:`holm_family`); ``better`` atoms
reached through ``all`` only form an intersection-union test, each at alpha. Hit@k atoms read each
side's per-problem mean Hit@k over its queries (duplicated queries weigh nothing more), paired by
problem (Wilcoxon signed-rank). Margin atoms (``gap_*``, ``equivalent``) compare the interval of the
mean paired difference, bootstrapped over problems then seeds
(:func:`planarena.stats.paired_difference_nested`), with their margin. Schema-run atoms (``metric:
sound_complete`` and the others of :data:`planarena.claims.spec.RUN_METRICS`) count a schema-learning
method's ``learn_schema`` records, one per (domain, seed), with the property, over its runs (Wilson
interval); a method without runs satisfies neither ``at_least`` nor ``at_most``.
"""

from __future__ import annotations

import dataclasses

import math

from collections import defaultdict
from dataclasses import asdict, dataclass, field
from typing import Iterable, Mapping

import numpy as np

from planarena import stats
from planarena.claims.spec import BLOCKS, MARGIN, PAIRED, RETIRED, Atom, Claim, Condition
from planarena.core.records import ResultRecord
from planarena.results import HitMatrices, SolvedMatrices, latest_records, record_task

#: The claims' names of the results layer's matrices (one implementation: :mod:`planarena.results`).
Measurements = SolvedMatrices
HitMeasurements = HitMatrices

VERDICTS = ("confirmed", "refuted", "inconclusive")


@dataclass(frozen=True)
class AtomResult:
    """One atom's measurement: whether it ``holds``; each method's coverage interval
    (``{method: Interval}``); for the paired kinds the test and its Holm-adjusted ``p`` (None when
    the atom is outside the block's Holm family: an intersection-union test, or not a ``better``);
    ``note``: e.g. how many seeds met an ``in_seeds`` threshold."""

    atom: Atom
    holds: bool
    coverage: dict
    test: stats.PairedTest | None = None
    p: float | None = None

    gap: stats.Interval | None = None
    units: str = "problems"
    note: str = ""

    def describe(self) -> str:
        """One line: the atom, each side's ``value [low, high] k/N`` (coverage) or ``value [low,
        high] n queries`` (Hit@k), the test, the gap interval, and the outcome."""
        def cell(m: str, iv: stats.Interval) -> str:
            if not iv.n or math.isnan(iv.value):
                return f"`{m}` no records"
            count = ((f"{iv.n} problems x {iv.runs} seeds" if iv.runs else
                      f"{iv.n} problems (each the mean over the seeds that held it out)") if self.atom.is_hit
                     else f"{iv.k}/{iv.n} runs" if self.atom.is_run
                     else f"{round(iv.value * iv.n * iv.runs)}/{iv.n * iv.runs}")
            return f"`{m}` {iv.value:.2f} {stats.format_interval(iv)} {count}"

        cells = "; ".join(cell(m, iv) for m, iv in self.coverage.items())
        test = ""
        if self.test is not None:
            p = stats.format_p(self.p) if self.p is not None else stats.format_p(self.test.p)
            test = (f"; {self.test.test}: A higher on {self.test.a_better}, B on {self.test.b_better} of "
                    f"{self.test.n} {self.units}, {'Holm ' if self.p is not None else ''}{p}")
        if self.gap is not None:
            level = "90 %" if self.atom.kind == "equivalent" else "95 %"
            how = " Newcombe" if self.gap.method == "newcombe" else ""
            test += f"; A - B {self.gap.value:+.3f}, {level}{how} {stats.format_interval(self.gap, '+.3f')}"
        if self.note:
            test += f"; {self.note}"
        retired = " [retired atom: no margin, holds for 0 vs 0]" if self.atom.kind in RETIRED else ""
        return f"{self.atom.label()}: {'holds' if self.holds else 'does not hold'} ({cells}{test}){retired}"


@dataclass(frozen=True)
class Verdict:
    """The verdict and, per block (gate, confirm, refute), whether it holds and its atoms' results;
    ``domains``: the verdict per domain of a claim over several domains (:func:`domain_verdicts`)."""

    claim: str
    verdict: str
    blocks: dict
    results: dict
    domains: dict = field(default_factory=dict)

    def to_json(self) -> dict:
        """A JSON-ready dict (``verdict.json``): the verdict, each block's outcome, and per atom its
        label, outcome, coverage values with intervals and the test."""
        def iv(v: stats.Interval) -> dict:
            return {"value": v.value, "low": v.low, "high": v.high, "problems": v.n, "runs": v.runs}

        return {
            "claim": self.claim, "verdict": self.verdict, "blocks": self.blocks, "domains": self.domains,
            "atoms": {b: [{"atom": r.atom.label(), "holds": r.holds,
                           # a list in the atom's method order (A, then B): JSON objects get sorted
                           "coverage": [{"method": m, **iv(v)} for m, v in r.coverage.items()],
                           **({"test": asdict(r.test), "units": r.units} if r.test else {}),
                           **({"holm_p": r.p} if r.p is not None else {}),
                           **({"note": r.note} if r.note else {}),
                           **({"gap": iv(r.gap)} if r.gap is not None else {})}
                          for r in rs] for b, rs in self.results.items()},
        }


class SchemaRuns:
    """Per (method, domain) the schema-learning runs (``learn_schema`` records, one per (domain,
    seed)) and how many have each property of :data:`planarena.claims.spec.RUN_METRICS`."""

    def __init__(self, records: Iterable[ResultRecord]):
        self.records = list(records)

    def count(self, method: str, domain: str | None, metric: str) -> tuple[int, int]:
        """``(runs with the property, runs)`` of ``method`` (of ``domain`` only unless None)."""
        runs = schema_runs(self.records, method, domain)
        return sum(bool(_RUN_PROPERTY[metric](r)) for r in runs), len(runs)


#: Schema-learning runs that count as having the property of a run metric (``RUN_METRICS``).
_RUN_PROPERTY = {
    "sound_complete": lambda r: bool((r.extra or {}).get("sound")) and bool((r.extra or {}).get("complete")),
    "sound": lambda r: bool((r.extra or {}).get("sound")),
    "complete": lambda r: bool((r.extra or {}).get("complete")),
    "trained": lambda r: r.outcome not in ("diverged", "error"),
}


def schema_runs(records: Iterable[ResultRecord], method: str, domain: str | None) -> list[ResultRecord]:
    """The latest ``learn_schema`` records of ``method`` (one per (domain, seed): a run), of
    ``domain`` only unless None."""
    return [r for r in latest_records(records) if r.method == method and record_task(r) == "learn_schema"
            and (domain is None or r.domain == domain)]


_NO_TEST = stats.PairedTest("no records", 0, 0, 0, float("nan"), 1.0)


def _gap(atom: Atom, a: np.ndarray, b: np.ndarray, seed: int, alpha: float) -> stats.Interval | None:
    """The interval of the mean paired difference A - B (problems, then seeds): 95 % for the
    one-sided margins, ``1 - 2 alpha`` for the two one-sided tests of ``equivalent``."""
    if atom.kind not in MARGIN:
        return None
    conf = 1.0 - 2.0 * alpha if atom.kind == "equivalent" else stats.CONFIDENCE
    return stats.paired_difference_nested(a, b, seed, confidence=conf)


def _value_only(mat: np.ndarray) -> stats.Interval:
    """The mean of a (problems, seeds) matrix without its interval (the power check's simulations
    read only the values and the tests)."""
    return stats.Interval(float(mat.mean()) if mat.size else math.nan, math.nan, math.nan, mat.shape[0],
                          mat.shape[1], None, "none")


def _measure_hit(atom: Atom, hits, seed: int, alpha: float, intervals: bool = True):
    """Hit@k with the problem as the unit: each side's (problems, seeds) matrix of per-problem
    means over its queries (:meth:`planarena.results.HitMatrices.problem_matrix`); the paired test
    is the Wilcoxon signed-rank test over the problems both sides have (their means over seeds)."""
    sides = [hits.problem_matrix(m, p, atom.k, atom.domain) for m, p in atom.sides()]
    values = {f"{m}@{p}": (stats.hierarchical_bootstrap(mat, seed) if mat.size and intervals
                           else _value_only(mat) if mat.size else stats.wilson(0, 0))
              for (m, p), (_, mat) in zip(atom.sides(), sides)}
    # a side whose problems were held out under some seeds only: one column of per-problem means
    # (runs = 0 tells the page "seeds pooled per problem")
    values = {k: dataclasses.replace(v, runs=0) if pm.seed_pooled and v.n else v
              for (k, v), pm in zip(values.items(), sides)}
    if len(sides) < 2:
        return values, None, None, "problems"
    (ka, ma), (kb, mb) = sides
    ia, ib = {k: i for i, k in enumerate(ka)}, {k: i for i, k in enumerate(kb)}
    common = sorted(set(ia) & set(ib))
    if not common or not ma.shape[1] or not mb.shape[1]:
        return values, _NO_TEST, None, "problems"
    a = ma[[ia[k] for k in common]]
    b = mb[[ib[k] for k in common]]
    test = stats.paired_scores(a.mean(axis=1), b.mean(axis=1))
    return values, test, _gap(atom, a, b, seed, alpha), "problems"


def _measure_runs(atom: Atom, runs: SchemaRuns):
    """Each side's fraction of runs with the atom's property, Wilson interval."""
    return {m: stats.wilson(*runs.count(m, atom.domain, atom.metric)) for m in atom.methods}, None, None, "runs"


def _measure(atom: Atom, data, hits, runs, seed: int, alpha: float = stats.ALPHA, intervals: bool = True):
    """``(values by side, paired test or None, gap interval or None, unit name)`` of one atom.

    ``data``: the solved matrices (:class:`planarena.results.SolvedMatrices` or anything with its
    ``matrix``); ``hits``: Hit@k matrices (``problem_matrix``); ``runs``: :class:`SchemaRuns`."""
    if atom.is_run:
        return _measure_runs(atom, runs)
    if atom.is_hit:
        return _measure_hit(atom, hits, seed, alpha, intervals)
    coverage = {}
    mats = []
    for m in atom.methods:
        mat, tried = data.matrix(m, atom.split, atom.domain, atom.seed)
        mats.append((mat, tried))
        coverage[m] = (stats.wilson(0, 0) if not mat.shape[1] else
                       stats.proportion_interval(mat, seed) if intervals else _value_only(mat))
    if atom.kind not in PAIRED:
        return coverage, None, None, "problems"
    (a, ta), (b, tb) = mats
    if a.shape[1] == 0 or b.shape[1] == 0:
        return coverage, _NO_TEST, None, "problems"
    both = ta & tb
    return coverage, stats.paired_coverage(a[both], b[both], seed), _gap(atom, a[both], b[both], seed, alpha), "problems"


def _seeds_meeting(atom: Atom, data, seed: int) -> tuple[int, int]:
    """``(seeds whose own coverage meets the threshold, seeds)`` of an ``in_seeds`` atom."""
    mat, _ = data.matrix(atom.methods[0], atom.split, atom.domain)
    if not mat.shape[1] or not mat.shape[0]:
        return 0, mat.shape[1]
    per_seed = mat.mean(axis=0)
    ok = per_seed >= atom.threshold if atom.kind == "at_least" else per_seed <= atom.threshold
    return int(ok.sum()), int(mat.shape[1])


def _evaluate(cond: Condition, outcome: Mapping[Atom, bool]) -> bool:
    values = [(_evaluate(p, outcome) if isinstance(p, Condition) else outcome[p]) for p in cond.parts]
    return all(values) if cond.op == "all" else any(values)


def holm_family(cond: Condition, kinds: tuple[str, ...] = ("better",)) -> list[Atom]:
    """The atoms of ``kinds`` that Holm's correction runs over in the block ``cond``: those below an
    ``any`` node (a union: one significant test among several suffices, so the family-wise error
    must be controlled). An atom reached through ``all`` nodes only is one test of an
    intersection-union test (Berger 1982): every one must reject, and each is tested at alpha."""
    out: list[Atom] = []

    def walk(c: Condition, under_any: bool) -> None:
        for p in c.parts:
            if isinstance(p, Condition):
                walk(p, under_any or c.op == "any")
            elif p.kind in kinds and (under_any or (c.op == "any" and len(c.parts) > 1)):
                out.append(p)
    walk(cond, False)
    return out


def decide(blocks: Mapping[str, bool]) -> str:
    """The verdict from whether each block holds: the gate fails -> ``inconclusive``; confirm
    holds and refute does not -> ``confirmed``; the opposite -> ``refuted``; else ``inconclusive``."""
    if not blocks["gate"]:
        return "inconclusive"
    if blocks["confirm"] and not blocks["refute"]:
        return "confirmed"
    if blocks["refute"] and not blocks["confirm"]:
        return "refuted"
    return "inconclusive"


def prune(cond: Condition, keep) -> Condition | None:
    """``cond`` with only the atoms for which ``keep(atom)`` is true (None when nothing is left)."""
    parts = []
    for p in cond.parts:
        q = prune(p, keep) if isinstance(p, Condition) else (p if keep(p) else None)
        if q is not None:
            parts.append(q)
    return Condition(cond.op, tuple(parts)) if parts else None


def claim_domains(claim: Claim) -> list[str]:
    """The domains the confirm and refute atoms name, when they name at least two (a claim over
    several domains gets a verdict per domain); else ``[]``."""
    doms = sorted({a.domain for b in ("confirm", "refute") for a in getattr(claim, b).atoms() if a.domain})
    return doms if len(doms) >= 2 else []


def domain_verdicts(claim: Claim, outcome: Mapping[Atom, bool]) -> dict[str, str]:
    """Per domain of :func:`claim_domains`: the verdict of the claim cut to that domain (its confirm
    and refute atoms of that domain; the gate's atoms of that domain and of all domains together).
    A domain without confirm atoms gets none."""
    out = {}
    for d in claim_domains(claim):
        gate = prune(claim.gate, lambda a: a.domain in (None, d))
        confirm = prune(claim.confirm, lambda a: a.domain == d)
        refute = prune(claim.refute, lambda a: a.domain == d)
        if confirm is None:
            continue
        out[d] = decide({"gate": gate is None or _evaluate(gate, outcome), "confirm": _evaluate(confirm, outcome),
                         "refute": refute is not None and _evaluate(refute, outcome)})
    return out


def overall(claim: Claim, blocks: Mapping[str, bool], per_domain: Mapping[str, str]) -> str:
    """The claim's verdict: :func:`decide` on its blocks, except that a conjunctive claim (its
    confirm block an ``all``) is **refuted** as soon as one of its domains is refuted (a conjunct
    is false), whatever the written refute block pools; a claim confirmed on its blocks while a
    domain is refuted is inconclusive (the two contradict)."""
    base = decide(blocks)
    if claim.confirm.op == "all" and "refuted" in per_domain.values() and blocks["gate"]:
        return "inconclusive" if base == "confirmed" else "refuted"
    return base


def evaluate_data(claim: Claim, data, hits, runs, seed: int = 0, intervals: bool = True) -> Verdict:
    """The claim's :class:`Verdict` from its matrices: ``data`` (solved matrices), ``hits`` (Hit@k
    problem matrices) and ``runs`` (:class:`SchemaRuns`); the power check
    (:mod:`planarena.claims.power`) calls it on simulated matrices, :func:`evaluate` on records.
    ``intervals=False`` skips each side's interval (no outcome reads it; the margin atoms' gap
    intervals are always computed)."""
    results: dict[str, list[AtomResult]] = {}
    blocks: dict[str, bool] = {}
    outcome: dict[Atom, bool] = {}
    for name in BLOCKS:
        cond: Condition = getattr(claim, name)
        atoms = cond.atoms()
        measured = [_measure(a, data, hits, runs, seed, claim.alpha, intervals) for a in atoms]
        family = set(holm_family(cond))
        in_holm = [i for i, a in enumerate(atoms) if a in family]
        adjusted = dict(zip(in_holm, stats.holm([measured[i][1].p for i in in_holm])))
        out = []
        for i, (a, (values, test, gap, units)) in enumerate(zip(atoms, measured)):
            first = values[next(iter(values))]
            note = ""
            if a.is_run and not first.n:   # no runs: nothing is shown, neither at least nor at most
                holds = False
            elif a.in_seeds is not None:
                ok, n = _seeds_meeting(a, data, seed)
                holds, note = ok >= a.in_seeds, f"{ok} of {n} seeds"
            elif a.kind == "at_least":
                holds = first.value >= a.threshold
            elif a.kind == "at_most":
                holds = first.value <= a.threshold
            elif a.kind == "gap_at_most":
                holds = gap is not None and gap.high <= a.threshold
            elif a.kind == "gap_at_least":
                holds = gap is not None and gap.low >= a.threshold
            elif a.kind == "equivalent":
                holds = gap is not None and gap.low >= -a.threshold and gap.high <= a.threshold
            else:
                p = adjusted.get(i, test.p)
                better = test.diff > 0 and p < claim.alpha
                holds = better if a.kind == "better" else not better
            out.append(AtomResult(a, bool(holds), values, test, adjusted.get(i), gap, units, note))
            outcome[a] = bool(holds)
        results[name] = out
        blocks[name] = _evaluate(cond, {r.atom: r.holds for r in out})
    per_domain = domain_verdicts(claim, outcome)
    return Verdict(claim.id, overall(claim, blocks, per_domain), blocks, results, per_domain)


def evaluate(claim: Claim, records: Iterable[ResultRecord], index: Mapping[tuple[str, str], Iterable[str]],
             seed: int = 0) -> Verdict:
    """The claim's :class:`Verdict` from the result records and the instance index
    (:func:`planarena.report.records.instance_index`); ``seed`` seeds the bootstraps and the
    Monte-Carlo permutation tests."""
    records = list(records)
    return evaluate_data(claim, Measurements(records, index), HitMeasurements(records), SchemaRuns(records), seed)


__all__ = ["AtomResult", "HitMeasurements", "Measurements", "SchemaRuns", "VERDICTS", "Verdict", "claim_domains", "decide",
           "domain_verdicts", "evaluate", "evaluate_data", "holm_family", "overall", "prune", "schema_runs"]
