"""Result records -> matrices: the one implementation of the solved matrix and of the Hit@k unit
scores that the report (headline tables, ``planarena compare``, successor ranking) and the claims
(:mod:`planarena.claims.verdict`) compute their statistics on.

**The unit.** Every matrix here has one row per *problem* and one column per evaluation *seed*:
seeds are nested in problems (:data:`UNIT`). A bootstrap resamples the rows, then the columns within
them (:func:`planarena.stats.hierarchical_bootstrap`); a paired test pairs rows of two methods. A
problem is ``(domain, split, problem)`` (:data:`Problem`), in the order of the instance index
(sorted by domain, then split, then problem name).

* :class:`SolvedMatrices`: the ``plan`` records (:func:`planarena.results.records.plan_records_of`)
  as 0/1 matrices ``(problems, seeds)``: 1 when the attempt is solved *and* validated
  (:attr:`planarena.core.records.ResultRecord.counts_as_solved`). The rows are the problems of the
  instance index, so **a problem without a record counts unsolved**; a method's columns are every
  seed it has a record of. Beside each matrix, which problems the method *attempted* (any seed), so
  that paired tests compare two methods where both ran.
* :class:`HitMatrices`: the ``rank_successors`` records as per-unit Hit@k scores by seed
  (:func:`unit_scores`: reference trajectories of the successor-set protocol, queries of the pool
  protocols) and, with the problem as the unit (:meth:`HitMatrices.problem_matrix`), the mean
  Hit@k of each problem's queries under each seed. Pool records name each query's problem in
  ``extra["query_problem"]`` (indices into ``extra["problems"]``); for records that do not, the
  unit falls back to the domain, and the returned matrix says so (``unit == "domains"``).

Nothing here renders or tests: the callers take the matrices to :mod:`planarena.stats`.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Collection, Iterable, Iterator, Mapping, Sequence

import numpy as np

from planarena import stats
from planarena.config import is_held_out
from planarena.core.records import ResultRecord
from planarena.results.records import is_pool_record, latest_records, plan_records_of, record_protocol, record_task

#: The unit of every matrix of this module: a row is one problem, its columns the seeds nested in it.
UNIT = "problem"
#: The protocol name of the successor-set ``rank_successors`` records (the held-out trajectories).
SUCCESSOR_SET = "successor_set"

#: A problem: ``(domain, split, problem)``.
Problem = tuple[str, str, str]
#: Problems per ``(domain, split)``: the instance index (:func:`planarena.results.records.instance_index`).
Index = Mapping[tuple[str, str], Iterable[str]]


class SolvedMatrices:
    """The solved matrices of the ``plan`` records over the problems of an instance index.

    Args:
        records: result records in file order (superseded lines and records of other tasks are
            dropped: :func:`planarena.results.records.plan_records_of`).
        index: problems per ``(domain, split)``
            (:func:`planarena.results.records.instance_index`); None: the problems the records
            name (each ``(domain, split)`` cell with the problems some method has a record of).

    Attributes:
        unit: :data:`UNIT` (a row is a problem, the columns its seeds).
        latest: the latest ``plan`` records, sorted (:func:`planarena.results.records.latest_records`).
        index: problems per ``(domain, split)``, each list sorted.
        seeds: per method, the sorted seeds it has a record of (a method without records: ``[]``).
        evaluated: the ``(domain, split)`` cells some method has a record on.
    """

    unit = UNIT

    def __init__(self, records: Iterable[ResultRecord], index: Index | None = None):
        latest = plan_records_of(records)
        if index is None:
            named: dict[tuple[str, str], set[str]] = defaultdict(set)
            for r in latest:
                named[(r.domain, r.split)].add(r.problem)
            index = named
        self._build(latest, index)

    def _build(self, latest: list[ResultRecord], index: Index) -> None:
        self.latest = latest
        self.index: dict[tuple[str, str], list[str]] = {k: sorted(v) for k, v in index.items()}
        self.seeds: dict[str, list[int]] = defaultdict(list)
        self.evaluated: set[tuple[str, str]] = set()
        #: method -> problem -> seed -> its latest record
        self._records: dict[str, dict[Problem, dict[int, ResultRecord]]] = defaultdict(lambda: defaultdict(dict))
        self._splits: dict[str, set[str]] = defaultdict(set)
        for r in latest:
            if r.seed not in self.seeds[r.method]:
                self.seeds[r.method].append(r.seed)
            self.evaluated.add((r.domain, r.split))
            self._splits[r.split].add(r.method)
            self._records[r.method][(r.domain, r.split, r.problem)][r.seed] = r
        for m in self.seeds:
            self.seeds[m].sort()

    def within(self, cells: Collection[tuple[str, str]]) -> SolvedMatrices:
        """The same records and index restricted to the ``(domain, split)`` ``cells``: records
        elsewhere drop out, and with them the seeds only they had."""
        keep = set(cells)
        out = object.__new__(SolvedMatrices)
        out._build([r for r in self.latest if (r.domain, r.split) in keep],
                   {k: v for k, v in self.index.items() if k in keep})
        return out

    def methods(self, split: str | None = None) -> list[str]:
        """Sorted names of the methods with a record (on ``split`` only, unless None)."""
        if split is None:
            return sorted(self.seeds)
        return sorted(self._splits.get(split, ()))

    def problems(self, split: str, domain: str | None) -> list[Problem]:
        """The problems of ``split`` (of ``domain`` only, unless None) in index order: the rows of
        :meth:`matrix`."""
        return [(d, s, p) for (d, s), probs in sorted(self.index.items())
                if s == split and (domain is None or d == domain) for p in probs]

    def problems_of(self, method: str, seeds: Collection[int] | None = None) -> set[Problem]:
        """The problems ``method`` has a record of (under one of ``seeds``, unless None)."""
        return {p for p, by in self._records.get(method, {}).items()
                if seeds is None or any(s in by for s in seeds)}

    def record(self, method: str, problem: Problem, seed: int) -> ResultRecord | None:
        """The latest ``plan`` record of ``method`` on ``problem`` under ``seed``, or None."""
        return self._records.get(method, {}).get(problem, {}).get(seed)

    def matrix_at(self, method: str, problems: Sequence[Problem],
                  seeds: Sequence[int] | None = None) -> tuple[np.ndarray, np.ndarray]:
        """``(solved (problems, seeds) float 0/1, attempted (problems,) bool)`` of ``method`` over the
        given ``problems`` (rows in their order) and ``seeds`` (columns; None: every seed of the
        method, :attr:`seeds`). A (problem, seed) without a record is 0; ``attempted``: the method
        has a record of the problem under any seed."""
        by = self._records.get(method, {})
        cols = list(self.seeds.get(method, [])) if seeds is None else list(seeds)
        solved = np.array([[p in by and s in by[p] and by[p][s].counts_as_solved for s in cols] for p in problems],
                          dtype=float).reshape(len(problems), len(cols))
        attempted = np.array([p in by for p in problems], dtype=bool)
        return solved, attempted

    def matrix(self, method: str, split: str, domain: str | None,
               seed: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """``(solved (problems, seeds), attempted (problems,))`` over :meth:`problems` of ``split``
        (and ``domain``); a method without records has no seeds (shape ``(problems, 0)``); ``seed``:
        that evaluation seed's column only (none when the method has no record of it)."""
        seeds = [s for s in self.seeds.get(method, []) if seed is None or s == seed]
        return self.matrix_at(method, self.problems(split, domain), seeds)


# -- Hit@k ------------------------------------------------------------------------------------------

def finite(v) -> bool:
    """A finite int or float (not a bool)."""
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def rank_records(records: Iterable[ResultRecord]) -> list[ResultRecord]:
    """Latest ``rank_successors`` records that count: successor-set records of held-out splits
    and pool records, neither ``error``."""
    out = []
    for r in latest_records(records):
        if record_task(r) != "rank_successors" or r.outcome == "error":
            continue
        if is_pool_record(r) or (record_protocol(r) == SUCCESSOR_SET and is_held_out(r.split)):
            out.append(r)
    return out


def unit_scores(records: Iterable[ResultRecord], k: int) -> dict[tuple[str, str], dict[tuple, dict[int, float]]]:
    """Per (method, protocol), the scores of its units by seed: ``{unit: {seed: score}}``.

    Units of the successor-set protocol are held-out reference trajectories ``(domain, split,
    problem, reference plan)`` scored by their Hit@``k`` (the mean over the trajectory's steps);
    units of a pool protocol are its queries ``(domain, split, query index)`` scored 1 when the true
    successor ranks in the top ``k`` (from the records' ``ranks``; records without them give no
    units). Queries of one pool protocol and domain are the same for every method (same pools,
    same tie-breaking draws), so units pair across methods."""
    out: dict[tuple[str, str], dict[tuple, dict[int, float]]] = defaultdict(lambda: defaultdict(dict))
    for r in rank_records(records):
        proto = record_protocol(r)
        extra = r.extra or {}
        if proto == SUCCESSOR_SET:
            v = extra.get(f"hit@{k}")
            if finite(v):
                out[(r.method, proto)][(r.domain, r.split, r.problem, str(extra.get("reference_plan")))][r.seed] = float(v)
        elif isinstance(extra.get("ranks"), list):
            # the split names the training source (cross-domain: "from <domain>"): one test domain
            # has a query list per source, so the source belongs to the unit
            for i, rank in enumerate(extra["ranks"]):
                out[(r.method, proto)][(r.domain, r.split, i)][r.seed] = float(rank < k)
    return out


def unit_matrix(units: Mapping[tuple, Mapping[int, float]]) -> tuple[list[tuple], np.ndarray]:
    """The units present under every seed (sorted) and their ``(units, seeds)`` score matrix
    (seeds sorted; shape ``(0, 0)`` without units)."""
    seeds = sorted(set().union(*(u.keys() for u in units.values()))) if units else []
    keys = sorted(u for u, by in units.items() if all(s in by for s in seeds))
    return keys, np.array([[units[u][s] for s in seeds] for u in keys], dtype=float).reshape(len(keys), len(seeds))


@dataclass(frozen=True)
class ProblemMatrix:
    """Hit@k with the problem as the unit (:meth:`HitMatrices.problem_matrix`).

    Unpacks as ``keys, matrix = ...``.

    Attributes:
        keys: the rows: ``(domain, problem)`` (pool protocols), ``(domain, split, problem)``
            (successor set), or ``(domain,)`` when ``unit == "domains"``.
        matrix: ``(rows, seeds)`` float: the mean Hit@k of the row's queries (pool protocols: over
            every training source too; successor set: over its reference trajectories) under the seed.
        seeds: the columns, sorted.
        unit: ``"problems"``, or ``"domains"`` when some record does not name its queries' problems
            (``extra["query_problem"]``): then each row is one domain.
        seed_pooled: True when the rows were not all tested under every seed (a protocol whose
            held-out problems depend on the seed): ``matrix`` is then ``(rows, 1)``, each row's mean
            over the seeds that tested it, and ``seeds`` the seeds seen.
    """

    keys: list[tuple]
    matrix: np.ndarray
    seeds: list[int] = field(default_factory=list)
    unit: str = "problems"
    seed_pooled: bool = False

    def __iter__(self) -> Iterator:
        return iter((self.keys, self.matrix))


class HitMatrices:
    """Per-query Hit@k scores of the ``rank_successors`` records: per ``(method, protocol)`` the
    units scored under each seed (:func:`unit_scores`), and per problem (:meth:`problem_matrix`).

    Args:
        records: result records in file order (the latest of each attempt is used).

    Attributes:
        unit: :data:`UNIT` of :meth:`problem_matrix` (its rows are problems, the columns seeds).
        records: the records as given (a list).
    """

    unit = UNIT

    def __init__(self, records: Iterable[ResultRecord]):
        self.records = list(records)
        self._by_k: dict[int, dict] = {}
        self._usable: list[ResultRecord] | None = None

    def scores(self, k: int) -> dict[tuple[str, str], dict[tuple, dict[int, float]]]:
        """:func:`unit_scores` of the records at ``k`` (computed once per ``k``)."""
        if k not in self._by_k:
            self._by_k[k] = unit_scores(self.records, k)
        return self._by_k[k]

    def units(self, method: str, protocol: str, k: int, domain: str | None) -> dict[tuple, dict[int, float]]:
        """``{unit: {seed: 0/1}}`` of ``method`` under ``protocol`` (units of ``domain`` only)."""
        units = self.scores(k).get((method, protocol), {})
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

    def problem_matrix(self, method: str, protocol: str, k: int, domain: str | None) -> ProblemMatrix:
        """Hit@``k`` of ``method`` under ``protocol`` with the problem as the unit: a
        :class:`ProblemMatrix` (``keys, matrix = ...``) whose cell is the mean over the problem's
        queries (and training sources) under one seed (of ``domain`` only, unless None).

        Pool protocols read ``extra["ranks"]`` with ``extra["query_problem"]`` (each query's index
        into ``extra["problems"]``); when a record with ranks lacks them, every row is a domain
        instead (``unit == "domains"``). The successor-set protocol's rows are its held-out problems
        ``(domain, split, problem)``, the mean of their trajectories' Hit@k. Rows are the keys
        present under every seed, sorted; no records: empty keys, a ``(0, 0)`` matrix.

        Raises:
            IndexError: a ``query_problem`` index outside its record's ``problems``.
        """
        recs = [r for r in self._rank_records() if r.method == method and record_protocol(r) == protocol
                and (domain is None or r.domain == domain)]
        sums: dict[tuple, dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
        unit = "problems"
        if protocol == SUCCESSOR_SET:
            for r in recs:
                v = (r.extra or {}).get(f"hit@{k}")
                if finite(v):
                    sums[(r.domain, r.split, r.problem)][r.seed].append(float(v))
        else:
            recs = [r for r in recs if isinstance((r.extra or {}).get("ranks"), list)]
            named = all(isinstance(r.extra.get("query_problem"), list) and isinstance(r.extra.get("problems"), list)
                        for r in recs)
            unit = "problems" if named else "domains"
            for r in recs:
                ranks = r.extra["ranks"]
                if named:
                    names, qp = r.extra["problems"], r.extra["query_problem"]
                    for rank, i in zip(ranks, qp):
                        sums[(r.domain, names[i])][r.seed].append(float(rank < k))
                else:
                    sums[(r.domain,)][r.seed] += [float(rank < k) for rank in ranks]
        means = {u: {s: float(np.mean(v)) for s, v in by.items() if v} for u, by in sums.items()}
        keys, mat = unit_matrix(means)
        seeds = sorted(set().union(*(v.keys() for v in means.values()))) if means else []
        if len(keys) < len(means):
            # the held-out problems depend on the seed (Extrapolation's partition is drawn per seed):
            # every problem enters with its mean over the seeds that tested it, one column
            keys = sorted(means)
            mat = np.array([[float(np.mean(list(means[u].values())))] for u in keys], dtype=float).reshape(-1, 1)
            return ProblemMatrix(keys, mat, seeds, unit, seed_pooled=True)
        return ProblemMatrix(keys, mat, seeds, unit)

    def _rank_records(self) -> list[ResultRecord]:
        if self._usable is None:
            self._usable = rank_records(self.records)
        return self._usable

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


#: The names :mod:`planarena.claims.verdict` has used for these classes.
Measurements = SolvedMatrices
HitMeasurements = HitMatrices

__all__ = ["HitMatrices", "HitMeasurements", "Index", "Measurements", "Problem", "ProblemMatrix", "SUCCESSOR_SET",
           "SolvedMatrices", "UNIT", "finite", "rank_records", "unit_matrix", "unit_scores"]
