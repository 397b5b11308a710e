"""Training budgets on the front page: each learned row's budget beside its paper's, and the line
that opens the page (the profile, what it is, and the committed runs at a paper's size).

A row's budget comes from :attr:`planarena.methods.base.ReportTraits.budget` (what the params of the
active profile make it train, and what its paper states); its training wall time from the records
(``extra.train_time_s``, the first value per (domain, seed), summed over domains, mean over seeds).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Iterable, Mapping, Sequence

from planarena.core.records import ResultRecord
from planarena.methods.base import Budget, ReportTraits
from planarena.report.records import latest_records

#: What each profile is, for the page's opening line.
PROFILES: dict[str, str] = {
    "smoke": "the CI-sized run (a few tiny problems, minimal training): it checks the pipeline, not the methods",
    "default": "a CPU-scale run on 2 cores (about 20 minutes, one seed; docs/cost.md) of the floors, the classical planners and "
               "each family's headline rows, not the papers' sizes: learned rows train at a small fraction "
               "of their papers' budgets (column *budget*); *at floor at this budget* says where that "
               "is not enough to learn (`profile=full` adds the ablations, the decoding variants and the "
               "rows kept off for time: `iw_ad`, `iw_ext`, `dias_names`)",
    "full": "every configured row at the default profile's sizes on 2 cores (ablations and decoding "
            "variants included), not the papers' sizes: learned rows train at a small fraction of "
            "their papers' budgets (column *budget*)",
    "paper": "the papers' problem counts, limits and training budgets",
}


def _count(n: int | None) -> str:
    if n is None:
        return "?"
    if n >= 1_000_000:
        return f"{n / 1_000_000:.3g}M"
    if n >= 10_000:
        return f"{n / 1_000:.3g}k"
    return f"{n:,}"


def format_budget(b: Budget, train_s: float | None = None) -> str:
    """``"12 DQN updates x 8 (0.04 % of paper), 41 s"``: the training length in the row's own unit
    (the head of :attr:`Budget.unit`: updates, epochs, boosting rounds) x batch (or the samples
    seen), the fraction of the paper's budget, and the training wall time per seed in seconds when
    known; a budget with no count shows its unit (a closed-form fit)."""
    short = b.unit.split(" (")[0].split(" over ")[0].split(" x ")[0]
    if b.steps is not None and b.batch is not None:
        own = f"{_count(b.steps)} {short} x {_count(b.batch)}"
    elif b.steps is not None:
        own = f"{_count(b.steps)} {short}"
    elif b.samples is not None:
        own = f"{_count(b.samples)} samples"
    else:
        own = short
    frac = b.fraction()
    share = f" ({_pct(frac)} of paper)" if frac is not None else " (paper: not stated)"
    time = f", {train_s:,.0f} s" if train_s is not None else ""
    return own + share + time


def _pct(x: float) -> str:
    pct = 100 * x
    if pct >= 10:
        return f"{pct:.0f} %"
    if pct >= 0.1:
        return f"{pct:.1f} %"
    return f"{pct:.2g} %"


def train_seconds(records: Iterable[ResultRecord]) -> dict[str, float]:
    """Per method, the training wall time of one seed in seconds: the first ``train_time_s`` of
    each (domain, seed), summed over domains, mean over seeds."""
    first: dict[tuple[str, str, int], float] = {}
    for r in latest_records(records):
        v = (r.extra or {}).get("train_time_s")
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            first.setdefault((r.method, r.domain, r.seed), float(v))
    per_seed: dict[str, dict[int, float]] = defaultdict(lambda: defaultdict(float))
    for (m, _, seed), v in first.items():
        per_seed[m][seed] += v
    return {m: sum(s.values()) / len(s) for m, s in per_seed.items()}


def budget_cells(records: Iterable[ResultRecord], traits: Mapping[str, ReportTraits]) -> dict[str, str]:
    """The *budget* column: per method with a declared budget, :func:`format_budget`."""
    seconds = train_seconds(records)
    return {m: format_budget(t.budget, seconds.get(m)) for m, t in traits.items() if t.budget is not None}


def opening_line(profile: str, runs: Sequence[Mapping] = (), description: str | None = None) -> str:
    """The front page's first line: the profile, what it is (``description``, params
    ``report.description``, for a run that changes a profile's sizes; else :data:`PROFILES`), and
    links to the other committed runs (``runs``: params ``report.paper_runs``, each ``{path, what}``
    with ``path`` relative to ``reports/``; ``what`` says the run's size against its paper)."""
    what = description or PROFILES.get(profile, "a custom profile")
    line = f"**Profile `{profile}`**: {what}."
    if runs:
        links = "; ".join(f"[{r['what']}]({r['path']})" for r in runs)
        line += f" Other committed runs (each label says its size against its paper): {links}."
    return line


__all__: Sequence[str] = ["PROFILES", "budget_cells", "format_budget", "opening_line", "train_seconds"]
