"""Section "Schema learning": ``learn_schema`` records (docs/concepts.md#tasks: precision,
recall, N_s/N_c/N_sc), each value a declared metric of :mod:`planarena.report.metrics`.

One ``learn_schema`` record is one run (method, domain, seed): the learned domain's ``precision``
and ``recall`` over the successor sets of the test states (``extra``: ``precision``, ``recall``,
``sound``, ``complete``, ``tp``/``fp``/``fn``, ``test_states``, and the run's setting:
``observation``, ``effects``, ``noise``). :func:`schema_table` is the section's table (rows: domains;
a column group per method: precision and recall mean ± std over runs, N_s / N_c / N_sc as
"k/n" runs); :func:`side_by_side_table` sets a method's cells beside a published schema-learning
table (:class:`planarena.report.published.loader.PublishedSchemaTable`); :func:`render` writes the
schema-learning page and :func:`render_published` the subsection of the published page (numbers
copied from papers stay on that page). Methods whose role
(:attr:`planarena.methods.base.ReportTraits.role`, or the records' ``extra["role"]``) is
``ceiling`` or ``floor`` are reference rows, shown apart and never bold.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from planarena import stats
from planarena.core.records import ResultRecord
from planarena.methods.base import ReportTraits
from planarena.report.markdown import DASH, md_table, md_text
from planarena.report.metrics import metric
from planarena.report.published.loader import PAPERS, PublishedPaper, PublishedSchemaTable
from planarena.report.records import latest_records, record_task
from planarena.report.sections.hitk import task_metric_table

TASK = "learn_schema"

#: The section's metrics, in column order (declared in :mod:`planarena.report.metrics`); the first
#: two are the rates (the front page's headline uses ``SCHEMA_KEYS[:2]``), the others run counts.
SCHEMA_KEYS: tuple[str, ...] = ("precision", "recall", "N_s", "N_c", "N_sc")
RATES: tuple[str, ...] = SCHEMA_KEYS[:2]
#: Each count and the ``extra`` flags a run needs (all of them) to be counted.
COUNTS: dict[str, tuple[str, ...]] = {"N_s": ("sound",), "N_c": ("complete",), "N_sc": ("sound", "complete")}

#: Roles of reference rows, in display order, and what each one means.
CEILING, FLOOR, TWIN = "ceiling", "floor", "untrained twin"
REFERENCE_ROLES: dict[str, str] = {
    CEILING: "must reach precision = recall = 1.00 on every domain (the true domain evaluated by "
    "the same code: a check of the evaluation, not a result)",
    FLOOR: "recall 1 by construction; its precision is the floor a learned domain must beat "
    "(what a domain without preconditions gets)",
    TWIN: "a learned row's network before training, read by the same code (the floor that isolates "
    "learning; its recall is whatever the initial weights give, so it is not checked)",
}

#: Values of the records' ``observation`` and ``effects`` in display order (others after them).
OBSERVATIONS: tuple[str, ...] = ("strips", "strips_plus", "names")
EFFECTS: tuple[str, ...] = ("strips", "mlp")

DESCRIPTION = (
    "One run = one (method, domain, seed) `learn_schema` record. For each test state the "
    "successors under the learned domain are compared with those under the true domain; TP / FP / "
    "FN are summed over the domain's test states: precision = TP / (TP + FP), recall = TP / (TP + "
    "FN). Cells: mean ± population std (ddof=0) over the runs that report a value (\"(k of n "
    "runs)\": the others failed, diverged or timed out, see Failed runs); N_s / N_c / N_sc: runs whose learned domain is sound (no false positive) / "
    "complete (no false negative) / both, out of every run (a failed run is neither). Best "
    "precision and recall per domain in bold (reference rows excluded). `test states`: per "
    "domain, as the records report it."
)


@dataclass(frozen=True)
class Schema:
    """The section's numbers.

    Attributes:
        table: rows ``domain`` (sorted), column ``test states``, then per reference method
            ``"<method> (<role>) precision"`` / ``recall``, then per learned method
            ``"<method> <key>"`` for each key of :data:`SCHEMA_KEYS` (best rates in bold).
        methods: the learned methods, in column order.
        groups: ``(title, methods)`` per display table: methods of one setting (effects, noisy or
            not), ordered by noise and observation.
        references: ``(method, role)`` of the reference rows, ceilings first.
        cells: ``(method, domain) -> key -> cell`` without bold (``"–"``: no run there).
        failures: a markdown line per failed run (outcome other than ``solved``).
        checks: markdown lines checking the reference rows.
        settings: ``method -> "observation names, effects strips, noise 0"`` as the records say.
        common: precision per domain (rows) and method (columns, the floor first) on the common
            states (the records' ``common_states``: the floor's states), mean over the runs that
            measured them, with the state count; None when no record has them.
    """

    table: pd.DataFrame
    methods: tuple[str, ...]
    groups: tuple[tuple[str, tuple[str, ...]], ...]
    references: tuple[tuple[str, str], ...]
    cells: Mapping[tuple[str, str], Mapping[str, str]]
    failures: tuple[str, ...] = ()
    checks: tuple[str, ...] = ()
    settings: Mapping[str, str] = field(default_factory=dict)
    common: pd.DataFrame | None = None


@dataclass
class _Runs:
    """The runs of one (method, domain)."""

    rates: dict[str, list[float]] = field(default_factory=lambda: {k: [] for k in RATES})
    counts: dict[str, int] = field(default_factory=lambda: {k: 0 for k in COUNTS})
    n: int = 0


def _rate(v: Any) -> float | None:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) else None


def _role(method: str, traits: Mapping[str, ReportTraits], extra_roles: Mapping[str, str]) -> str:
    t = traits.get(method)
    if t is not None and t.twin_of:
        return TWIN
    if t is not None and t.role in REFERENCE_ROLES:
        return t.role
    return extra_roles.get(method, "model")


def _setting_key(extra: Mapping[str, Any]) -> tuple:
    """Sort key of a run's setting: noise, effects, observation (known values first)."""
    obs, eff = str(extra.get("observation", "")), str(extra.get("effects", ""))
    noise = _rate(extra.get("noise")) or 0.0
    return (
        noise,
        EFFECTS.index(eff) if eff in EFFECTS else len(EFFECTS), eff,
        OBSERVATIONS.index(obs) if obs in OBSERVATIONS else len(OBSERVATIONS), obs,
    )  # fmt: skip


def _setting_text(extra: Mapping[str, Any]) -> str:
    parts = [f"{k} {extra[k]:g}" if k == "noise" and _rate(extra[k]) is not None else f"{k} {extra[k]}"
             for k in ("observation", "effects", "noise") if extra.get(k) is not None]
    return ", ".join(parts) or DASH


def _group_title(extra: Mapping[str, Any]) -> str:
    eff = extra.get("effects")
    noisy = (_rate(extra.get("noise")) or 0.0) > 0
    what = f"{eff} effects" if eff is not None else "effects not stated"
    return f"{what}, {'observation noise' if noisy else 'no noise'}"


def rate_cell(key: str, values: Sequence[float], runs: int) -> str:
    """A precision / recall cell: mean ± population std over ``values`` as the metric declares
    (``"0.97 ± 0.02"``, ``"0.95 (1 run)"``), with ``"(k of n runs)"`` when fewer than ``runs``
    runs report a value; ``"–"`` when none does."""
    if not values:
        return DASH
    m = metric(key)
    mean, std = m.aggregate(values)
    if len(values) < runs:
        return f"{m.format(mean, std if len(values) > 1 else None)} ({len(values)} of {runs} runs)"
    return m.format(mean, std, runs=len(values))


def _bold(cell: str) -> str:
    return f"**{cell}**" if cell != DASH else cell


def schema_table(
    records: Iterable[ResultRecord], traits: Mapping[str, ReportTraits] | None = None
) -> Schema | None:
    """The section's numbers from the latest ``learn_schema`` records (one per method, domain and
    seed); ``None`` when there are none (the section then says so).

    ``traits``: by method; a method whose role is ``ceiling`` or ``floor`` (or whose records say
    so in ``extra["role"]``) is a reference row. Per (method, domain): precision and recall
    aggregated as :func:`planarena.report.metrics.metric` declares them over the runs that report a
    finite value; N_s / N_c / N_sc the runs whose ``extra`` has ``sound`` / ``complete`` / both
    true, out of every run (``"k/n"``). Per domain, the learned methods' best mean precision and
    recall (the metric's :meth:`~planarena.report.metrics.Metric.best`) are bold.
    """
    traits = traits or {}
    recs = [r for r in latest_records(records) if record_task(r) == TASK]
    if not recs:
        return None
    runs: dict[tuple[str, str], _Runs] = defaultdict(_Runs)
    test_states: dict[str, set[str]] = defaultdict(set)
    extra_roles: dict[str, str] = {}
    setting: dict[str, dict] = {}
    failures = []
    for r in recs:
        extra = r.extra or {}
        known = setting.get(r.method)
        if known is None or ("observation" in extra and "observation" not in known):
            setting[r.method] = extra  # the run's setting, from a record that states it if any
        if extra.get("role") in REFERENCE_ROLES:
            extra_roles[r.method] = str(extra["role"])
        cell = runs[(r.method, r.domain)]
        cell.n += 1
        if r.outcome == "solved" and extra.get("test_states") is not None:  # a timed-out run's is partial
            test_states[r.domain].add(str(extra["test_states"]))
        if r.outcome != "solved":
            reason = f": {md_text(r.failure_reason)}" if r.failure_reason else ""
            failures.append(f"- `{r.method}` on {r.domain}, seed {r.seed}: {r.outcome}{reason}")
            continue
        for k in RATES:
            v = _rate(extra.get(k))
            if v is not None:
                cell.rates[k].append(v)
        for k, flags in COUNTS.items():
            cell.counts[k] += all(extra.get(f) is True for f in flags)
    all_methods = sorted(setting, key=lambda m: (_setting_key(setting[m]), m))
    roles = {m: _role(m, traits, extra_roles) for m in all_methods}
    references = tuple(
        (m, role) for role in REFERENCE_ROLES for m in sorted(all_methods) if roles[m] == role
    )
    methods = tuple(m for m in all_methods if roles[m] not in REFERENCE_ROLES)
    domains = sorted({d for _, d in runs})

    cells: dict[tuple[str, str], dict[str, str]] = {}
    for (m, d), c in runs.items():
        cells[(m, d)] = {k: rate_cell(k, c.rates[k], c.n) for k in RATES}
        cells[(m, d)].update({k: f"{c.counts[k]}/{c.n}" for k in COUNTS})

    rows = []
    for d in domains:
        row: dict[str, str] = {"domain": d, "test states": "; ".join(sorted(test_states[d], key=int_key)) or DASH}
        for m, role in references:
            for k in RATES:
                row[f"{m} ({role}) {metric(k).title}"] = cells.get((m, d), {}).get(k, DASH)
        best = {
            k: metric(k).best({m: float(np.mean(runs[(m, d)].rates[k])) for m in methods
                               if (m, d) in runs and runs[(m, d)].rates[k]})
            for k in RATES
        }
        for m in methods:
            for k in SCHEMA_KEYS:
                text = cells.get((m, d), {}).get(k, DASH)
                row[f"{m} {metric(k).title}"] = _bold(text) if k in best and m in best[k] else text
        rows.append(row)
    columns = ["domain", "test states",
               *(f"{m} ({role}) {metric(k).title}" for m, role in references for k in RATES),
               *(f"{m} {metric(k).title}" for m in methods for k in SCHEMA_KEYS)]  # fmt: skip

    groups: dict[str, list[str]] = {}
    for m in methods:
        groups.setdefault(_group_title(setting[m]), []).append(m)
    floors = [m for m, role in references if role in (FLOOR, TWIN)]
    return Schema(
        table=pd.DataFrame(rows, columns=columns),
        methods=methods,
        groups=tuple((title, tuple(ms)) for title, ms in groups.items()),
        references=references,
        cells=cells,
        failures=tuple(failures),
        checks=tuple(_checks(references, runs, domains)),
        settings={m: _setting_text(setting[m]) for m in all_methods},
        common=common_table(recs, [*floors, *methods], domains),
    )


def common_table(recs: Sequence[ResultRecord], methods: Sequence[str], domains: Sequence[str]) -> pd.DataFrame | None:
    """Precision on the common states (:func:`planarena.protocols.schema.common_positions`): one
    row per domain, its number of common states, and per method the mean precision over the runs
    that measured them all (``"(k of n runs)"`` when some did not); None without such records."""
    values: dict[tuple[str, str], list[float]] = defaultdict(list)
    runs: dict[tuple[str, str], int] = defaultdict(int)
    states: dict[str, set[int]] = defaultdict(set)
    for r in recs:
        runs[(r.method, r.domain)] += 1
        c = (r.extra or {}).get("common_states")
        if isinstance(c, dict) and _rate(c.get("precision")) is not None:
            values[(r.method, r.domain)].append(float(c["precision"]))
            states[r.domain].add(int(c.get("test_states") or 0))
    if not values:
        return None
    rows = []
    for d in domains:
        row = {"domain": d, "common states": "; ".join(str(n) for n in sorted(states[d])) or DASH}
        for m in methods:
            v, n = values.get((m, d), []), runs.get((m, d), 0)
            row[f"{m} precision"] = (DASH if not v else f"{np.mean(v):.2f}"
                                     + (f" ({len(v)} of {n} runs)" if len(v) < n else ""))
        rows.append(row)
    return pd.DataFrame(rows, columns=["domain", "common states", *(f"{m} precision" for m in methods)])


def int_key(text: str) -> tuple:
    """Sort key putting integers in numeric order before other text."""
    return (0, int(text), "") if text.isdigit() else (1, 0, text)


def _checks(references: Sequence[tuple[str, str]], runs: Mapping[tuple[str, str], _Runs],
            domains: Sequence[str]) -> list[str]:
    """A line per reference method: does the ceiling reach 1.00 / 1.00 (the floor recall 1.00) in
    every run of every domain? Untrained twins are not checked (nothing bounds their rates)."""
    out = []
    for m, role in references:
        if role not in (CEILING, FLOOR):
            continue
        keys = RATES if role == CEILING else ("recall",)
        bad, missing = [], []
        for d in domains:
            c = runs.get((m, d))
            if c is None:
                missing.append(d)
                continue
            why = [f"{k} {min(c.rates[k]):.4f}" for k in keys if c.rates[k] and min(c.rates[k]) < 1.0 - 1e-9]
            why += [f"{k} missing in {c.n - len(c.rates[k])} of {c.n} runs" for k in keys if len(c.rates[k]) < c.n]
            if why:
                bad.append(f"{d} ({', '.join(why)})")
        want = " = ".join(keys) + " = 1.00"
        absent = f" (no runs on: {', '.join(missing)})" if missing else ""
        if bad:
            out.append(f"- **Check failed**: the {role} `{m}` should have {want} in every run; it does not on "
                       f"{'; '.join(bad)}{absent}.")
        else:
            n = len(domains) - len(missing)
            out.append(f"- Check passed: the {role} `{m}` has {want} in every run on its {n} domain(s){absent}.")
    return out


def headline_table(
    records: Iterable[ResultRecord], traits: Mapping[str, ReportTraits] | None = None, seed: int = 0,
) -> pd.DataFrame | None:
    """The front page's schema-learning table: a row per method, ``seeds``, ``domains``,
    precision and recall (per seed the mean over domains, then mean ± std over seeds:
    :func:`planarena.report.sections.hitk.task_metric_table` without grouping; with the 95 %
    hierarchical bootstrap interval over the measured domains, then seeds, where every seed
    measured the same domains) and ``N_sc`` (runs sound and complete, summed over domains,
    ``"k/n"`` with the Wilson interval of k/n); learned methods first, then the reference rows
    marked *(ceiling)* / *(floor)*. ``domains`` reads ``"k of n measured"`` when only k of the n
    domains a method ran on have a measured run (precision and recall average those k only).
    ``None`` without ``learn_schema`` records."""
    records = list(records)
    table = task_metric_table(records, TASK, RATES, (), unit="domains")
    sc = schema_table(records, traits)
    if table is None or sc is None:
        return None
    roles = dict(sc.references)
    nsc: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for (m, _), cell in sc.cells.items():
        k, n = (int(x) for x in cell["N_sc"].split("/"))
        nsc[m][0] += k
        nsc[m][1] += n
    table["N_sc"] = [f"{nsc[m][0]}/{nsc[m][1]} {stats.format_interval(stats.wilson(*nsc[m]))}" for m in table["method"]]
    values: dict[tuple[str, str], dict[str, dict[int, float]]] = defaultdict(lambda: defaultdict(dict))
    for r in latest_records(records):
        if record_task(r) != TASK:
            continue
        for key in RATES:
            v = (r.extra or {}).get(key)
            if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v):
                values[(r.method, key)][r.domain][r.seed] = float(v)
    for col in (k for k in RATES if k in table.columns):
        key = col
        cells = []
        for m, text in zip(table["method"], table[col]):
            by_domain = values.get((m, key), {})
            seeds = sorted(set().union(*(d.keys() for d in by_domain.values()))) if by_domain else []
            doms = sorted(d for d, by in by_domain.items() if all(s in by for s in seeds))
            if doms and len(doms) == len(by_domain):
                iv = stats.hierarchical_bootstrap(np.array([[by_domain[d][s] for s in seeds] for d in doms]), seed)
                text = f"{text} {stats.format_interval(iv)}"
            cells.append(text)
        table[col] = cells
    # k of n: precision and recall average the domains a method's runs were measured on (a
    # learned domain too permissive to compare, or past the time limit, has no value); say so
    ran: dict[str, set[str]] = defaultdict(set)
    for r in latest_records(records):
        if record_task(r) == TASK:
            ran[r.method].add(r.domain)
    table["domains"] = [d if int(d) >= len(ran[m]) else f"{d} of {len(ran[m])} measured"
                        for m, d in zip(table["method"], table["domains"])]
    table["_ref"] = [m in roles for m in table["method"]]
    table = table.sort_values("_ref", kind="stable").drop(columns="_ref").reset_index(drop=True)
    table["method"] = [f"{m} *({roles[m]})*" if m in roles else m for m in table["method"]]
    return table


# ----------------------------------------------------------------------------- published numbers


def published_value(t: PublishedSchemaTable, domain: str, method: str, key: str) -> str:
    """A published cell beside a measured one: a rate as printed, a count as ``"k/runs"``; ``"–"``
    when the table has no such value."""
    v = t.value(domain, method, key)
    if v is None:
        return DASH
    return f"{v.text}/{t.runs}" if key in COUNTS else v.text


def side_by_side_methods(t: PublishedSchemaTable, schema: Schema | None) -> list[str]:
    """The harness methods of ``t``'s groups with runs here on at least one of ``t``'s domains, in
    group order."""
    if schema is None:
        return []
    measured = {m for m, d in schema.cells if t.row(d) is not None}
    return [m for m in t.methods if m in measured]


def side_by_side_table(t: PublishedSchemaTable, method: str, schema: Schema) -> pd.DataFrame:
    """Rows: the domains where ``method`` has runs here and ``t`` a row (sorted); per key of the
    method's published group, ``"<key> measured (this run)"`` (the section's cell, no bold) and
    ``"<key> published (<table>)"`` (:func:`published_value`).

    Raises:
        KeyError: ``t`` has no group for ``method``.
    """
    group = t.group(method)
    if group is None or group.method != method:
        raise KeyError(f"{t.key}: no column group for method {method!r}")
    domains = sorted(d for m, d in schema.cells if m == method and t.row(d) is not None)
    rows = []
    for d in domains:
        row = {"Domain": d}
        for k in group.keys:
            title = metric(k).title
            row[f"{title} measured (this run)"] = schema.cells[(method, d)][k]
            row[f"{title} published ({t.table})"] = published_value(t, d, method, k)
        rows.append(row)
    columns = ["Domain", *(f"{metric(k).title} {w}" for k in group.keys
                           for w in ("measured (this run)", f"published ({t.table})"))]
    return pd.DataFrame(rows, columns=columns)


def render_published(schema: Schema | None, papers: Sequence[PublishedPaper] = PAPERS) -> list[str]:
    """Markdown lines of the published schema-learning subsection, for the published page (after
    :func:`planarena.report.sections.published.render`; numbers copied from the papers stay on that
    page): each paper's ``schema_tables`` marked ``printed`` reproduced as printed, labelled with
    paper and table number, then a side-by-side table (:func:`side_by_side_table`) per measured
    method that has a published column group. ``[]`` when no paper has a schema-learning table."""
    tables = [(p, t) for p in papers for t in p.schema_tables]
    if not tables:
        return []
    out = ["", "### Published schema-learning tables (not measured here)", ""]
    out.append(
        "Copied from the papers, labelled with paper and table number; never entered in the "
        "schema-learning page's measured tables or `metrics.json`. The papers' instances, walks and "
        "runs are theirs: context, not a like-for-like comparison."
    )
    for p, t in tables:
        if not t.printed:
            continue
        title, *table = t.as_printed(p.source).markdown().split("\n")
        out += ["", title, "", f"{t.aggregation[:1].upper()}{t.aggregation[1:]}. Source: {t.paper_file}, "
                f"{t.table} (\"{t.caption}\")."]  # fmt: skip
        groups = "; ".join(f"{g.label} = `{g.method}`" for g in t.groups if g.method)
        no_method = ", ".join(g.label for g in t.groups if not g.method)
        if groups:
            out.append(f"Harness methods running the same configuration: {groups}.")
        if no_method:
            out.append(f"No harness method runs {no_method}.")
        out += [""] + [f"- {n}" for n in t.notes] + table
    out += ["", "### Side by side: schema learning, measured (this run) vs published", ""]
    out.append(
        "For each harness method with `learn_schema` results here and a column group in a "
        "published table, on the domains measured. Measured: the cells of the schema-learning page "
        "(mean ± population std over runs; \"k/n\": runs out of this run's runs), without bold. "
        "Published: as printed; counts out of the paper's runs."
    )
    shown = 0
    for p, t in tables:
        for m in side_by_side_methods(t, schema):
            g = t.group(m)
            shown += 1
            out += ["", f"#### {m} (published: {p.name} {t.table}, {g.label})", ""]
            out.append(f"{t.table}: {t.aggregation}.")
            if not t.printed:
                out += [""] + [f"- {n}" for n in t.notes]
            out += ["", md_table(side_by_side_table(t, m, schema))]
    if not shown:
        out += ["", "No method with `learn_schema` results here has a published column yet."]
    unmeasured = [m for _, t in tables for m in t.methods if m not in side_by_side_methods(t, schema)]
    if unmeasured:
        out += ["", f"Published columns without `{TASK}` results here: "
                + ", ".join(f"`{m}`" for m in unmeasured) + "."]
    return out


# ----------------------------------------------------------------------------------- rendering


def reference_table(schema: Schema) -> pd.DataFrame:
    """The reference rows: ``domain``, ``test states`` and each reference method's precision and
    recall (the columns of :attr:`Schema.table` before the learned methods)."""
    cols = ["domain", "test states",
            *(f"{m} ({role}) {metric(k).title}" for m, role in schema.references for k in RATES)]
    return schema.table[cols]


def group_table(schema: Schema, methods: Sequence[str]) -> pd.DataFrame:
    """``domain``, ``test states`` and the columns of ``methods`` of :attr:`Schema.table`."""
    cols = ["domain", "test states", *(f"{m} {metric(k).title}" for m in methods for k in SCHEMA_KEYS)]
    return schema.table[cols]


def published_pointer(papers: Sequence[PublishedPaper]) -> list[str]:
    """A sentence naming the papers' schema-learning tables and where they are (the published
    page); ``[]`` when there are none."""
    names = [f"{p.name} {', '.join(t.table for t in p.schema_tables)}" for p in papers if p.schema_tables]
    if not names:
        return []
    return ["", f"Published schema-learning numbers ({'; '.join(names)}) and a side-by-side view per "
            "measured method are on the [published page](published.md), apart from the measured rows."]


def render(schema: Schema | None, papers: Sequence[PublishedPaper] = PAPERS) -> list[str]:
    """Markdown lines of the section (the schema-learning page): the reference rows with their
    checks, a table per setting of the learned methods, the failed runs, and a pointer to the
    published page (``papers`` with ``schema_tables``; their numbers are not shown here, see
    :func:`render_published`)."""
    out = ["## Schema learning", ""]
    if schema is None:
        out.append(f"No `{TASK}` method has results yet (records whose `extra` has `task: {TASK}`).")
        return out + published_pointer(papers)
    out.append(DESCRIPTION)
    if schema.references:
        out += ["", "### Reference rows (not learned)", ""]
        out += [f"- `{m}` *({role})*: {REFERENCE_ROLES[role]}." for m, role in schema.references]
        out += ["", md_table(reference_table(schema)), "", *schema.checks]
    if schema.common is not None:
        out += ["", "### Against the floor, on the same states", "",
                "Precision on the common states (`schema.common_states`: the first BFS states of the first "
                "test problem), where the precondition-free floor is measured (it grounds every object "
                "tuple); every learned row is measured on them too.", "", md_table(schema.common)]
    for title, methods in schema.groups:
        out += ["", f"### Learned domains: {title}", ""]
        out.append("; ".join(f"`{m}`: {schema.settings.get(m, DASH)}" for m in methods) + ".")
        out += ["", md_table(group_table(schema, methods))]
    out += ["", "### Failed runs", ""]
    out += list(schema.failures) or ["None: every run trained and was evaluated."]
    return out + published_pointer(papers)
