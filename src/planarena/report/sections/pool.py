"""The candidate-pool subsection of the Hit@k section (the pool protocols of
:mod:`planarena.protocols.pool`, EmbedPlan's Appendix A/B.3).

Reads ``rank_successors`` records whose ``extra.protocol`` is one of
:data:`planarena.protocols.pool.PROTOCOLS` (written by every method whose
``successor_protocols`` include ``pool``) and renders, all from those records:

* the protocol x domain x method table (:data:`POOL_METRICS`, in percent like the paper, mean ±
  population std over seeds of per-seed means);
* the protocol summary (mean over domains of Hit@5 per seed, then mean ± std over seeds) beside
  the reference values of the papers whose published numbers are about this protocol
  (:class:`planarena.report.published.loader.ReferenceColumn`), and the reading of the run against
  them (:mod:`planarena.report.sections.pool_reading`);
* the cross-domain matrix (train domain x test domain, Hit@5) per method;
* the dataset counts of ``data/acp/<domain>/summary.json`` (the paper's Table 7 columns).

What a method's family adds (what it conditions on, whether it is a floor, which published variant
it runs) comes from :class:`planarena.methods.base.ReportTraits`, never from its name.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from planarena.core.records import ResultRecord
from planarena.methods.base import ReportTraits
from planarena.protocols.pool import PROTOCOLS
from planarena.report.markdown import DASH, md_table_numeric
from planarena.report.metrics import metric, seed_means
from planarena.report.published.loader import PAPERS, PublishedPaper
from planarena.report.records import is_pool_record
from planarena.report.sections.pool_reading import reading_notes
from planarena.report.traits import floor_of, role, row_order, section_notes, variant

#: Columns of the protocol x domain table, in order (declared metrics, shown in percent).
POOL_METRICS = ("hit@1", "hit@5", "hit@10", "acc@1", "acc@5", "acc@10", "plan_mean_hit@5",
                "plan_exact_hit@5")  # fmt: skip
#: Display names of the protocols (EmbedPlan's Appendix A).
PROTOCOL_LABELS = {"interpolation": "Interpolation", "plan_variant": "Plan-Variant",
                   "extrapolation": "Extrapolation", "multi_domain": "Multi-Domain",
                   "cross_domain": "Cross-Domain", "leave_one_out": "Leave-One-Out"}  # fmt: skip

INTRO = (
    "Each query is a transition (s, a, s') of the ACPBench-domain datasets (`data/acp`); the "
    "method ranks a pool of `embedplan.pool_size` states (the true s' and distractors drawn "
    "uniformly from the same domain under Interpolation, from the same problem otherwise; "
    "ties broken at random, seeded). Hit@k: s' in the top k. Acc@k: the true action ranks in "
    "the top k among the applicable ground actions of s (action disambiguation; the EmbedPlan "
    "paper ranks every ground action of the domain, so this Acc@k is easier than the paper's and "
    "not comparable with it). The *uniform random ranker* row of each protocol and domain is the "
    "floor: min(k, pool) / pool for Hit@k and the mean of min(k, n) / n over queries with n "
    "applicable actions for Acc@k (with about 3 applicable actions per state, Acc@5 is 100% for "
    "any ranker). Plan "
    "mean/exact Hit@5: teacher-forced along each test plan, the mean of its steps' Hit@5 and "
    "whether every step hits (not defined for Interpolation, whose test set is transitions). "
    "Percent; mean ± population std over seeds of per-seed means. Cross-Domain cells average "
    "over the training domains (matrix below)."
)


def pool_papers(papers: Sequence[PublishedPaper] = PAPERS) -> list[PublishedPaper]:
    """The papers whose published numbers are about the candidate-pool protocols."""
    return [p for p in papers if p.protocol == "pool"]


def _multi_encoder(recs: Sequence[ResultRecord]) -> set[str]:
    """Methods whose pool records come from more than one encoder (their labels name it)."""
    encs: dict[str, set] = defaultdict(set)
    for r in recs:
        encs[r.method].add((r.extra or {}).get("encoder"))
    return {m for m, e in encs.items() if len(e) > 1}


def _label(rec: ResultRecord, multi_encoder: set[str]) -> str:
    enc = (rec.extra or {}).get("encoder")
    return f"{rec.method} [{enc}]" if rec.method in multi_encoder and enc else rec.method


def _fmt(name: str, seeds: Mapping[int, float] | None) -> str:
    """Percent ``"mean ± std"`` over seeds of the metric ``name``, or "–" without values."""
    if not seeds:
        return DASH
    m = metric(name).percent()
    return m.format(*m.aggregate(list(seeds.values())), runs=len(seeds))


def _proto_key(p: str) -> int:
    return PROTOCOLS.index(p) if p in PROTOCOLS else len(PROTOCOLS)


def _usable(records: Iterable[ResultRecord]) -> list[ResultRecord]:
    return [r for r in records if is_pool_record(r) and r.outcome != "error"]


#: the floor row of each (protocol, domain): a ranker that orders the pool (Hit@k) and the
#: applicable actions (Acc@k) uniformly at random
CHANCE_ROW = "*uniform random ranker*"


def _chance(recs: Sequence[ResultRecord]) -> dict[tuple[str, str], dict[str, str]]:
    """(protocol, domain) -> percent cells of the uniform random ranker, from the records'
    ``hit_chance@k`` and ``acc_chance@k`` (mean over the records that have them)."""
    acc: dict[tuple, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for r in recs:
        extra = r.extra or {}
        for m in POOL_METRICS:
            kind, _, k = m.partition("@")
            v = extra.get(f"{kind}_chance@{k}") if kind in ("hit", "acc") else None
            if isinstance(v, (int, float)) and math.isfinite(v):
                acc[(extra.get("protocol"), r.domain)][m].append(float(v))
    return {g: {m: f"{100 * np.mean(v):.1f}" for m, v in vals.items()} for g, vals in acc.items()}


def pool_table(records: Iterable[ResultRecord]) -> pd.DataFrame | None:
    """Protocol x domain x method table (percent; columns protocol, domain, method, inputs, seeds,
    queries/seed, then the titles of :data:`POOL_METRICS`); None without pool records. For
    cross-domain, a domain's cell averages over every training domain (the per-pair values are in
    :func:`cross_domain_matrix`)."""
    recs = _usable(records)
    if not recs:
        return None
    multi = _multi_encoder(recs)
    key = lambda r: ((r.extra or {})["protocol"], r.domain, _label(r, multi))
    by_metric = {m: seed_means(recs, key, m) for m in POOL_METRICS}
    inputs: dict[tuple, set] = defaultdict(set)
    queries: dict[tuple, list] = defaultdict(list)
    for r in recs:
        inputs[key(r)].add(str((r.extra or {}).get("inputs", DASH)))
        queries[key(r)].append(int((r.extra or {}).get("queries", 0)))
    chance = _chance(recs)
    rows = []
    last = None
    for g in sorted(inputs, key=lambda g: (_proto_key(g[0]), g[1], g[2])):
        if g[:2] != last and g[:2] in chance:
            rows.append({"protocol": PROTOCOL_LABELS.get(g[0], g[0]), "domain": g[1], "method": CHANCE_ROW,
                         "inputs": DASH, "seeds": DASH, "queries/seed": DASH,
                         **{metric(m).title: chance[g[:2]].get(m, DASH) for m in POOL_METRICS}})
        last = g[:2]
        seeds = {s for m in POOL_METRICS for s in by_metric[m].get(g, {})}
        row = {"protocol": PROTOCOL_LABELS.get(g[0], g[0]), "domain": g[1], "method": g[2],
               "inputs": "; ".join(sorted(inputs[g])), "seeds": str(len(seeds)),
               "queries/seed": str(int(round(np.mean(queries[g]) * len(queries[g]) / max(1, len(seeds)))))}  # fmt: skip
        for m in POOL_METRICS:
            row[metric(m).title] = _fmt(m, by_metric[m].get(g))
        rows.append(row)
    return pd.DataFrame(rows)


def pool_summary(
    records: Iterable[ResultRecord],
    traits: Mapping[str, ReportTraits] | None = None,
    papers: Sequence[PublishedPaper] | None = None,
) -> pd.DataFrame | None:
    """Protocol x method: Hit@5 (and plan mean Hit@5) as the mean over domains per seed, then mean
    ± std over seeds; then one column per reference column of ``papers`` (default: the published
    papers about the pool protocols). A row gets a reference value only when all its records are
    of the paper's family; a floor row (``traits``) gets the paper's floor value. None without
    pool records."""
    recs = _usable(records)
    if not recs:
        return None
    traits = traits or {}
    papers = pool_papers() if papers is None else list(papers)
    multi = _multi_encoder(recs)
    rows = []
    groups = sorted({((r.extra or {})["protocol"], _label(r, multi)) for r in recs},
                    key=lambda g: (_proto_key(g[0]), g[1]))  # fmt: skip
    for proto, label in groups:
        sub = [r for r in recs if (r.extra or {})["protocol"] == proto and _label(r, multi) == label]
        row = {"protocol": PROTOCOL_LABELS.get(proto, proto), "method": label,
               "domains": str(len({r.domain for r in sub}))}  # fmt: skip
        for m in ("hit@5", "plan_mean_hit@5"):
            dom = seed_means(sub, lambda r: (r.domain,), m)
            seeds = sorted({s for d in dom.values() for s in d})
            row[metric(m).title] = _fmt(
                m, {s: float(np.mean([d[s] for d in dom.values() if s in d])) for s in seeds}
            )
        method = sub[0].method
        floor = floor_of(traits, method)
        if floor is not None:
            row["floor"] = floor
            row["lift over floor (Hit@5)"] = _lift(recs, proto, method, floor)
        for paper in papers:
            own = all(r.family == paper.family for r in sub)
            for col in paper.pool_columns:
                v = col.value(proto, role(traits, method), variant(traits, method)) if own else None
                row[col.title] = DASH if v is None else metric("hit@5").percent().format_value(v)
        rows.append(row)
    return pd.DataFrame(rows).fillna(DASH)


def _lift(recs: Sequence[ResultRecord], proto: str, method: str, floor: str) -> str:
    """``method``'s Hit@5 minus ``floor``'s (percentage points) on ``proto``, over the domains both
    ran, per seed the mean over domains, then the mean over the seeds both ran; "–" without both."""
    def per_seed(m: str) -> dict[int, dict[str, float]]:
        vals = seed_means([r for r in recs if r.method == m and (r.extra or {})["protocol"] == proto],
                          lambda r: r.domain, "hit@5")
        out: dict[int, dict[str, float]] = defaultdict(dict)
        for d, seeds in vals.items():
            for s, v in seeds.items():
                out[s][d] = v
        return out

    mine, base = per_seed(method), per_seed(floor)
    base_mean = {d: float(np.mean([b[d] for b in base.values() if d in b])) for b in base.values() for d in b}
    diffs = [np.mean([v - base_mean[d] for d, v in doms.items() if d in base_mean])
             for doms in mine.values() if any(d in base_mean for d in doms)]
    if not diffs:
        return DASH
    return f"{100 * float(np.mean(diffs)):+.1f} vs `{floor}`"


def cross_domain_matrix(records: Iterable[ResultRecord], method: str) -> pd.DataFrame | None:
    """Train domain (rows) x test domain (columns) Hit@5 (percent, mean over seeds) of ``method``,
    with a ``mean`` column; None without its cross-domain records."""
    recs = [r for r in records if is_pool_record(r) and r.method == method
            and (r.extra or {}).get("protocol") == "cross_domain" and r.outcome != "error"]  # fmt: skip
    if not recs:
        return None
    vals = seed_means(recs, lambda r: ((r.extra or {}).get("train_on"), r.domain), "hit@5")
    domains = sorted({d for pair in vals for d in pair})
    rows = []
    for a in domains:
        row = {"train \\ test": a}
        line = []
        for b in domains:
            v = vals.get((a, b))
            row[b] = DASH if not v else f"{100 * np.mean(list(v.values())):.1f}"
            if v:
                line.append(100 * np.mean(list(v.values())))
        row["mean"] = f"{np.mean(line):.1f}" if line else DASH
        rows.append(row)
    return pd.DataFrame(rows)


def dataset_counts(acp_dir: Path) -> pd.DataFrame | None:
    """Per domain, the Table 7 columns from ``data/acp/<domain>/summary.json`` (None if absent)."""
    rows = []
    for f in sorted(Path(acp_dir).glob("*/summary.json")):
        try:
            s = json.loads(f.read_text())
        except (OSError, json.JSONDecodeError):
            continue
        skipped = s.get("skipped") or []
        rows.append({"domain": f.parent.name, "problems": s.get("problems", DASH), "states": s.get("states", DASH),
                     "transitions": s.get("transitions", DASH), "actions (schemas)": s.get("actions", DASH),
                     "optimal plans": s.get("plans", DASH), "skipped problems": len(skipped)})  # fmt: skip
    return pd.DataFrame(rows) if rows else None


def training_overlap(records: Iterable[ResultRecord]) -> pd.DataFrame | None:
    """Per domain (rows) and protocol (columns), the test transitions whose exact (s, a, s') triple
    occurs in the training transitions and were left out of Hit@k / Acc@k: ``seen of test (pct)``
    from the records' ``extra.seen_in_training`` and ``extra.test_transitions`` (the cell's test
    transitions before filtering). Records of a cell normally agree; where they do not, the
    range is shown. None when no pool record reports the two counts."""
    pairs: dict[tuple[str, str], set[tuple[int, int]]] = defaultdict(set)
    for r in _usable(records):
        extra = r.extra or {}
        seen, total = extra.get("seen_in_training"), extra.get("test_transitions")
        if isinstance(seen, int) and isinstance(total, int) and not isinstance(seen, bool):
            pairs[(extra["protocol"], r.domain)].add((seen, total))
    if not pairs:
        return None
    protos = sorted({p for p, _ in pairs}, key=_proto_key)
    rows = []
    for domain in sorted({d for _, d in pairs}):
        row = {"domain": domain}
        for p in protos:
            vals = pairs.get((p, domain))
            if not vals:
                row[PROTOCOL_LABELS.get(p, p)] = DASH
                continue
            seen = sorted({v for v, _ in vals})
            total = sorted({t for _, t in vals})
            span = lambda xs: f"{xs[0]:,}" if len(xs) == 1 else f"{xs[0]:,}–{xs[-1]:,}"
            pct = f" ({100 * seen[0] / total[0]:.1f} %)" if len(vals) == 1 and total[0] else ""
            row[PROTOCOL_LABELS.get(p, p)] = f"{span(seen)} of {span(total)}{pct}"
        rows.append(row)
    return pd.DataFrame(rows, columns=["domain", *(PROTOCOL_LABELS.get(p, p) for p in protos)])


def summary_pivot(summary: pd.DataFrame, column: str, methods: Sequence[str] = ()) -> pd.DataFrame:
    """One column of :func:`pool_summary` pivoted: a row per method (``methods`` first, in that
    order, then the others as the summary lists them), a column per protocol; "–" where the
    method does not run the protocol."""
    protos = list(dict.fromkeys(summary["protocol"]))
    order = [m for m in methods if m in set(summary["method"])]
    order += [m for m in dict.fromkeys(summary["method"]) if m not in order]
    cells = {(r["method"], r["protocol"]): r.get(column, DASH) for r in summary.to_dict("records")}
    rows = [{"method": m, **{p: cells.get((m, p), DASH) for p in protos}} for m in order]
    return pd.DataFrame(rows, columns=["method", *protos]).fillna(DASH)


@dataclass
class Pool:
    """Everything the candidate-pool page shows (see :func:`analyse`)."""

    table: pd.DataFrame
    summary: pd.DataFrame
    inputs_notes: list[str]
    summary_notes: list[str]
    reading: list[str]
    matrices: list[tuple[str, pd.DataFrame]]
    counts: pd.DataFrame | None
    methods: list[str] = field(default_factory=list)
    overlap: pd.DataFrame | None = None


def analyse(
    records: Sequence[ResultRecord],
    traits: Mapping[str, ReportTraits] | None = None,
    acp_dir: Path | None = None,
    papers: Sequence[PublishedPaper] | None = None,
) -> Pool | None:
    """Every table of the page from the latest records; None without pool records.

    ``traits``: by method (roles, variants and the families' notes for this subsection);
    ``acp_dir``: ``data/acp`` for the dataset counts (None: no counts); ``papers``: the published
    papers about the pool protocols (default: :func:`pool_papers`).
    """
    traits = traits or {}
    papers = pool_papers() if papers is None else list(papers)
    table = pool_table(records)
    if table is None:
        return None
    families: dict[str, set[str]] = defaultdict(set)
    for r in records:
        if is_pool_record(r):
            families[r.family].add(r.method)
    matrices = []
    for method in sorted({r.method for r in records if is_pool_record(r)}):
        m = cross_domain_matrix(records, method)
        if m is not None:
            matrices.append((method, m))
    family = {m: f for f, ms in families.items() for m in ms}
    return Pool(
        table=table,
        summary=pool_summary(records, traits, papers),
        inputs_notes=section_notes(traits, "pool", families),
        summary_notes=[p.pool_note for p in papers if p.pool_note],
        reading=[n for p in papers for n in reading_notes(records, traits, p)],
        matrices=matrices,
        counts=dataset_counts(acp_dir) if acp_dir is not None else None,
        methods=row_order(family, family, traits),
        overlap=training_overlap(records),
    )


#: The measured columns of :func:`pool_summary` the page pivots (the published ones are on the
#: published page, :func:`published_summary`).
SUMMARY_PIVOTS = (("Hit@5", "Hit@5 (%)"), ("Plan mean Hit@5", "Plan mean Hit@5 (%)"),
                  ("lift over floor (Hit@5)", "Lift over the floor of the method's encoding, Hit@5 (points)"))  # fmt: skip


def published_summary(pool: Pool | None) -> pd.DataFrame | None:
    """The rows of :func:`pool_summary` that have a published value, with the measured Hit@5 beside
    the papers' reference columns (protocol, method, Hit@5, plan mean Hit@5, published ...);
    None without pool records or published columns."""
    if pool is None or pool.summary is None:
        return None
    published = [c for c in pool.summary.columns if str(c).startswith("published")]
    if not published:
        return None
    summary = pool.summary
    keep = (summary[published] != DASH).any(axis=1)
    # the floor each kept row is measured against (e.g. the identity predictor of its encoding)
    # stays beside it, with no published value of its own
    lift = "lift over floor (Hit@5)"
    if "floor" in summary.columns:
        floors = set(zip(summary.loc[keep, "protocol"], summary.loc[keep, "floor"]))
        keep |= pd.Series([(p, m) in floors for p, m in zip(summary["protocol"], summary["method"])],
                          index=summary.index)
    cols = ["protocol", "method", "Hit@5", "Plan mean Hit@5", lift, *published]
    return summary.loc[keep, [c for c in cols if c in summary.columns]].rename(
        columns={"Hit@5": "measured Hit@5", "Plan mean Hit@5": "measured plan mean Hit@5",
                 lift: "measured lift over floor (Hit@5, points)"})


def render(pool: Pool | None) -> list[str]:
    """Markdown lines of the candidate-pool page's section (empty without pool records)."""
    if pool is None:
        return []
    inputs = " ".join(["The `inputs` column says what each method sees.", *pool.inputs_notes])
    out = ["## Candidate-pool Hit@k (EmbedPlan protocols)", "", INTRO, "", inputs, ""]
    out += ["### By protocol (mean over domains)", "",
            "Per seed the mean over domains, then mean ± population std over seeds; a row per method, "
            "a column per protocol. The published values of the papers are on the published page.", ""]
    for column, title in SUMMARY_PIVOTS:
        if column in pool.summary.columns:
            out += [f"{title}:", "", md_table_numeric(summary_pivot(pool.summary, column, pool.methods)), ""]
    if pool.overlap is not None:
        out += ["### Test transitions seen in training (excluded)", "",
                "Test transitions of each cell whose exact (s, a, s') triple occurs in the training "
                "transitions: left out of Hit@k and Acc@k (`queries/seed` counts the scored ones). "
                "`seen of test (share)`, from the records.", "",
                md_table_numeric(pool.overlap), ""]
    out += ["### By protocol and domain", "", md_table_numeric(pool.table), ""]
    for method, m in pool.matrices:
        out += [f"### Cross-Domain matrix, Hit@5 (%): `{method}`", "", md_table_numeric(m), ""]
    if pool.counts is not None:
        out += ["### Transition datasets (the paper's Table 7 columns)", "",
                "States: all states of the expanded state spaces; transitions: unique (s, a, s') "
                "on the stored optimal plans; skipped: problems over `acp.max_states` or without "
                "a reachable goal (reasons in `data/acp/<domain>/summary.json`).", "",
                md_table_numeric(pool.counts), ""]  # fmt: skip
    return out


def render_pool_md(
    records: Sequence[ResultRecord],
    acp_dir: Path | None = None,
    traits: Mapping[str, ReportTraits] | None = None,
) -> list[str]:
    """Markdown lines of the subsection from the latest records (see :func:`analyse`)."""
    return render(analyse(records, traits, acp_dir))
