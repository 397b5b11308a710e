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
from typing import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from planarena.config import is_held_out
from planarena.core.records import ResultRecord
from planarena.methods.base import ReportTraits
from planarena.protocols.pool import PROTOCOLS
from planarena.report.markdown import DASH, md_table
from planarena.report.metrics import metric, seed_means
from planarena.report.records import is_pool_record, latest_records, record_protocol, record_task
from planarena.report.sections.pool import PROTOCOL_LABELS
from planarena.report.traits import method_label, row_order

#: The successor-set column's protocol name and title.
SUCCESSOR_SET = "successor_set"
COLUMN_TITLES = {SUCCESSOR_SET: "Successor set (held-out)", **PROTOCOL_LABELS}
#: The Hit@k tables of the front page, in order.
HEADLINE_KS = (5, 1)
CHANCE_ROW = "*uniform random ranker*"


def _usable(records: Iterable[ResultRecord]) -> list[ResultRecord]:
    """Latest ``rank_successors`` records that count: successor-set records of held-out splits
    and pool records, neither ``error``."""
    out = []
    for r in latest_records(records):
        if record_task(r) != "rank_successors" or r.outcome == "error":
            continue
        if is_pool_record(r) or (record_protocol(r) == SUCCESSOR_SET and is_held_out(r.split)):
            out.append(r)
    return out


def _finite(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


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


def ranking_table(cells: pd.DataFrame, k: int, traits: Mapping[str, ReportTraits] | None = None) -> pd.DataFrame | None:
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
    stats = {key: m_k.aggregate(v) for key, v in by.items() if v}
    titles = {p: COLUMN_TITLES.get(p, p) for p in protos}
    rows = [{"method": CHANCE_ROW, **{titles[p]: DASH if math.isnan(chance.get(p, math.nan))
                                      else m_k.format_value(100 * chance[p]) for p in protos}}]
    best = {p: m_k.best({m: stats[(m, p)][0] for m in methods if (m, p) in stats}) for p in protos}
    for m in methods:
        row = {"method": method_label(traits, m)}
        for p in protos:
            s = stats.get((m, p))
            row[titles[p]] = DASH if s is None else m_k.format(*s, bold=m in best[p], runs=len(by[(m, p)]))
        rows.append(row)
    return pd.DataFrame(rows, columns=["method", *titles.values()])


DESCRIPTION = (
    "Percent, mean ± population std over seeds. Successor set: the true successor among all "
    "successors of each step of held-out reference trajectories (optimal and LAMA plans together; "
    "kept apart, per domain and split, on [the Hit@k page]({hitk})). Pool protocols (EmbedPlan's "
    "Appendix A): the true successor among a pool of candidate states, mean over domains "
    "([per domain, lifts over each encoding's floor, training overlap]({pool})). The "
    f"{CHANCE_ROW} row is each column's chance level from the records; *(floor)* rows are "
    "floors (an identity predictor z' = z_s per encoding, an untrained network). Best per column "
    f'in bold. "{DASH}": the method does not run that protocol.'
)


def render(cells: pd.DataFrame, traits: Mapping[str, ReportTraits] | None = None,
           links: Mapping[str, str] | None = None) -> list[str]:
    """Front-page markdown lines: one table per :data:`HEADLINE_KS`; a sentence without
    ``rank_successors`` results. ``links``: ``hitk`` and ``pool`` page paths for the caption."""
    links = {"hitk": "detail/hitk.md", "pool": "detail/pool.md", **(links or {})}
    out = ["## Successor ranking", ""]
    tables = [(k, ranking_table(cells, k, traits)) for k in HEADLINE_KS]
    if all(t is None for _, t in tables):
        return out + ["No `rank_successors` method has results yet."]
    out.append(DESCRIPTION.format(**links))
    for k, t in tables:
        if t is not None:
            out += ["", f"Hit@{k} (%):", "", md_table(t)]
    return out
