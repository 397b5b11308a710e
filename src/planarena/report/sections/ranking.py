"""Front-page section "Successor ranking": one table per Hit@k (Hit@5, Hit@1), a row per method
with ``rank_successors`` records and a column per protocol, with the uniform-random-ranker row.

Columns: the successor-set protocol (:mod:`planarena.protocols.successor_set`) over held-out
trajectories, then the candidate-pool protocols (:data:`planarena.protocols.pool.PROTOCOLS`).

* successor set: per seed the mean of ``extra["hit@k"]`` over the method's held-out trajectories,
  then mean ± population std over seeds (the number ``metrics.json`` calls
  ``hit@1_successor_set``); chance: the mean of the records' ``hit_chance@k`` over the distinct
  held-out trajectories of every method;
* pool protocols: per seed the mean over domains of the per-domain mean (as the pool summary),
  then mean ± std over seeds; chance: the mean over domains of the records' ``hit_chance@k``.

All in percent (:meth:`Metric.percent`); best per column in bold (:meth:`Metric.best`); floors
(:attr:`ReportTraits.role`) are ordinary rows, marked, placed before the models of their floor
group (:func:`planarena.report.traits.row_order`).
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from planarena.core.records import ResultRecord
from planarena.methods.base import ReportTraits
from planarena.protocols.pool import PROTOCOLS
from planarena.report.markdown import DASH, md_table
from planarena.report.metrics import metric, seed_means
from planarena.report.records import record_protocol
# the units and their scores are the results layer's (one implementation, shared with the claims)
from planarena.results.matrices import SUCCESSOR_SET, HitMatrices, unit_scores  # noqa: F401  (re-exported)
from planarena.results.matrices import finite as _finite
from planarena.results.matrices import rank_records as _usable
from planarena.results.matrices import unit_matrix as _matrix
from planarena.report.sections.pool import PROTOCOL_LABELS
from planarena import stats
from planarena.report.traits import PLAIN, floor_of, method_label, row_order, twins_of

#: The successor-set column's title (the protocol name is :data:`planarena.results.matrices.SUCCESSOR_SET`).
COLUMN_TITLES = {SUCCESSOR_SET: "Successor set (held-out)", **PROTOCOL_LABELS}
#: The Hit@k tables of the front page, in order.
HEADLINE_KS = (5, 1)
CHANCE_ROW = "*uniform random ranker*"


def ranking_cells(records: Iterable[ResultRecord], ks: Sequence[int] = HEADLINE_KS) -> pd.DataFrame:
    """Long table of the headline numbers: columns method, family, protocol, k, per_seed (tuple of
    per-seed fractions, seed order), chance (fraction or NaN). A row with ``method`` None carries
    the protocol's chance only. Empty without usable ``rank_successors`` records."""
    recs = _usable(records)
    rows = []
    protos = [p for p in (SUCCESSOR_SET, *PROTOCOLS) if any(record_protocol(r) == p for r in recs)]
    family = {r.method: r.family for r in recs}
    for proto in protos:
        sub = [r for r in recs if record_protocol(r) == proto]
        for k in ks:
            key = f"hit@{k}"
            if proto == SUCCESSOR_SET:
                per_method = seed_means(sub, lambda r: r.method, key)
                per_seed = {m: tuple(v for _, v in sorted(seeds.items())) for m, seeds in per_method.items()}
                trajs: dict[tuple, float] = {}
                for r in sub:
                    v = (r.extra or {}).get(f"hit_chance@{k}")
                    if _finite(v):
                        trajs.setdefault((r.domain, r.split, r.problem, str((r.extra or {}).get("reference_plan"))), v)
                chance = float(np.mean(list(trajs.values()))) if trajs else math.nan
            else:
                per_dom = seed_means(sub, lambda r: (r.method, r.domain), key)
                by_method: dict[str, dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
                for (m, _), seeds in per_dom.items():
                    for s, v in seeds.items():
                        by_method[m][s].append(v)
                per_seed = {m: tuple(float(np.mean(v)) for _, v in sorted(seeds.items()))
                            for m, seeds in by_method.items()}
                dom: dict[str, list[float]] = defaultdict(list)
                for r in sub:
                    v = (r.extra or {}).get(f"hit_chance@{k}")
                    if _finite(v):
                        dom[r.domain].append(float(v))
                chance = float(np.mean([np.mean(v) for v in dom.values()])) if dom else math.nan
            rows.append(dict(method=None, family="", protocol=proto, k=k, per_seed=(), chance=chance))
            for m, vals in per_seed.items():
                rows.append(dict(method=m, family=family[m], protocol=proto, k=k, per_seed=vals, chance=math.nan))
    return pd.DataFrame(rows, columns=["method", "family", "protocol", "k", "per_seed", "chance"])


def hit_intervals(records: Iterable[ResultRecord], k: int, seed: int = 0) -> dict[tuple[str, str], stats.Interval]:
    """Per (method, protocol), Hit@``k`` (a fraction) with its 95 % interval: the hierarchical
    bootstrap over trajectories then seeds (successor set), or over queries within each domain
    then seeds, the value being the mean over domains (pool protocols; :func:`stats.stratified_bootstrap`).
    Pairs without per-unit scores (pool records written before ``ranks`` were recorded) are absent."""
    out = {}
    for key, units in unit_scores(records, k).items():
        keys, mat = _matrix(units)
        if not keys:
            continue
        if key[1] == SUCCESSOR_SET:
            out[key] = stats.hierarchical_bootstrap(mat, seed)
        else:
            domains = sorted({u[0] for u in keys})
            out[key] = stats.stratified_bootstrap([mat[[i for i, u in enumerate(keys) if u[0] == d]] for d in domains], seed)
    return out


@dataclass
class HitFloorTests:
    """The Hit@k *above floor* tests of one learned row against each of its floors: the floor of its
    floor group and its untrained twins (:func:`planarena.report.traits.twins_of`).

    Attributes:
        pooled: ``(floor, test, Holm-adjusted p)`` per floor, over every protocol both ran (Holm
            across rows and floors).
        by_protocol: the same per protocol (column title -> list of such triples), a second Holm
            family across rows, floors and protocols: a row can learn the Interpolation protocol
            and not Cross-Domain (EmbedPlan, Table 18).
    """

    pooled: list[tuple[str, stats.PairedTest, float]] = field(default_factory=list)
    by_protocol: dict[str, list[tuple[str, stats.PairedTest, float]]] = field(default_factory=dict)


def floor_tests(records: Iterable[ResultRecord], traits: Mapping[str, ReportTraits], k: int = 5,
                seed: int = 0) -> dict[str, HitFloorTests]:
    """Each learned ``rank_successors`` row against each of its floors (its group's floor,
    :func:`planarena.report.traits.floor_of`, and its untrained twins): the Wilcoxon signed-rank
    test of per-**problem** Hit@``k`` (the mean over the problem's queries and seeds,
    :meth:`planarena.results.HitMatrices.problem_matrix`: copying a query adds nothing) on the
    problems both scored, pooled over every protocol both ran and per protocol
    (:class:`HitFloorTests`); each family Holm-corrected across the rows. ``seed`` is unused (the
    Wilcoxon test is not resampled) and kept for a uniform signature."""
    hits = HitMatrices(records)
    scores = hits.scores(k)
    protos_of: dict[str, list[str]] = defaultdict(list)
    for m, proto in sorted(scores):
        protos_of[m].append(proto)
    per_problem: dict[tuple[str, str], dict] = {}

    def means(m: str, proto: str) -> dict:
        if (m, proto) not in per_problem:
            keys, mat = hits.problem_matrix(m, proto, k, None)
            per_problem[(m, proto)] = {u: float(row.mean()) for u, row in zip(keys, mat) if row.size}
        return per_problem[(m, proto)]

    pooled, parts = [], []
    for m in sorted(protos_of):
        if traits.get(m, PLAIN).role != "model":
            continue
        floors = [f for f in [floor_of(traits, m), *twins_of(traits, m)] if f]
        for f in dict.fromkeys(floors):
            a, b = [], []
            for proto in protos_of[m]:
                if proto not in protos_of.get(f, ()):
                    continue
                mine, other = means(m, proto), means(f, proto)
                both = sorted(set(mine) & set(other))
                pa, pb = [mine[u] for u in both], [other[u] for u in both]
                a += pa
                b += pb
                if pa:
                    parts.append((m, f, COLUMN_TITLES.get(proto, proto), stats.paired_scores(pa, pb)))
            if a:
                pooled.append((m, f, stats.paired_scores(a, b)))
    out: dict[str, HitFloorTests] = {}
    for (m, f, t), p in zip(pooled, stats.holm([t.p for _, _, t in pooled])):
        out.setdefault(m, HitFloorTests()).pooled.append((f, t, p))
    # a row with one protocol has nothing to break down: its pooled test is that protocol's
    parts = [x for x in parts if sum(y[0] == x[0] and y[1] == x[1] for y in parts) > 1]
    for (m, f, proto, t), p in zip(parts, stats.holm([t.p for *_, t in parts])):
        out[m].by_protocol.setdefault(proto, []).append((f, t, p))
    return out


#: The column that reads each learned row against its untrained twin(s) (as the coverage tables do).
TWIN_COLUMN = "vs untrained twin"


def format_hit_twin(tests: HitFloorTests | None, traits: Mapping[str, ReportTraits], m: str) -> str:
    """The *vs untrained twin* cell of a ranking row: per twin, ``yes`` / ``below`` / ``at twin``
    with its Holm-adjusted p from the pooled Hit@5 test (:func:`floor_tests`); ``no twin records``
    for a learned row whose twins have none; ``"–"`` for floors."""
    twins = twins_of(traits, m)
    if traits.get(m, PLAIN).role != "model" or not twins:
        return DASH
    got = {f: (t, p) for f, t, p in (tests.pooled if tests else []) if f in twins}
    if not got:
        return "no twin records"
    parts = []
    for twin, (t, p) in got.items():
        word = "yes" if t.diff > 0 and p < stats.ALPHA else "below" if t.diff < 0 and p < stats.ALPHA else "at twin"
        label = twin[len(m) + 1:] if twin.startswith(m + "_") else twin
        parts.append(f"{label + ': ' if len(got) > 1 else ''}{word} ({stats.format_p(p)})")
    return "; ".join(parts)


def format_hit_floor(tests: HitFloorTests | None) -> str:
    """The *above floor* cell of a ranking row: above every floor, twin included
    (:func:`planarena.stats.verdict`, protocols in the place of domains)."""
    return stats.verdict(tests.pooled, tests.by_protocol) if tests else DASH


def ranking_table(cells: pd.DataFrame, k: int, traits: Mapping[str, ReportTraits] | None = None,
                  intervals: Mapping[tuple[str, str], stats.Interval] | None = None,
                  floors: Mapping[str, HitFloorTests] | None = None) -> pd.DataFrame | None:
    """Hit@``k`` in percent, pivoted: the chance row, then a row per method (headline order), a
    column per protocol; "–" where the method does not run the protocol. None without cells."""
    traits = traits or {}
    cells = cells[cells["k"] == k]
    if cells.empty:
        return None
    m_k = metric(f"hit@{k}").percent()
    protos = list(dict.fromkeys(cells["protocol"]))
    named = cells[cells["method"].notna()]
    family = dict(zip(named["method"], named["family"], strict=True))
    methods = row_order(dict.fromkeys(named["method"]), family, traits)
    by = {(r.method, r.protocol): r.per_seed for r in named.itertuples(index=False)}
    chance = {r.protocol: r.chance for r in cells[cells["method"].isna()].itertuples(index=False)}
    agg = {key: m_k.aggregate(v) for key, v in by.items() if v}
    titles = {p: COLUMN_TITLES.get(p, p) for p in protos}
    rows = [{"method": CHANCE_ROW, **{titles[p]: DASH if math.isnan(chance.get(p, math.nan))
                                      else m_k.format_value(100 * chance[p]) for p in protos},
             **({"above floor": DASH, TWIN_COLUMN: DASH} if floors is not None else {})}]
    best = {p: m_k.best({m: agg[(m, p)][0] for m in methods if (m, p) in agg}) for p in protos}
    for m in methods:
        row = {"method": method_label(traits, m)}
        for p in protos:
            s = agg.get((m, p))
            if s is None:
                row[titles[p]] = DASH
                continue
            text = m_k.format(*s, bold=False, runs=len(by[(m, p)]))
            iv = (intervals or {}).get((m, p))
            if iv is not None:
                text = (f"{m_k.format_value(s[0])} {stats.format_interval(iv, '.1f', 100)} "
                        f"(n={iv.n:,}, {iv.runs} run{'s' if iv.runs > 1 else ''})")
            row[titles[p]] = f"**{text}**" if m in best[p] else text
        if floors is not None:
            row["above floor"] = format_hit_floor(floors.get(m))
            row[TWIN_COLUMN] = format_hit_twin(floors.get(m), traits, m)
        rows.append(row)
    return pd.DataFrame(rows, columns=["method", *titles.values(),
                                       *(["above floor", TWIN_COLUMN] if floors is not None else [])])


DESCRIPTION = (
    "Percent, mean ± population std over seeds. Successor set: the true successor among all "
    "successors of each step of held-out reference trajectories (optimal and LAMA plans together; "
    "kept apart, per domain and split, on [the Hit@k page]({hitk})). Pool protocols (EmbedPlan's "
    "Appendix A): the true successor among a pool of candidate states, mean over domains "
    "([per domain, lifts over each encoding's floor, training overlap]({pool})). The "
    f"{CHANCE_ROW} row is each column's chance level from the records; *(floor)* rows are "
    "floors (an identity predictor z' = z_s per encoding, an untrained network). Best per column "
    f'in bold. "{DASH}": the method does not run that protocol. Intervals (95 %): a bootstrap over '
    "trajectories then seeds (successor set), or over the queries of each domain then seeds (pool; "
    "n = queries); seeded from params. *Above floor* (Hit@5): the row beats every floor of its own, the "
    "floor of its encoding and its untrained twin (the same network, no training), by the Wilcoxon "
    "signed-rank test on per-problem Hit@5 (the mean of the problem's queries and seeds) over every "
    "protocol both run (\"yes\"), or on the protocols named (each protocol its own test, a second Holm "
    "family), Holm-corrected across rows and floors."
)


def render(cells: pd.DataFrame, traits: Mapping[str, ReportTraits] | None = None,
           links: Mapping[str, str] | None = None, records: Sequence[ResultRecord] = (),
           seed: int = 0) -> list[str]:
    """Front-page markdown lines: one table per :data:`HEADLINE_KS`; a sentence without
    ``rank_successors`` results. ``links``: ``hitk`` and ``pool`` page paths for the caption;
    ``records``: the result records, for the cells' intervals and the Hit@5 floor tests
    (:func:`hit_intervals`, :func:`floor_tests`); ``seed`` seeds their resampling."""
    links = {"hitk": "detail/hitk.md", "pool": "detail/pool.md", **(links or {})}
    out = ["## Successor ranking", ""]
    tables = [(k, ranking_table(cells, k, traits, hit_intervals(records, k, seed) if records else None,
                                floor_tests(records, traits or {}, k, seed) if records and k == 5 else None))
              for k in HEADLINE_KS]
    if all(t is None for _, t in tables):
        return out + ["No `rank_successors` method has results yet."]
    out.append(DESCRIPTION.format(**links))
    for k, t in tables:
        if t is not None:
            out += ["", f"Hit@{k} (%):", "", md_table(t)]
    return out
