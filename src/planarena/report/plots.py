"""The leaderboard's plots (docs/pipeline.md#plots: coverage vs instance size, Hit@k by
protocol), each written three ways under ``reports/plots/``: a PNG (matplotlib, for the markdown
pages), its data as JSON (``<name>.json``, a list of flat rows) and a Vega-Lite template
(``<name>.vl.json``) so that ``dvc plots show`` / ``dvc plots diff`` render the same plot from the
data (dvc.yaml's top-level ``plots:`` names them). The same data gives the same bytes.

Legibility with many methods: a plot has a row of panels per family (per family and encoding when
the family's methods declare a :attr:`ReportTraits.floor_group`), so a panel shows only that row's
models; floors (:attr:`ReportTraits.role` ``floor``) and the classical planners are reference
marks, not competing lines: the floors without a group (random walks) and the classical planners
as shaded bands (min to max over them), the row's own floor (the identity predictor of its
encoding) as a dashed line.
"""

from __future__ import annotations

import math
import os
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from planarena.core.io import atomic_write_json
from planarena.core.problemset import ProblemEntry
from planarena.core.records import ResultRecord
from planarena.methods.base import ReportTraits
from planarena.report.markdown import DASH
from planarena.report.metrics import Metric
from planarena.report.records import entries, method_order, plan_records_of
from planarena.report.traits import PLAIN

@dataclass(frozen=True)
class Plot:
    """A plot the pages link to: ``caption``, ``path`` relative to ``reports/`` and the detail
    page (a key of :data:`planarena.report.pages.DETAIL_PAGES`) that shows it."""

    caption: str
    path: str
    page: str


PLOTS_DIR = "plots"
COVERAGE_PLOT = "coverage_by_size.png"
HITK_PLOT = "hit5_by_protocol.png"
HELD_OUT_PLOT = "coverage_held_out"
#: The family whose non-floor methods are drawn as the classical reference band.
CLASSICAL = "classical"

#: Kind of a floor drawn as its row's own dashed line (the floor of the row's floor group).
ROW_FLOOR = "row floor"

_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "<", ">")


def method_kind(method: str, family: str, traits: Mapping[str, ReportTraits]) -> str:
    """``floor`` (declared role), ``classical`` (a classical planner: the reference ceiling) or
    ``model``."""
    if traits.get(method, PLAIN).role == "floor":
        return "floor"
    return "classical" if family == CLASSICAL else "model"


def panel_rows(methods: Mapping[str, str], traits: Mapping[str, ReportTraits]) -> dict[str, str]:
    """Model method -> its row of panels: the family, with the floor group when it declares one
    (``state-centric-transition-models · WL encoding``). ``methods``: method -> family."""
    out = {}
    for m, fam in methods.items():
        if method_kind(m, fam, traits) == "model":
            group = traits.get(m, PLAIN).floor_group
            out[m] = f"{fam} · {group}" if group else fam
    return out


def coverage_by_size(
    records: Iterable[ResultRecord],
    manifest: Iterable[ProblemEntry | Mapping],
    traits: Mapping[str, ReportTraits] | None = None,
) -> pd.DataFrame:
    """Coverage per (domain, method, instance size), over the splits the method was run on.

    ``coverage`` is the mean over the method's seeds in that domain of the fraction of instances
    of that size solved and validated. ``x`` is the manifest's ``size`` (or ``objects`` in a
    domain where no instance has a size); ``x_name`` names it for the axis (``size (blocks)``).
    Columns: domain, method, family, kind (:func:`method_kind`), floor_group, x_name, x,
    instances, coverage.
    """
    traits = traits or {}
    items = entries(manifest)
    latest = plan_records_of(records)
    family = {r.method: r.family for r in latest}
    ran: set[tuple] = {(r.method, r.domain, r.split) for r in latest}
    seeds: dict[tuple, set[int]] = defaultdict(set)
    solved: dict[tuple, set[tuple[str, str]]] = defaultdict(set)
    for r in latest:
        seeds[(r.method, r.domain)].add(r.seed)
        if r.counts_as_solved:
            solved[(r.method, r.domain, r.seed)].add((r.split, r.problem))
    rows = []
    for domain in sorted({e.domain for e in items}):
        dom = [e for e in items if e.domain == domain]
        x_name = "size" if any(e.size is not None for e in dom) else "objects"
        x_label = next((e.size_param for e in dom if e.size is not None and e.size_param), "")
        x_label = f"size ({x_label})" if x_name == "size" and x_label else x_name
        for m in method_order(latest):
            if not seeds.get((m, domain)):
                continue
            by_x: dict[int, list[ProblemEntry]] = defaultdict(list)
            for e in dom:
                x = getattr(e, x_name)
                if (m, domain, e.split) in ran and x is not None:
                    by_x[x].append(e)
            for x in sorted(by_x):
                group = by_x[x]
                fractions = [
                    sum((e.split, e.problem) in solved.get((m, domain, s), ()) for e in group)
                    / len(group)
                    for s in sorted(seeds[(m, domain)])
                ]
                rows.append(dict(domain=domain, method=m, family=family[m],
                                 kind=method_kind(m, family[m], traits),
                                 floor_group=traits.get(m, PLAIN).floor_group, x_name=x_label, x=x,
                                 instances=len(group), coverage=float(np.mean(fractions))))
    return pd.DataFrame(rows, columns=["domain", "method", "family", "kind", "floor_group", "x_name", "x",
                                       "instances", "coverage"])


def coverage_plot_data(data: pd.DataFrame, traits: Mapping[str, ReportTraits] | None = None) -> list[dict]:
    """The rows of ``coverage_by_size.json``: :func:`coverage_by_size` with a ``row`` (the panel
    row, :func:`panel_rows`); reference methods (floors without a group, classical planners) are
    repeated in every row, a row's own floor (same floor group; kind :data:`ROW_FLOOR`) only in
    its rows, and an untrained twin only in the row of the row it mirrors. Without any
    model every method is in one row ``all methods``. Sorted (row, domain, kind, method, x)."""
    traits = traits or {}
    if data.empty:
        return []
    rows_of = panel_rows(dict(zip(data["method"], data["family"], strict=True)), traits)
    groups = sorted(set(rows_of.values()))
    group_of_row = {g: next(traits.get(m, PLAIN).floor_group for m, r in rows_of.items() if r == g)
                    for g in groups}
    out = []
    for rec in data.to_dict("records"):
        m = rec["method"]
        twin_of = traits.get(m, PLAIN).twin_of
        if not groups:
            targets = ["all methods"]
        elif rec["kind"] == "model":
            targets = [rows_of[m]]
        elif twin_of:   # an untrained twin: only in its own row's panels
            targets = [rows_of[twin_of]] if twin_of in rows_of else []
        elif rec["kind"] == "floor" and rec["floor_group"]:
            targets = [g for g in groups if group_of_row[g] == rec["floor_group"]]
        else:
            targets = groups
        kind = ROW_FLOOR if rec["kind"] == "floor" and (rec["floor_group"] or twin_of) and groups else rec["kind"]
        for row in targets:
            out.append({"row": row, "domain": rec["domain"], "kind": kind, "method": m,
                        "x_name": rec["x_name"], "x": int(rec["x"]), "instances": int(rec["instances"]),
                        "coverage": round(float(rec["coverage"]), 4)})
    return sorted(out, key=lambda r: (r["row"], r["domain"], r["kind"], r["method"], r["x"]))


def _new_figure(nrows: int, ncols: int, width: float, height: float):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width * ncols, height * nrows + 0.8), layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def _save(fig, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, format="png", dpi=100, metadata={"Software": None})
    return path


def _placeholder(path: Path, text: str) -> Path:
    """A small PNG that says there is nothing to plot yet (a page's image link never breaks)."""
    fig = _new_figure(1, 1, 5, 1.6)
    fig.text(0.5, 0.5, text, ha="center", va="center")
    return _save(fig, path)


def _band(ax, points: pd.DataFrame, colour: str, label: str) -> None:
    """Shade min to max over the methods of ``points`` (columns method, x, coverage) at each x."""
    if points.empty:
        return
    g = points.groupby("x")["coverage"]
    xs = np.asarray(sorted(g.groups))
    lo, hi = g.min().reindex(xs).to_numpy(), g.max().reindex(xs).to_numpy()
    names = ", ".join(sorted(set(points["method"])))
    ax.fill_between(xs, lo, hi, color=colour, alpha=0.25, step=None, label=f"{label}: {names}")
    ax.plot(xs, hi, color=colour, lw=0.8, alpha=0.7)
    ax.plot(xs, lo, color=colour, lw=0.8, alpha=0.7)


def plot_coverage_by_size(rows: Sequence[Mapping], path: str | os.PathLike) -> Path:
    """Write the coverage-vs-size PNG from :func:`coverage_plot_data`: a row of panels per panel
    row, a column per domain; the row's models as lines, its own floor dashed, the group-less
    floors and the classical planners as bands. Agg canvas, no global pyplot state, no PNG
    ``Software`` metadata: identical data gives identical bytes. Returns ``path``."""
    from matplotlib.ticker import MaxNLocator

    path = Path(path)
    data = pd.DataFrame(list(rows))
    if data.empty:
        return _placeholder(path, "no plan results to plot yet")
    row_names = list(dict.fromkeys(data["row"]))
    domains = sorted(set(data["domain"]))
    # fixed margins instead of constrained layout: with a panel per row and domain (50+ axes on the
    # default profile) the layout solver took half of the report stage's time. The legends sit in a
    # right margin sized, once every panel is drawn, from the longest label
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure()
    FigureCanvasAgg(fig)
    axes = fig.subplots(len(row_names), len(domains), squeeze=False)
    longest = 0
    for i, row in enumerate(row_names):
        models = sorted(set(data[(data["row"] == row) & (data["kind"] == "model")]["method"]))
        style = {m: _MARKERS[j % len(_MARKERS)] for j, m in enumerate(models)}
        from matplotlib import colormaps

        palette = colormaps["tab10" if len(models) <= 10 else "tab20"]  # a family row may have 14 models
        colour = {m: palette(j % palette.N) for j, m in enumerate(models)}
        for j, domain in enumerate(domains):
            ax = axes[i][j]
            d = data[(data["row"] == row) & (data["domain"] == domain)]
            _band(ax, d[d["kind"] == "classical"], "tab:green", "classical planners")
            _band(ax, d[d["kind"] == "floor"], "tab:gray", "floors")
            for m in sorted(set(d[d["kind"] == ROW_FLOOR]["method"])):
                g = d[d["method"] == m]
                ax.plot(g["x"], g["coverage"], color="black", ls="--", lw=1.2, label=f"{m} (floor)")
            for m in models:
                g = d[d["method"] == m]
                if not g.empty:
                    ax.plot(g["x"], g["coverage"], marker=style[m], color=colour[m], lw=1.4, ms=4, label=m)
            if i == 0:
                ax.set_title(domain)
            if j == 0:
                ax.set_ylabel(f"{row}\ncoverage", fontsize=8)
            if not d.empty:
                ax.set_xlabel(f"instance {d['x_name'].iloc[0]}", fontsize=8)
            ax.set_ylim(-0.05, 1.05)
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
            ax.grid(True, alpha=0.3)
        handles, labels = [], []
        for ax in axes[i]:
            for h, label in zip(*ax.get_legend_handles_labels(), strict=True):
                if label not in labels:
                    handles.append(h)
                    labels.append(label)
        axes[i][-1].legend(handles, labels, fontsize=6, loc="upper left", bbox_to_anchor=(1.02, 1.0))
        longest = max([longest, *map(len, labels)])
    legend_in = min(8.0, 0.5 + 0.045 * longest)  # 6-point text: about 0.045 in per character
    width_in, height_in = 3.6 * len(domains) + 0.7 + legend_in, 2.9 * len(row_names) + 0.8
    fig.set_size_inches(width_in, height_in)
    fig.subplots_adjust(left=0.7 / width_in, right=1 - legend_in / width_in, bottom=0.5 / height_in,
                        top=1 - 0.35 / height_in, wspace=0.28, hspace=0.45)
    return _save(fig, path)


def hit5_plot_data(summary: pd.DataFrame | None, family: Mapping[str, str],
                   traits: Mapping[str, ReportTraits] | None = None) -> list[dict]:
    """The rows of ``hit5_by_protocol.json`` from the pool summary
    (:func:`planarena.report.sections.pool.pool_summary`): protocol, method, row (the panel row:
    family, and floor group when declared; floors in their family's rows), kind, hit5 and std
    (percent). ``family``: method -> family. Empty without a summary."""
    traits = traits or {}
    if summary is None or summary.empty:
        return []
    parsed = []
    for r in summary.to_dict("records"):
        if r.get("Hit@5") in (None, DASH):
            continue
        m = r["method"].split(" [")[0]
        fam = family.get(m, "")
        group = traits.get(m, PLAIN).floor_group
        parsed.append((r, m, fam, group, method_kind(m, fam, traits)))
    model_rows: dict[str, set[str]] = defaultdict(set)
    for _, _, fam, group, kind in parsed:
        if kind != "floor":
            model_rows[fam].add(f"{fam} · {group}" if group else fam)
    out = []
    for r, m, fam, group, kind in parsed:
        own = f"{fam} · {group}" if group else fam
        if kind != "floor" or not model_rows.get(fam):
            rows = [own]
        else:  # a floor is drawn in the rows of its family's models it is the floor of
            rows = [own] if own in model_rows[fam] else sorted(model_rows[fam])
        mean, std = Metric.parse(r["Hit@5"])
        for row in rows:
            out.append({"protocol": r["protocol"], "method": r["method"], "row": row, "kind": kind,
                        "hit5": mean, "std": 0.0 if math.isnan(std) else std})
    order = {p: i for i, p in enumerate(dict.fromkeys(summary["protocol"]))}
    return sorted(out, key=lambda x: (x["row"], x["kind"], x["method"], order[x["protocol"]]))


def plot_curves(series: Mapping[str, Sequence[Sequence[Sequence[float]]]], path: str | os.PathLike,
                y_title: str, x_title: str = "step") -> Path:
    """One panel: per side of ``series`` (``{side: [curve, ...]}``, a curve ``[[x, y], ...]`` per
    unit, e.g. per seed) every unit's curve thin and their mean (over the units that logged that x)
    thick, one colour per side. Agg canvas, byte-stable like the other plots. Returns ``path``."""
    from matplotlib import colormaps

    path = Path(path)
    fig = _new_figure(1, 1, 6.4, 3.6)
    ax = fig.subplots()
    palette = colormaps["tab10"]
    for j, (side, curves) in enumerate(series.items()):
        colour = palette(j % palette.N)
        by_x: dict[float, list[float]] = defaultdict(list)
        for curve in curves:
            if len(curve) > 1:
                ax.plot([c[0] for c in curve], [c[1] for c in curve], color=colour, lw=0.6, alpha=0.35)
            for x, y in curve:
                by_x[x].append(y)
        xs = sorted(by_x)
        ax.plot(xs, [float(np.mean(by_x[x])) for x in xs], color=colour, lw=2.0, marker="o", ms=3,
                label=f"{side} (mean of {len(curves)})")
    ax.set_xlabel(x_title)
    ax.set_ylabel(y_title)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7)
    return _save(fig, path)


def plot_hit5_by_protocol(rows: Sequence[Mapping], path: Path, chance: float = 100 * 5 / 128) -> bool:
    """Write the Hit@5-by-protocol PNG from :func:`hit5_plot_data`: a panel per row (family and
    encoding), grouped bars of its models per protocol (std as error bar), its floors as black
    ticks across each protocol's group, chance (5 of a pool of 128) dashed. Returns False (and
    writes nothing) without data."""
    data = pd.DataFrame(list(rows))
    if data.empty:
        return False
    protos = list(dict.fromkeys(data["protocol"]))
    row_names = sorted(set(data["row"]))
    fig = _new_figure(len(row_names), 1, max(7.0, 1.3 * len(protos) + 3), 2.6)
    axes = fig.subplots(len(row_names), 1, squeeze=False)
    from matplotlib import colormaps

    colours = colormaps["tab10"]
    for i, row in enumerate(row_names):
        ax = axes[i][0]
        d = data[data["row"] == row]
        models = sorted(set(d[d["kind"] != "floor"]["method"]))
        width = 0.8 / max(1, len(models))
        for j, m in enumerate(models):
            g = d[d["method"] == m].set_index("protocol")
            means = [g["hit5"].get(p, np.nan) for p in protos]
            errs = [g["std"].get(p, 0.0) for p in protos]
            ax.bar(np.arange(len(protos)) - 0.4 + width * (j + 0.5), means, width, yerr=errs, capsize=2,
                   label=m, color=colours(j % colours.N))
        for k, m in enumerate(sorted(set(d[d["kind"] == "floor"]["method"]))):
            g = d[d["method"] == m].set_index("protocol")
            xs = [p_i for p_i, p in enumerate(protos) if p in g.index]
            ax.hlines([g["hit5"][protos[x]] for x in xs], [x - 0.42 for x in xs], [x + 0.42 for x in xs],
                      colors="black", linestyles=("--", ":", "-.")[k % 3], lw=1.3, label=f"{m} (floor)")
        ax.axhline(chance, color="gray", ls="--", lw=1, label="chance (5/128)")
        ax.set_xticks(np.arange(len(protos)), protos)
        ax.set_ylabel(f"{row}\nHit@5 (%)", fontsize=8)
        ax.set_ylim(0, 100)
        ax.legend(fontsize=6, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    _save(fig, Path(path))
    return True


def held_out_plot_data(sums: pd.DataFrame, family: Mapping[str, str],
                       traits: Mapping[str, ReportTraits] | None = None) -> list[dict]:
    """The rows of ``coverage_held_out.json``: per plan method with held-out results its held-out
    coverage (:func:`planarena.report.sections.coverage.coverage_sum`), family and kind."""
    traits = traits or {}
    return [{"method": r.method, "family": family.get(r.method, ""),
             "kind": method_kind(r.method, family.get(r.method, ""), traits),
             "coverage": round(float(r.mean), 4)} for r in sums.itertuples(index=False) if r.n > 0]


DOMAIN_HEATMAP = "coverage_by_domain.png"


def domain_heatmap_data(by_domain: pd.DataFrame, family: Mapping[str, str],
                        traits: Mapping[str, ReportTraits] | None = None) -> list[dict]:
    """The rows of ``coverage_by_domain.json``: held-out coverage per (method, domain), the view the
    IPC and Downward Lab lead with, from
    :func:`planarena.report.sections.coverage.held_out_by` (``key="domain"``): ``coverage`` the mean
    over seeds of solved / instances, ``solved`` the mean solved count, ``n`` the instances; each
    row with its method's family and kind."""
    traits = traits or {}
    return [{"method": r.method, "domain": r.domain, "family": family.get(r.method, ""),
             "kind": method_kind(r.method, family.get(r.method, ""), traits),
             "coverage": round(float(r.mean), 4), "solved": round(float(r.mean) * r.n, 2), "n": int(r.n)}
            for r in by_domain.itertuples(index=False)]


def plot_domain_heatmap(rows: Sequence[Mapping], path: str | os.PathLike) -> Path:
    """Write the domain x method heatmap PNG from :func:`domain_heatmap_data`: a row per method (in
    the data's order, floors marked), a column per domain, each cell coloured by held-out coverage
    and labelled ``solved/n``. Agg canvas, no PNG metadata: same data, same bytes."""
    path = Path(path)
    data = pd.DataFrame(list(rows))
    if data.empty:
        return _placeholder(path, "no held-out plan results to plot yet")
    methods = list(dict.fromkeys(data["method"]))
    domains = sorted(set(data["domain"]))
    grid = np.full((len(methods), len(domains)), np.nan)
    labels = [["" for _ in domains] for _ in methods]
    for r in data.itertuples(index=False):
        i, j = methods.index(r.method), domains.index(r.domain)
        grid[i, j] = r.coverage
        labels[i][j] = f"{r.solved:g}/{r.n}"
    kind = dict(zip(data["method"], data["kind"]))
    names = [f"{m} ({kind[m]})" if kind[m] != "model" else m for m in methods]
    width, height = 2.2 + 1.1 * len(domains) + 0.07 * max(map(len, names)), 0.9 + 0.22 * len(methods)
    fig = _new_figure(1, 1, width, height)
    ax = fig.subplots()
    from matplotlib import colormaps

    cmap = colormaps["viridis"].with_extremes(bad="#eeeeee")
    image = ax.imshow(np.ma.masked_invalid(grid), cmap=cmap, vmin=0.0, vmax=1.0, aspect="auto")
    for i in range(len(methods)):
        for j in range(len(domains)):
            if labels[i][j]:
                ax.text(j, i, labels[i][j], ha="center", va="center", fontsize=6,
                        color="white" if grid[i, j] < 0.55 else "black")
    ax.set_xticks(np.arange(len(domains)), domains, fontsize=8)
    ax.set_yticks(np.arange(len(methods)), names, fontsize=7)
    ax.xaxis.tick_top()
    fig.colorbar(image, ax=ax, label="held-out coverage", shrink=0.6)
    return _save(fig, path)


def _encoding(x: str, y: str, x_title: str, y_title: str, y_max: float) -> dict:
    return {"x": {"field": x, "type": "quantitative", "title": x_title},
            "y": {"field": y, "type": "quantitative", "title": y_title, "scale": {"domain": [0, y_max]}}}


#: Vega-Lite templates for ``dvc plots`` (``<DVC_METRIC_*>`` anchors; DVC adds ``rev``).
TEMPLATES: dict[str, dict] = {
    "coverage_by_size": {
        "$schema": "https://vega.github.io/schema/vega-lite/v5.json",
        "data": {"values": "<DVC_METRIC_DATA>"}, "title": "<DVC_METRIC_TITLE>",
        "facet": {"row": {"field": "row", "type": "nominal", "title": None},
                  "column": {"field": "domain", "type": "nominal", "title": None}},
        "resolve": {"scale": {"x": "independent"}},
        "spec": {"width": 200, "height": 140, "layer": [
            {"transform": [{"filter": "datum.kind != 'model'"}],
             "mark": {"type": "line", "color": "#999999", "strokeWidth": 1},
             "encoding": {**_encoding("<DVC_METRIC_X>", "<DVC_METRIC_Y>", "instance size", "coverage", 1),
                          "detail": {"field": "method", "type": "nominal"},
                          "strokeDash": {"field": "kind", "type": "nominal", "title": "reference"},
                          "tooltip": [{"field": "method"}, {"field": "rev"}, {"field": "<DVC_METRIC_Y>"}]}},
            {"transform": [{"filter": "datum.kind == 'model'"}], "mark": {"type": "line", "point": True},
             "encoding": {**_encoding("<DVC_METRIC_X>", "<DVC_METRIC_Y>", "instance size", "coverage", 1),
                          "color": {"field": "method", "type": "nominal"},
                          "opacity": {"field": "rev", "type": "nominal", "legend": None},
                          "tooltip": [{"field": "method"}, {"field": "rev"}, {"field": "<DVC_METRIC_Y>"}]}},
        ]},
    },
    "coverage_by_domain": {
        "$schema": "https://vega.github.io/schema/vega-lite/v5.json",
        "data": {"values": "<DVC_METRIC_DATA>"}, "title": "<DVC_METRIC_TITLE>",
        "facet": {"column": {"field": "rev", "type": "nominal", "title": None}},
        "spec": {"layer": [
            {"mark": "rect",
             "encoding": {"x": {"field": "<DVC_METRIC_X>", "type": "nominal", "title": None},
                          "y": {"field": "method", "type": "nominal", "sort": None, "title": None},
                          "color": {"field": "<DVC_METRIC_Y>", "type": "quantitative", "title": "coverage",
                                    "scale": {"domain": [0, 1], "scheme": "viridis"}},
                          "tooltip": [{"field": "method"}, {"field": "<DVC_METRIC_X>"}, {"field": "solved"},
                                      {"field": "n"}, {"field": "<DVC_METRIC_Y>"}]}},
            {"mark": {"type": "text", "fontSize": 8},
             "encoding": {"x": {"field": "<DVC_METRIC_X>", "type": "nominal"},
                          "y": {"field": "method", "type": "nominal", "sort": None},
                          "text": {"field": "<DVC_METRIC_Y>", "type": "quantitative", "format": ".2f"}}},
        ]},
    },
    "hit5_by_protocol": {
        "$schema": "https://vega.github.io/schema/vega-lite/v5.json",
        "data": {"values": "<DVC_METRIC_DATA>"}, "title": "<DVC_METRIC_TITLE>",
        "facet": {"row": {"field": "row", "type": "nominal", "title": None}},
        "spec": {"width": 520, "height": 140, "layer": [
            {"transform": [{"filter": "datum.kind != 'floor'"}], "mark": "bar",
             "encoding": {"x": {"field": "<DVC_METRIC_X>", "type": "nominal", "title": None, "sort": None},
                          "xOffset": {"field": "method", "type": "nominal"},
                          "y": {"field": "<DVC_METRIC_Y>", "type": "quantitative", "title": "Hit@5 (%)",
                                "scale": {"domain": [0, 100]}},
                          "color": {"field": "method", "type": "nominal"},
                          "opacity": {"field": "rev", "type": "nominal", "legend": None},
                          "tooltip": [{"field": "method"}, {"field": "rev"}, {"field": "<DVC_METRIC_Y>"}]}},
            {"transform": [{"filter": "datum.kind == 'floor'"}],
             "mark": {"type": "tick", "color": "black", "thickness": 2},
             "encoding": {"x": {"field": "<DVC_METRIC_X>", "type": "nominal", "sort": None},
                          "y": {"field": "<DVC_METRIC_Y>", "type": "quantitative"},
                          "shape": {"field": "method", "type": "nominal", "title": "floor"},
                          "tooltip": [{"field": "method"}, {"field": "rev"}, {"field": "<DVC_METRIC_Y>"}]}},
        ]},
    },
}


def write_plots(
    by_domain: pd.DataFrame,
    by_size: pd.DataFrame,
    pool_summary: pd.DataFrame | None,
    sums: pd.DataFrame,
    family: Mapping[str, str],
    traits: Mapping[str, ReportTraits] | None,
    plot_dir: Path,
) -> list[Plot]:
    """Write every plot's PNG, data file and template under ``plot_dir``; returns the
    :class:`Plot` entries the pages link (paths relative to ``reports/``).
    The coverage PNG is always written (a placeholder without plan results)."""
    traits = traits or {}
    plot_dir = Path(plot_dir)
    plot_dir.mkdir(parents=True, exist_ok=True)
    for name, template in TEMPLATES.items():
        atomic_write_json(plot_dir / f"{name}.vl.json", template)
    cov_rows = coverage_plot_data(by_size, traits)
    atomic_write_json(plot_dir / "coverage_by_size.json", cov_rows)
    plot_coverage_by_size(cov_rows, plot_dir / COVERAGE_PLOT)
    plots = [Plot("coverage vs instance size", f"{PLOTS_DIR}/{COVERAGE_PLOT}", "coverage.md")]
    heat_rows = domain_heatmap_data(by_domain, family, traits)
    atomic_write_json(plot_dir / "coverage_by_domain.json", heat_rows)
    plot_domain_heatmap(heat_rows, plot_dir / DOMAIN_HEATMAP)
    plots.append(Plot("held-out coverage per domain and method (heatmap)", f"{PLOTS_DIR}/{DOMAIN_HEATMAP}",
                      "per-domain.md"))
    atomic_write_json(plot_dir / f"{HELD_OUT_PLOT}.json", held_out_plot_data(sums, family, traits))
    hit_rows = hit5_plot_data(pool_summary, family, traits)
    atomic_write_json(plot_dir / "hit5_by_protocol.json", hit_rows)
    stale = plot_dir / HITK_PLOT
    if plot_hit5_by_protocol(hit_rows, stale):
        plots.append(Plot("Hit@5 by protocol (candidate pool)", f"{PLOTS_DIR}/{HITK_PLOT}", "pool.md"))
    elif stale.exists():
        stale.unlink()
    return plots


# -- per-problem scatter plots (planarena compare, the ablations page) ------------------------------

#: Vega-Lite template of a per-problem scatter (``planarena compare``; rows of
#: :func:`plot_scatter`): a panel per ``metric``, a point per problem coloured by domain, its shape
#: saying which method solved it, and the diagonal (equal values) as a dashed rule. Symlog axes, so
#: that zero plan lengths and times spanning decades both show.
SCATTER_TEMPLATE: dict = {
    "$schema": "https://vega.github.io/schema/vega-lite/v5.json",
    "data": {"values": "<DVC_METRIC_DATA>"}, "title": "<DVC_METRIC_TITLE>",
    "facet": {"column": {"field": "metric", "type": "nominal", "title": None}},
    "resolve": {"scale": {"x": "independent", "y": "independent"}},
    "spec": {"width": 220, "height": 220, "layer": [
        {"mark": {"type": "point", "filled": True},
         "encoding": {"x": {"field": "<DVC_METRIC_X>", "type": "quantitative", "title": "<DVC_METRIC_X_LABEL>",
                            "scale": {"type": "symlog"}},
                      "y": {"field": "<DVC_METRIC_Y>", "type": "quantitative", "title": "<DVC_METRIC_Y_LABEL>",
                            "scale": {"type": "symlog"}},
                      "color": {"field": "domain", "type": "nominal"},
                      "shape": {"field": "solved", "type": "nominal"},
                      "tooltip": [{"field": "domain"}, {"field": "split"}, {"field": "problem"},
                                  {"field": "solved"}, {"field": "<DVC_METRIC_X>"}, {"field": "<DVC_METRIC_Y>"}]}},
        {"transform": [{"aggregate": [{"op": "min", "field": "<DVC_METRIC_X>", "as": "x0"},
                                      {"op": "min", "field": "<DVC_METRIC_Y>", "as": "y0"},
                                      {"op": "max", "field": "<DVC_METRIC_X>", "as": "x1"},
                                      {"op": "max", "field": "<DVC_METRIC_Y>", "as": "y1"}]},
                       {"calculate": "min(datum.x0, datum.y0)", "as": "lo"},
                       {"calculate": "max(datum.x1, datum.y1)", "as": "hi"}],
         "mark": {"type": "rule", "strokeDash": [4, 4], "color": "#999999"},
         "encoding": {"x": {"field": "lo", "type": "quantitative"}, "y": {"field": "lo", "type": "quantitative"},
                      "x2": {"field": "hi"}, "y2": {"field": "hi"}}},
    ]},
}


@dataclass(frozen=True)
class ScatterPanel:
    """One panel of :func:`plot_scatter`: the rows whose ``metric`` is ``metric``, its title
    (with the unit), whether both axes are logarithmic, and ``limit``: a value drawn as dotted lines
    on both axes (the time limit at which unsolved attempts are drawn), or None."""

    metric: str
    title: str
    log: bool = False
    limit: float | None = None


def plot_scatter(rows: Sequence[Mapping], panels: Sequence[ScatterPanel], x_title: str, y_title: str,
                 path: str | os.PathLike) -> Path:
    """Write a per-problem scatter PNG (Downward Lab's ``ScatterPlotReport``): a panel per entry of
    ``panels`` holding the rows (keys metric, domain, x, y, solved) of its metric, method A on x and
    B on y, a point per problem coloured by domain (filled: solved by both; hollow: not), the
    diagonal dashed. Log panels raise values below :data:`planarena.report.metrics.MIN_TIME_S` to it
    (log 0 is undefined). A panel without rows says so. Agg canvas, no PNG ``Software`` metadata:
    identical rows give identical bytes. Returns ``path``."""
    from matplotlib import colormaps

    from planarena.report.metrics import MIN_TIME_S

    data = pd.DataFrame(list(rows), columns=["metric", "domain", "x", "y", "solved"])
    panels = list(panels) or [ScatterPanel("", "no data")]
    fig = _new_figure(1, len(panels), 3.8, 3.6)
    axes = fig.subplots(1, len(panels), squeeze=False)[0]
    domains = sorted(set(data["domain"]))
    palette = colormaps["tab10" if len(domains) <= 10 else "tab20"]
    colour = {d: palette(j % palette.N) for j, d in enumerate(domains)}
    for ax, panel in zip(axes, panels, strict=True):
        d = data[data["metric"] == panel.metric]
        ax.set_title(panel.title, fontsize=9)
        ax.set_xlabel(x_title, fontsize=8)
        ax.set_ylabel(y_title, fontsize=8)
        if d.empty:
            ax.text(0.5, 0.5, "no problems to plot", ha="center", va="center", transform=ax.transAxes)
            continue
        xs, ys = d["x"].astype(float).to_numpy(), d["y"].astype(float).to_numpy()
        if panel.log:
            xs, ys = np.maximum(xs, MIN_TIME_S), np.maximum(ys, MIN_TIME_S)
        both = (d["solved"] == "both").to_numpy()
        for dom in domains:
            sel = (d["domain"] == dom).to_numpy()
            if sel.any():
                ax.scatter(xs[sel & both], ys[sel & both], s=16, color=colour[dom], label=dom)
                ax.scatter(xs[sel & ~both], ys[sel & ~both], s=16, facecolors="none", edgecolors=colour[dom])
        values = np.concatenate([xs, ys, [panel.limit] if panel.limit else []])
        lo, hi = float(values.min()), float(values.max())
        if panel.log:
            ax.set_xscale("log")
            ax.set_yscale("log")
            lo, hi = lo / 1.5, hi * 1.5
        else:
            pad = max(1.0, 0.05 * (hi - lo))
            lo, hi = lo - pad, hi + pad
        ax.plot([lo, hi], [lo, hi], color="gray", ls="--", lw=0.8)
        if panel.limit:
            ax.axvline(panel.limit, color="gray", ls=":", lw=0.8)
            ax.axhline(panel.limit, color="gray", ls=":", lw=0.8)
        ax.set_xlim(lo, hi)
        ax.set_ylim(lo, hi)
        ax.set_aspect("equal", adjustable="box")
        ax.grid(True, alpha=0.3)
    handles, labels = [], []
    for ax in axes:
        for h, label in zip(*ax.get_legend_handles_labels(), strict=True):
            if label not in labels:
                handles.append(h)
                labels.append(label)
    if handles:
        axes[-1].legend(handles, labels, fontsize=6, loc="upper left", bbox_to_anchor=(1.02, 1.0),
                        title="hollow: not solved by both", title_fontsize=6)
    return _save(fig, Path(path))
