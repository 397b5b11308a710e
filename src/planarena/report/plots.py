"""The leaderboard's plots (DESIGN.md "Leaderboards": coverage vs instance size, Hit@k by
protocol), written as PNG files under ``reports/plots/``; the same data gives the same bytes."""

from __future__ import annotations

import math
import os
from collections import defaultdict
from pathlib import Path
from typing import Iterable, Mapping

import numpy as np
import pandas as pd

from planarena.core.problemset import ProblemEntry
from planarena.core.records import ResultRecord
from planarena.report.markdown import DASH
from planarena.report.metrics import Metric
from planarena.report.records import entries, method_order, plan_records_of

PLOTS_DIR = "plots"
COVERAGE_PLOT = "coverage_by_size.png"
HITK_PLOT = "hit5_by_protocol.png"

_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "<", ">")
_LINESTYLES = ("-", "--", "-.", ":")


def coverage_by_size(
    records: Iterable[ResultRecord], manifest: Iterable[ProblemEntry | Mapping]
) -> pd.DataFrame:
    """Coverage per (domain, method, instance size), over the splits the method was run on.

    ``coverage`` is the mean over the method's seeds in that domain of the fraction of instances
    of that size solved and validated. ``x`` is the manifest's ``size`` (or ``objects`` in a
    domain where no instance has a size); ``x_name`` names it for the axis (``size (blocks)``).
    Columns: domain, method, x_name, x, instances, coverage.
    """
    items = entries(manifest)
    latest = plan_records_of(records)
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
                rows.append(
                    dict(
                        domain=domain,
                        method=m,
                        x_name=x_label,
                        x=x,
                        instances=len(group),
                        coverage=float(np.mean(fractions)),
                    )
                )
    return pd.DataFrame(rows, columns=["domain", "method", "x_name", "x", "instances", "coverage"])


def plot_coverage_by_size(data: pd.DataFrame, path: str | os.PathLike) -> Path:
    """Write a PNG with one subplot per domain: coverage vs instance size, one line per method.

    ``data``: :func:`coverage_by_size`. Uses matplotlib's Agg canvas directly (no display, no
    global pyplot state) and strips the PNG ``Software`` metadata so that identical data gives
    identical bytes. Returns ``path``.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    domains = list(dict.fromkeys(data["domain"]))
    if not domains:
        fig = Figure(figsize=(5, 2))
        FigureCanvasAgg(fig)
        fig.text(0.5, 0.5, "no plan results to plot yet", ha="center", va="center")
    else:
        methods = list(dict.fromkeys(data["method"]))
        style = {
            m: (_MARKERS[i % len(_MARKERS)], _LINESTYLES[(i // len(_MARKERS)) % len(_LINESTYLES)])
            for i, m in enumerate(methods)
        }
        ncols = min(len(domains), 3)
        nrows = math.ceil(len(domains) / ncols)
        fig = Figure(figsize=(4.5 * ncols, 3.4 * nrows + 0.6), layout="constrained")
        FigureCanvasAgg(fig)
        axes = fig.subplots(nrows, ncols, squeeze=False)
        for i, domain in enumerate(domains):
            ax = axes[i // ncols][i % ncols]
            d = data[data["domain"] == domain]
            for m in methods:
                g = d[d["method"] == m]
                if g.empty:
                    continue
                marker, ls = style[m]
                ax.plot(g["x"], g["coverage"], marker=marker, linestyle=ls, label=m)
            ax.set_title(domain)
            ax.set_xlabel(f"instance {d['x_name'].iloc[0]}")
            ax.set_ylabel("coverage (solved and validated)")
            ax.set_ylim(-0.05, 1.05)
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
            ax.grid(True, alpha=0.3)
        for j in range(len(domains), nrows * ncols):
            axes[j // ncols][j % ncols].set_visible(False)
        handles, labels = [], []
        for ax in fig.axes:
            for h, label in zip(*ax.get_legend_handles_labels(), strict=True):
                if label not in labels:
                    handles.append(h)
                    labels.append(label)
        fig.legend(handles, labels, loc="outside lower center", ncols=min(len(labels), 4))
    fig.savefig(path, format="png", dpi=100, metadata={"Software": None})
    return path


def plot_hit5_by_protocol(summary: pd.DataFrame | None, path: Path) -> bool:
    """Grouped bars: Hit@5 (percent, mean over domains and seeds, std as error bar) per protocol,
    one bar per method, from :func:`planarena.report.sections.pool.pool_summary`; a dashed line at
    chance (5 of a pool of 128). Returns False (and writes nothing) without data."""
    if summary is None or summary.empty:
        return False
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    protos = list(dict.fromkeys(summary["protocol"]))
    methods = list(dict.fromkeys(summary["method"]))
    width = 0.8 / max(1, len(methods))
    fig, ax = plt.subplots(figsize=(min(15.0, 1.0 * len(protos) * max(1.5, len(methods) / 4) + 3), 4.5))
    colours = plt.get_cmap("tab20" if len(methods) > 10 else "tab10")
    for i, m in enumerate(methods):
        means, errs = [], []
        for p in protos:
            cell = summary[(summary["protocol"] == p) & (summary["method"] == m)]["Hit@5"]
            if cell.empty or cell.iloc[0] == DASH:
                means.append(np.nan)
                errs.append(0)
            else:
                mu, sd = Metric.parse(cell.iloc[0])
                means.append(mu)
                errs.append(sd)
        ax.bar(np.arange(len(protos)) + i * width, means, width, yerr=errs, label=m, capsize=2,
               color=colours(i % colours.N))  # fmt: skip
    ax.axhline(100 * 5 / 128, color="gray", ls="--", lw=1, label="chance (5/128)")
    ax.set_xticks(np.arange(len(protos)) + width * (len(methods) - 1) / 2, protos)
    ax.set_ylabel("Hit@5 (%)")
    ax.set_ylim(0, 100)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    ax.set_title("Hit@5 by protocol (pool of 128)")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True
