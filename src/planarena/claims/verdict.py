"""A claim's verdict from records: ``confirmed``, ``refuted`` or ``inconclusive``.

The gate is evaluated first: if it fails, the models are not competent enough for the test to mean
anything and the verdict is ``inconclusive``. Otherwise ``confirmed`` when the confirm condition
holds, ``refuted`` when the refute condition holds, and ``inconclusive`` when neither does (or, which
a well-written claim never allows, both). Every atom is computed from the result records only
(:mod:`planarena.claims.spec` lists the atoms): coverage is the fraction of attempts solved and
validated (problems x seeds, a missing record counts unsolved) with its 95 % interval, and the paired
atoms use :func:`planarena.stats.paired_coverage` on the problems both methods attempted, Holm-
corrected over the paired atoms of one block.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import asdict, dataclass
from typing import Iterable, Mapping

import numpy as np

from planarena import stats
from planarena.claims.spec import BLOCKS, Atom, Claim, Condition
from planarena.core.records import ResultRecord
from planarena.report.records import plan_records_of

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

    def describe(self) -> str:
        """One line: the atom, each method's ``value [low, high] k/N``, the test, and the outcome."""
        cells = "; ".join(f"`{m}` {iv.value:.2f} {stats.format_interval(iv)} "
                          f"{round(iv.value * iv.n * iv.runs)}/{iv.n * iv.runs}" for m, iv in self.coverage.items())
        test = ""
        if self.test is not None:
            test = (f"; {self.test.test}: A better on {self.test.a_better}, B on {self.test.b_better} of "
                    f"{self.test.n} problems, Holm {stats.format_p(self.p)}")
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
                           **({"test": asdict(r.test), "holm_p": r.p} if r.test else {})}
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

    def matrix(self, method: str, split: str, domain: str | None) -> tuple[np.ndarray, np.ndarray]:
        """``(solved (problems, seeds), attempted (problems,))``; a method without records has no
        seeds (shape ``(problems, 0)``)."""
        probs = self.problems(split, domain)
        seeds = self.seeds.get(method, [])
        mat = np.array([[(method, s, *p) in self.solved for s in seeds] for p in probs], dtype=float)
        tried = np.array([(method, *p) in self.tried for p in probs], dtype=bool)
        return mat.reshape(len(probs), len(seeds)), tried


def _measure(atom: Atom, data: Measurements, seed: int) -> tuple[dict, stats.PairedTest | None]:
    coverage = {}
    mats = []
    for m in atom.methods:
        mat, tried = data.matrix(m, atom.split, atom.domain)
        mats.append((mat, tried))
        coverage[m] = stats.proportion_interval(mat, seed) if mat.shape[1] else stats.wilson(0, 0)
    if atom.kind not in ("better", "not_better"):
        return coverage, None
    (a, ta), (b, tb) = mats
    if a.shape[1] == 0 or b.shape[1] == 0:
        return coverage, stats.PairedTest("no records", 0, 0, 0, float("nan"), 1.0)
    both = ta & tb
    return coverage, stats.paired_coverage(a[both], b[both], seed)


def _evaluate(cond: Condition, outcome: Mapping[Atom, bool]) -> bool:
    values = [(_evaluate(p, outcome) if isinstance(p, Condition) else outcome[p]) for p in cond.parts]
    return all(values) if cond.op == "all" else any(values)


def evaluate(claim: Claim, records: Iterable[ResultRecord], index: Mapping[tuple[str, str], Iterable[str]],
             seed: int = 0) -> Verdict:
    """The claim's :class:`Verdict` from the result records and the instance index
    (:func:`planarena.report.records.instance_index`); ``seed`` seeds the bootstraps and the
    Monte-Carlo permutation tests."""
    data = Measurements(records, index)
    results: dict[str, list[AtomResult]] = {}
    blocks: dict[str, bool] = {}
    for name in BLOCKS:
        cond: Condition = getattr(claim, name)
        atoms = cond.atoms()
        measured = [_measure(a, data, seed) for a in atoms]
        paired = [i for i, a in enumerate(atoms) if a.kind in ("better", "not_better")]
        adjusted = dict(zip(paired, stats.holm([measured[i][1].p for i in paired])))
        out = []
        for i, (a, (cov, test)) in enumerate(zip(atoms, measured)):
            if a.kind == "at_least":
                holds = cov[a.methods[0]].value >= a.threshold
            elif a.kind == "at_most":
                holds = cov[a.methods[0]].value <= a.threshold
            else:
                better = test.diff > 0 and adjusted[i] < claim.alpha
                holds = better if a.kind == "better" else not better
            out.append(AtomResult(a, bool(holds), cov, test, adjusted.get(i)))
        results[name] = out
        blocks[name] = _evaluate(cond, {r.atom: r.holds for r in out})
    if not blocks["gate"]:
        verdict = "inconclusive"
    elif blocks["confirm"] and not blocks["refute"]:
        verdict = "confirmed"
    elif blocks["refute"] and not blocks["confirm"]:
        verdict = "refuted"
    else:
        verdict = "inconclusive"
    return Verdict(claim.id, verdict, blocks, results)


__all__ = ["AtomResult", "Measurements", "VERDICTS", "Verdict", "evaluate"]
