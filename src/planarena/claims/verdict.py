"""A claim's verdict from records: ``confirmed``, ``refuted`` or ``inconclusive``.

The gate is evaluated first: if it fails, the models are not competent enough for the test to mean
anything and the verdict is ``inconclusive``. Otherwise ``confirmed`` when the confirm condition
holds, ``refuted`` when the refute condition holds, and ``inconclusive`` when neither does (or, which
a well-written claim never allows, both). Every atom is computed from the result records only
(:mod:`planarena.claims.spec` lists the atoms): coverage is the fraction of attempts solved and
validated (problems x seeds, a missing record counts unsolved) with its 95 % interval, and the paired
atoms use :func:`planarena.stats.paired_coverage` on the problems both methods attempted, Holm-
corrected over the ``better`` / ``not_better`` atoms of one block. Hit@k atoms read the per-query
ranks of the pool records (:func:`planarena.report.sections.ranking.unit_scores`): each side's
value is the mean over domains with its stratified bootstrap interval; the paired test is the
Wilcoxon signed-rank test over the queries both ranked (one protocol) or over the test problems both
have (two protocols: each problem's mean Hit@k over its queries, seeds and training sources). ``gap_*`` atoms compare the bootstrap interval of the mean paired difference
(:func:`planarena.stats.paired_difference`) with their margin. Schema-run atoms (``metric:
sound_complete`` and the others of :data:`planarena.claims.spec.RUN_METRICS`) count a schema-learning
method's ``learn_schema`` records, one per (domain, seed), with the property, over its runs (Wilson
interval); a method without runs satisfies neither ``at_least`` nor ``at_most``.
"""

from __future__ import annotations

import math

from collections import defaultdict
from dataclasses import asdict, dataclass
from typing import Iterable, Mapping

import numpy as np

from planarena import stats
from planarena.claims.spec import BLOCKS, PAIRED, Atom, Claim, Condition
from planarena.core.records import ResultRecord
from planarena.report.records import is_pool_record, latest_records, plan_records_of, record_protocol, record_task
from planarena.report.sections.ranking import unit_scores

VERDICTS = ("confirmed", "refuted", "inconclusive")


@dataclass(frozen=True)
class AtomResult:
    """One atom's measurement: whether it ``holds``; each method's coverage interval
    (``{method: Interval}``); for the paired kinds the test and its Holm-adjusted ``p``."""

    atom: Atom
    holds: bool
    coverage: dict
    test: stats.PairedTest | None = None
    p: float | None = None

    gap: stats.Interval | None = None
    units: str = "problems"

    def describe(self) -> str:
        """One line: the atom, each side's ``value [low, high] k/N`` (coverage) or ``value [low,
        high] n queries`` (Hit@k), the test, the gap interval, and the outcome."""
        def cell(m: str, iv: stats.Interval) -> str:
            if not iv.n or math.isnan(iv.value):
                return f"`{m}` no records"
            count = (f"{iv.n} queries x {iv.runs} seeds" if self.atom.is_hit
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
            test += f"; A - B {self.gap.value:+.3f} {stats.format_interval(self.gap, '+.3f')}"
        return f"{self.atom.label()}: {'holds' if self.holds else 'does not hold'} ({cells}{test})"


@dataclass(frozen=True)
class Verdict:
    """The verdict and, per block (gate, confirm, refute), whether it holds and its atoms' results."""

    claim: str
    verdict: str
    blocks: dict
    results: dict

    def to_json(self) -> dict:
        """A JSON-ready dict (``verdict.json``): the verdict, each block's outcome, and per atom its
        label, outcome, coverage values with intervals and the test."""
        def iv(v: stats.Interval) -> dict:
            return {"value": v.value, "low": v.low, "high": v.high, "problems": v.n, "runs": v.runs}

        return {
            "claim": self.claim, "verdict": self.verdict, "blocks": self.blocks,
            "atoms": {b: [{"atom": r.atom.label(), "holds": r.holds,
                           # a list in the atom's method order (A, then B): JSON objects get sorted
                           "coverage": [{"method": m, **iv(v)} for m, v in r.coverage.items()],
                           **({"test": asdict(r.test), "units": r.units} if r.test else {}),
                           **({"holm_p": r.p} if r.p is not None else {}),
                           **({"gap": iv(r.gap)} if r.gap is not None else {})}
                          for r in rs] for b, rs in self.results.items()},
        }


class Measurements:
    """Solved matrices of the plan records: per (method, split, domain or None) the 0/1 matrix
    (problems, seeds) over the problems of the manifest ``index`` (problems without a record count
    unsolved) and which of them the method attempted."""

    def __init__(self, records: Iterable[ResultRecord], index: Mapping[tuple[str, str], Iterable[str]]):
        self.latest = plan_records_of(records)
        self.index = {k: sorted(v) for k, v in index.items()}
        self.seeds: dict[str, list[int]] = defaultdict(list)
        self.solved: set[tuple] = set()
        self.tried: set[tuple] = set()
        for r in self.latest:
            if r.seed not in self.seeds[r.method]:
                self.seeds[r.method].append(r.seed)
            self.tried.add((r.method, r.domain, r.split, r.problem))
            if r.counts_as_solved:
                self.solved.add((r.method, r.seed, r.domain, r.split, r.problem))
        for m in self.seeds:
            self.seeds[m].sort()

    def problems(self, split: str, domain: str | None) -> list[tuple[str, str, str]]:
        return [(d, s, p) for (d, s), probs in sorted(self.index.items())
                if s == split and (domain is None or d == domain) for p in probs]

    def matrix(self, method: str, split: str, domain: str | None,
               seed: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """``(solved (problems, seeds), attempted (problems,))``; a method without records has no
        seeds (shape ``(problems, 0)``); ``seed``: that evaluation seed's column only (none when
        the method has no record of it)."""
        probs = self.problems(split, domain)
        seeds = [s for s in self.seeds.get(method, []) if seed is None or s == seed]
        mat = np.array([[(method, s, *p) in self.solved for s in seeds] for p in probs], dtype=float)
        tried = np.array([(method, *p) in self.tried for p in probs], dtype=bool)
        return mat.reshape(len(probs), len(seeds)), tried


class HitMeasurements:
    """Per-query Hit@k scores of the pool records: per ``(method, protocol)`` the units
    ``(domain, split, query)`` scored 0/1 under each seed (:func:`unit_scores`)."""

    def __init__(self, records: Iterable[ResultRecord]):
        self.records = list(records)
        self._by_k: dict[int, dict] = {}

    def units(self, method: str, protocol: str, k: int, domain: str | None) -> dict[tuple, dict[int, float]]:
        """``{unit: {seed: 0/1}}`` of ``method`` under ``protocol`` (units of ``domain`` only)."""
        if k not in self._by_k:
            self._by_k[k] = unit_scores(self.records, k)
        units = self._by_k[k].get((method, protocol), {})
        return {u: v for u, v in units.items() if domain is None or u[0] == domain}

    def problem_means(self, method: str, protocol: str, k: int, domain: str | None) -> dict[tuple, float]:
        """``{(domain, problem): Hit@k}``: the mean over that problem's queries of every record of
        ``method`` under ``protocol`` (all seeds; all training sources under Cross-Domain), from
        the records' ``query_problem``; empty when the records do not name their queries'
        problems."""
        hits: dict[tuple, list[float]] = defaultdict(list)
        for r in latest_records(self.records):
            extra = r.extra or {}
            if (r.method != method or not is_pool_record(r) or record_protocol(r) != protocol
                    or r.outcome == "error" or (domain is not None and r.domain != domain)):
                continue
            ranks, qp, names = extra.get("ranks"), extra.get("query_problem"), extra.get("problems")
            if not (isinstance(ranks, list) and isinstance(qp, list) and isinstance(names, list)):
                continue
            for rank, i in zip(ranks, qp):
                hits[(r.domain, names[i])].append(float(rank < k))
        return {u: float(np.mean(v)) for u, v in hits.items()}

    @staticmethod
    def interval(units: Mapping[tuple, Mapping[int, float]], seed: int) -> stats.Interval:
        """Mean over domains of the per-domain Hit@k, with the stratified bootstrap interval
        (queries within domains, then seeds; units present under every seed)."""
        seeds = sorted(set().union(*(v.keys() for v in units.values()))) if units else []
        keys = sorted(u for u, by in units.items() if all(s in by for s in seeds))
        domains = sorted({u[0] for u in keys})
        return stats.stratified_bootstrap(
            [np.array([[units[u][s] for s in seeds] for u in keys if u[0] == d], dtype=float).reshape(-1, len(seeds))
             for d in domains], seed)


def _unit_means(units: Mapping[tuple, Mapping[int, float]]) -> dict[tuple, float]:
    return {u: float(np.mean(list(v.values()))) for u, v in units.items() if v}


def _domain_means(units: Mapping[tuple, Mapping[int, float]]) -> dict[str, float]:
    by: dict[str, list[float]] = defaultdict(list)
    for u, v in _unit_means(units).items():
        by[u[0]].append(v)
    return {d: float(np.mean(v)) for d, v in by.items()}


def _measure_hit(atom: Atom, hits: HitMeasurements, seed: int):
    sides = [hits.units(m, p, atom.k, atom.domain) for m, p in atom.sides()]
    values = {f"{m}@{p}": hits.interval(u, seed) for (m, p), u in zip(atom.sides(), sides)}
    if len(sides) < 2:
        return values, None, None, "queries"
    if atom.protocols[0] == atom.protocols[1]:
        a, b, units = _unit_means(sides[0]), _unit_means(sides[1]), "queries"
    else:
        # the queries differ: pair the problems both protocols test (their mean Hit@k), or, for
        # records that do not name their queries' problems, the test domains
        a, b = (hits.problem_means(m, p, atom.k, atom.domain) for m, p in atom.sides())
        units = "problems"
        if not (set(a) & set(b)):
            a, b, units = _domain_means(sides[0]), _domain_means(sides[1]), "domains"
    common = sorted(set(a) & set(b))
    xa, xb = [a[u] for u in common], [b[u] for u in common]
    if not common:
        return values, stats.PairedTest("no records", 0, 0, 0, float("nan"), 1.0), None, units
    gap = stats.paired_difference(xa, xb, seed) if atom.kind.startswith("gap_") else None
    return values, stats.paired_scores(xa, xb), gap, units


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


def _measure_runs(atom: Atom, records: list[ResultRecord]):
    """Each side's fraction of runs with the atom's property (:data:`_RUN_PROPERTY`), Wilson interval."""
    values = {}
    for m in atom.methods:
        runs = schema_runs(records, m, atom.domain)
        values[m] = stats.wilson(sum(_RUN_PROPERTY[atom.metric](r) for r in runs), len(runs))
    return values, None, None, "runs"


def _measure(atom: Atom, data: Measurements, hits: HitMeasurements, seed: int):
    """``(values by side, paired test or None, gap interval or None, unit name)`` of one atom."""
    if atom.is_run:
        return _measure_runs(atom, hits.records)
    if atom.is_hit:
        return _measure_hit(atom, hits, seed)
    coverage = {}
    mats = []
    for m in atom.methods:
        mat, tried = data.matrix(m, atom.split, atom.domain, atom.seed)
        mats.append((mat, tried))
        coverage[m] = stats.proportion_interval(mat, seed) if mat.shape[1] else stats.wilson(0, 0)
    if atom.kind not in PAIRED:
        return coverage, None, None, "problems"
    (a, ta), (b, tb) = mats
    if a.shape[1] == 0 or b.shape[1] == 0:
        return coverage, stats.PairedTest("no records", 0, 0, 0, float("nan"), 1.0), None, "problems"
    both = ta & tb
    gap = None
    if atom.kind.startswith("gap_"):
        gap = stats.paired_difference(a[both].mean(axis=1), b[both].mean(axis=1), seed)
    return coverage, stats.paired_coverage(a[both], b[both], seed), gap, "problems"


def _evaluate(cond: Condition, outcome: Mapping[Atom, bool]) -> bool:
    values = [(_evaluate(p, outcome) if isinstance(p, Condition) else outcome[p]) for p in cond.parts]
    return all(values) if cond.op == "all" else any(values)


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


def evaluate(claim: Claim, records: Iterable[ResultRecord], index: Mapping[tuple[str, str], Iterable[str]],
             seed: int = 0) -> Verdict:
    """The claim's :class:`Verdict` from the result records and the instance index
    (:func:`planarena.report.records.instance_index`); ``seed`` seeds the bootstraps and the
    Monte-Carlo permutation tests."""
    records = list(records)
    data, hits = Measurements(records, index), HitMeasurements(records)
    results: dict[str, list[AtomResult]] = {}
    blocks: dict[str, bool] = {}
    for name in BLOCKS:
        cond: Condition = getattr(claim, name)
        atoms = cond.atoms()
        measured = [_measure(a, data, hits, seed) for a in atoms]
        paired = [i for i, a in enumerate(atoms) if a.kind in ("better", "not_better")]
        adjusted = dict(zip(paired, stats.holm([measured[i][1].p for i in paired])))
        out = []
        for i, (a, (values, test, gap, units)) in enumerate(zip(atoms, measured)):
            first = values[next(iter(values))]
            if a.is_run and not first.n:   # no runs: nothing is shown, neither at least nor at most
                holds = False
            elif a.kind == "at_least":
                holds = first.value >= a.threshold
            elif a.kind == "at_most":
                holds = first.value <= a.threshold
            elif a.kind == "gap_at_most":
                holds = gap is not None and gap.high <= a.threshold
            elif a.kind == "gap_at_least":
                holds = gap is not None and gap.low >= a.threshold
            else:
                better = test.diff > 0 and adjusted[i] < claim.alpha
                holds = better if a.kind == "better" else not better
            out.append(AtomResult(a, bool(holds), values, test, adjusted.get(i), gap, units))
        results[name] = out
        blocks[name] = _evaluate(cond, {r.atom: r.holds for r in out})
    return Verdict(claim.id, decide(blocks), blocks, results)


__all__ = ["AtomResult", "HitMeasurements", "Measurements", "VERDICTS", "Verdict", "decide", "evaluate", "schema_runs"]
