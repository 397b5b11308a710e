"""``planarena compare A B``: a per-problem comparison of two plan methods on their common problems
(docs/concepts.md#comparing-two-methods), in the manner of Downward Lab's ``ComparativeReport`` and
``ScatterPlotReport`` (Seipp, Pommerening, Sievers & Helmert 2017, "Downward Lab",
doi:10.5281/zenodo.790461).

What is compared, from the latest ``plan`` records (:func:`planarena.results.records.plan_records_of`)
as solved matrices (:class:`planarena.results.matrices.SolvedMatrices`: a row per problem, a column
per seed):

* **Common problems**: (domain, split, problem) that both methods attempted, on the held-out splits
  by default (:func:`planarena.config.is_held_out`).
* **Seeds**: where both methods ran several seeds, the seeds both ran (matched); otherwise (a
  deterministic method with one run against a method of three seeds) each method's own seeds, and a
  problem's value is its solved fraction over them. A selected seed without a record on a common
  problem counts as unsolved (as in the coverage table) and is counted in ``missing``.
* **Coverage**: :func:`planarena.stats.paired_coverage` on the solved matrices (McNemar's
  exact test for one run each, else the paired sign-flip permutation test of the per-problem solved
  fractions); the **discordant problems** (solved fractions differ) are listed one by one.
* **Plan length** on the commonly solved problems (each method solved it in at least one seed; the
  value is the mean over its solved seeds): :func:`planarena.stats.paired_scores` (Wilcoxon
  signed-rank), and the largest differences as a second table.
* **Scatter plots**, one point per common problem (:func:`planarena.report.plots.plot_scatter`):
  plan length (commonly solved), time per problem (the record's ``wall_time``, mean over seeds; an
  unsolved attempt is drawn at the time limit ``T``, as Downward Lab does), and expansions where both
  methods' records carry ``extra["expansions"]`` (Fast Downward and WL-GOOSE do; the state-centric
  decoders record decoding ``steps`` instead, so a pair without expansions gets no such panel).
  Each as PNG, JSON data (flat rows) and a Vega-Lite template (:data:`plots.SCATTER_TEMPLATE`).

The ablations page of the report (``detail/ablations.md``) renders the same comparison for the
pairs each method declares in :attr:`planarena.methods.base.ReportTraits.ablations`.
"""

from __future__ import annotations

import math
import shutil
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from planarena.config import is_held_out
from planarena.core.io import atomic_write_json, atomic_write_text
from planarena.core.records import ResultRecord
from planarena.methods.base import ReportTraits
from planarena.paramkeys import suggestion
from planarena.report import plots as plotting
from planarena.report.markdown import DASH, md_table, md_text
from planarena.report.records import plan_records_of, split_sort_key
from planarena.results.matrices import SolvedMatrices
from planarena.stats import ALPHA, PairedTest, holm, paired_coverage, paired_scores

#: Rows of the table of the largest plan-length differences.
TOP_LENGTH_DIFFS = 10
#: File names of one comparison's plot, data and template (in its folder).
SCATTER_PNG = "scatter.png"
SCATTER_DATA = "scatter.json"
SCATTER_TEMPLATE = "scatter.vl.json"
#: Page of the report with the declared ablation pairs, and the plots' folder under ``reports/plots``.
ABLATIONS_PAGE = "ablations.md"
ABLATIONS_DIR = "ablations"


@dataclass(frozen=True)
class Comparison:
    """Method ``a`` against method ``b`` on their common problems (:func:`compare`).

    Attributes:
        a, b: method names.
        seeds_a, seeds_b: the seeds used for each (equal when ``matched``).
        matched: the same seeds were used for both (both ran several seeds, or the same single one).
        splits: the splits of the common problems, in display order.
        time_limit: ``T`` in seconds: an unsolved attempt counts as ``T`` in the time per problem.
        time_limit_source: where ``T`` comes from (``"time limit"`` or
            ``"largest time recorded"`` when no limit was given).
        problems: one row per common problem, sorted (domain, split, problem): ``domain``,
            ``split``, ``problem``, and per method (prefix ``a_`` / ``b_``): ``runs`` (seeds),
            ``solved`` (fraction of the seeds solved and validated), ``outcomes`` (text, e.g.
            ``"solved"`` or ``"solved ×2, timeout"``), ``length`` (mean plan length over the
            solved seeds; NaN if none), ``time`` (mean wall time over the seeds in seconds, an
            unsolved seed at ``T``), ``expansions`` (mean ``extra["expansions"]`` over the solved
            seeds that record it; NaN if none).
        coverage: the paired coverage test (``a_better``: problems where A's solved fraction is
            higher), None without common problems.
        length: Wilcoxon signed-rank test of plan length over the commonly solved problems
            (``a_better``: problems where A's plan is *longer*; ``diff``: mean A - B in steps),
            None when no problem is commonly solved.
        missing: attempts (common problem, selected seed) without a record, counted unsolved.
    """

    a: str
    b: str
    seeds_a: tuple[int, ...]
    seeds_b: tuple[int, ...]
    matched: bool
    splits: tuple[str, ...]
    time_limit: float
    time_limit_source: str
    problems: pd.DataFrame
    coverage: PairedTest | None
    length: PairedTest | None
    missing: int

    @property
    def n(self) -> int:
        """Common problems."""
        return len(self.problems)

    def common_solved(self) -> pd.DataFrame:
        """Rows of :attr:`problems` that both methods solved in at least one seed."""
        p = self.problems
        return p[(p["a_solved"] > 0) & (p["b_solved"] > 0)]

    def has_expansions(self) -> bool:
        """Whether some commonly solved problem has expansions recorded by both methods."""
        s = self.common_solved()
        return bool((s["a_expansions"].notna() & s["b_expansions"].notna()).any())


def _label(r: ResultRecord) -> str:
    if r.counts_as_solved:
        return "solved"
    return "plan rejected" if r.outcome == "solved" else r.outcome


def _outcomes(labels: Sequence[str]) -> str:
    counts = Counter(labels)
    return ", ".join(k if v == 1 else f"{k} ×{v}" for k, v in sorted(counts.items()))


def _mean(values: Sequence[float]) -> float:
    return float(np.mean(values)) if values else math.nan


def _choose_seeds(a: set[int], b: set[int]) -> tuple[tuple[int, ...], tuple[int, ...], bool]:
    both = a & b
    if (len(a) > 1 and len(b) > 1 and both) or (a == b):
        return tuple(sorted(both)), tuple(sorted(both)), True
    return tuple(sorted(a)), tuple(sorted(b)), False


def methods_with_plan_records(records: Iterable[ResultRecord]) -> list[str]:
    """Sorted names of the methods with at least one latest ``plan`` record."""
    return sorted({r.method for r in plan_records_of(records)})


def compare(
    records: Iterable[ResultRecord],
    a: str,
    b: str,
    splits: Sequence[str] | None = None,
    time_limit: float | None = None,
    seed: int = 0,
) -> Comparison:
    """Compare the ``plan`` records of methods ``a`` and ``b`` problem by problem (pure).

    ``records``: result records (superseded lines are dropped, :func:`plan_records_of`);
    ``splits``: the splits to compare on (None: every held-out split); ``time_limit``: ``T`` in
    seconds, at which unsolved attempts are drawn and averaged (None: the largest ``wall_time`` of
    the two methods' selected records, said in :attr:`Comparison.time_limit_source`); ``seed``: the
    generator seed of the permutation test's Monte-Carlo patterns (used only past
    :data:`planarena.stats.EXACT_LIMIT` differing problems), so the output is byte-stable.

    Raises:
        ValueError: ``a`` or ``b`` has no ``plan`` record (the message names the methods that
            have some), or ``a == b``.
    """
    if a == b:
        raise ValueError(f"compare: the two methods are the same ({a!r})")
    every = SolvedMatrices(records)
    known = every.methods()
    for m in (a, b):
        if m not in known:
            near = suggestion(m, known)
            hint = " (did you mean " + " or ".join(f"{n!r}" for n in near.split("` or `")) + "?)" if near else ""
            raise ValueError(f"compare: no plan records of method {m!r}{hint}; methods with plan records: "
                             f"{', '.join(known) or 'none'}")
    keep = (lambda s: s in splits) if splits is not None else is_held_out
    data = every.within({c for c in every.evaluated if keep(c[1])})
    seeds_a, seeds_b, matched = _choose_seeds(set(data.seeds.get(a, ())), set(data.seeds.get(b, ())))
    common = sorted(data.problems_of(a, seeds_a) & data.problems_of(b, seeds_b),
                    key=lambda k: (k[0], split_sort_key(k[1]), k[2]))
    # per method and common problem, its records under the selected seeds
    by_problem = {m: {k: {s: r for s in seeds if (r := data.record(m, k, s)) is not None} for k in common}
                  for m, seeds in ((a, seeds_a), (b, seeds_b))}
    times = [r.wall_time for m in (a, b) for k in common for r in by_problem[m][k].values()]
    if time_limit is None:
        limit, source = (max(times) if times else 0.0), "largest time recorded"
    else:
        limit, source = float(time_limit), "time limit"
    rows, missing = [], 0
    solved_a, _ = data.matrix_at(a, common, seeds_a)
    solved_b, _ = data.matrix_at(b, common, seeds_b)
    for i, key in enumerate(common):
        row: dict = dict(zip(("domain", "split", "problem"), key, strict=True))
        for m, prefix, seeds, matrix in ((a, "a", seeds_a, solved_a), (b, "b", seeds_b, solved_b)):
            recs = by_problem[m][key]
            missing += sum(s not in recs for s in seeds)
            good = [recs[s] for s in seeds if s in recs and recs[s].counts_as_solved]
            row[f"{prefix}_runs"] = len(seeds)
            row[f"{prefix}_solved"] = float(matrix[i].mean())
            row[f"{prefix}_outcomes"] = _outcomes([_label(recs[s]) if s in recs else "missing" for s in seeds])
            row[f"{prefix}_length"] = _mean([float(r.plan_length) for r in good if r.plan_length is not None])
            row[f"{prefix}_time"] = _mean([recs[s].wall_time if s in recs and recs[s].counts_as_solved
                                           else limit for s in seeds])
            row[f"{prefix}_expansions"] = _mean([float(r.extra["expansions"]) for r in good
                                                 if isinstance((r.extra or {}).get("expansions"), (int, float))])
        rows.append(row)
    columns = ["domain", "split", "problem"] + [f"{p}_{c}" for p in "ab" for c in
                                                ("runs", "solved", "outcomes", "length", "time", "expansions")]
    problems = pd.DataFrame(rows, columns=columns)
    cov = paired_coverage(solved_a, solved_b, seed) if common else None
    both = problems[(problems["a_solved"] > 0) & (problems["b_solved"] > 0)]
    both = both[both["a_length"].notna() & both["b_length"].notna()]
    length = paired_scores(both["a_length"].tolist(), both["b_length"].tolist()) if len(both) else None
    return Comparison(a=a, b=b, seeds_a=seeds_a, seeds_b=seeds_b, matched=matched,
                      splits=tuple(sorted(set(problems["split"]), key=split_sort_key)),
                      time_limit=limit, time_limit_source=source, problems=problems, coverage=cov,
                      length=length, missing=missing)


# -- tables -----------------------------------------------------------------------------------------

def _solved_cell(fraction: float, runs: int) -> str:
    if runs == 1:
        return "yes" if fraction > 0 else "no"
    return f"{round(fraction * runs)}/{runs}"


def _num(x: float, spec: str = ".1f") -> str:
    """``x`` with ``spec`` (a whole number without decimals); :data:`DASH` for None or NaN."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return DASH
    return f"{x:{spec[:-2] + '0f'}}" if float(x).is_integer() else f"{x:{spec}}"


def discordant_table(c: Comparison) -> pd.DataFrame:
    """The discordant problems (the two solved fractions differ), one row each, sorted (domain,
    split, problem): solved (``yes`` / ``no`` for one run, ``k/n`` over seeds), outcomes and plan
    length (mean over solved seeds) of each method."""
    p = c.problems[c.problems["a_solved"] != c.problems["b_solved"]]
    return pd.DataFrame({
        "domain": p["domain"], "split": p["split"], "problem": p["problem"],
        f"{c.a} solved": [_solved_cell(f, n) for f, n in zip(p["a_solved"], p["a_runs"], strict=True)],
        f"{c.b} solved": [_solved_cell(f, n) for f, n in zip(p["b_solved"], p["b_runs"], strict=True)],
        f"{c.a} outcome": [md_text(o) for o in p["a_outcomes"]],
        f"{c.b} outcome": [md_text(o) for o in p["b_outcomes"]],
        f"{c.a} length": [_num(x) for x in p["a_length"]],
        f"{c.b} length": [_num(x) for x in p["b_length"]],
    }, columns=["domain", "split", "problem", f"{c.a} solved", f"{c.b} solved", f"{c.a} outcome",
                f"{c.b} outcome", f"{c.a} length", f"{c.b} length"])


def length_diff_table(c: Comparison, top: int = TOP_LENGTH_DIFFS) -> pd.DataFrame:
    """The ``top`` commonly solved problems with the largest plan-length difference ``|A - B|``
    (mean over solved seeds; ties by domain, split, problem), zero differences left out."""
    s = c.common_solved()
    s = s[s["a_length"].notna() & s["b_length"].notna()].copy()
    s["diff"] = s["a_length"] - s["b_length"]
    s = s[s["diff"] != 0]
    order = sorted(range(len(s)), key=lambda i: (-abs(s["diff"].iloc[i]), s["domain"].iloc[i],
                                                  split_sort_key(s["split"].iloc[i]), s["problem"].iloc[i]))
    s = s.iloc[order[:top]]
    return pd.DataFrame({
        "domain": s["domain"], "split": s["split"], "problem": s["problem"],
        f"{c.a} length": [_num(x) for x in s["a_length"]], f"{c.b} length": [_num(x) for x in s["b_length"]],
        f"{c.a} - {c.b}": [_num(x, "+.1f") for x in s["diff"]],
    }, columns=["domain", "split", "problem", f"{c.a} length", f"{c.b} length", f"{c.a} - {c.b}"])


def domain_table(c: Comparison) -> pd.DataFrame:
    """Per domain: common problems, problems solved by each method (sum of the per-problem solved
    fractions, so a 3-seed method's 2/3 counts 0.67), and the discordant counts either way."""
    rows = []
    for dom, g in c.problems.groupby("domain", sort=True):
        rows.append({"domain": dom, "problems": str(len(g)), f"{c.a} solved": _count(g["a_solved"].sum()),
                     f"{c.b} solved": _count(g["b_solved"].sum()),
                     f"{c.a} better": str(int((g["a_solved"] > g["b_solved"]).sum())),
                     f"{c.b} better": str(int((g["b_solved"] > g["a_solved"]).sum()))})
    return pd.DataFrame(rows, columns=["domain", "problems", f"{c.a} solved", f"{c.b} solved",
                                       f"{c.a} better", f"{c.b} better"])


def _count(x: float) -> str:
    return f"{x:.0f}" if float(x).is_integer() else f"{x:.2f}"


def _p(p: float) -> str:
    return f"{p:.3g}" if p >= 1e-4 else f"{p:.1e}"


def coverage_line(c: Comparison) -> str:
    """One sentence: solved counts, discordant problems either way and the paired test's p-value."""
    if c.coverage is None:
        return f"No common problems of `{c.a}` and `{c.b}`."
    t = c.coverage
    test = "McNemar's exact test" if t.test == "mcnemar" else "paired sign-flip permutation test"
    verdict = "different" if t.p < ALPHA else "not significantly different"
    return (f"Coverage on {t.n} common problems: `{c.a}` solves {_count(c.problems['a_solved'].sum())}, "
            f"`{c.b}` {_count(c.problems['b_solved'].sum())}; `{c.a}` better on {t.a_better}, "
            f"`{c.b}` better on {t.b_better} ({test}, p = {_p(t.p)}: {verdict} at α = {ALPHA}).")


def length_line(c: Comparison) -> str:
    """One sentence on plan length over the commonly solved problems (Wilcoxon signed-rank)."""
    if c.length is None:
        return "Plan length: no commonly solved problem."
    t = c.length
    return (f"Plan length on {t.n} commonly solved problems: `{c.a}` longer on {t.a_better}, "
            f"`{c.b}` longer on {t.b_better}, mean difference {c.a} - {c.b} = {t.diff:+.2f} steps "
            f"(Wilcoxon signed-rank, p = {_p(t.p)}).")


def _seeds(seeds: Sequence[int]) -> str:
    return f"{len(seeds)} run{'s' * (len(seeds) != 1)} (seed{'s' * (len(seeds) != 1)} {', '.join(map(str, seeds))})"


def setting_line(c: Comparison) -> str:
    """Which problems and seeds are compared and how time is counted."""
    seeds = (f"both on {_seeds(c.seeds_a)}" if c.matched
             else f"`{c.a}` {_seeds(c.seeds_a)}, `{c.b}` {_seeds(c.seeds_b)}; each problem's solved "
                  "fraction over its seeds is compared")
    miss = f" {c.missing} selected attempts have no record and count as unsolved." if c.missing else ""
    return (f"Common problems: {c.n} ({', '.join(c.splits) or 'no splits'}); seeds: {seeds}. Time per "
            f"problem: the record's wall time, mean over seeds, an unsolved attempt counted at "
            f"T = {c.time_limit:g} s ({c.time_limit_source}).{miss}")


# -- plots ------------------------------------------------------------------------------------------

def scatter_rows(c: Comparison) -> list[dict]:
    """The rows of ``scatter.json``: per metric (``plan length``, ``time (s)``, ``expansions``) one
    row per plotted problem: metric, domain, split, problem, solved (``both``, ``<A> only``,
    ``<B> only``, ``neither``), a (method A's value), b (method B's). Plan length and expansions
    over the commonly solved problems (expansions only where both record them); time over every
    common problem, unsolved at ``T``. Values rounded to 4 decimals; sorted (metric, domain,
    split, problem)."""
    out = []
    for r in c.problems.to_dict("records"):
        sa, sb = r["a_solved"] > 0, r["b_solved"] > 0
        solved = "both" if sa and sb else f"{c.a} only" if sa else f"{c.b} only" if sb else "neither"
        base = {"domain": r["domain"], "split": r["split"], "problem": r["problem"], "solved": solved}
        if sa and sb and not (math.isnan(r["a_length"]) or math.isnan(r["b_length"])):
            out.append({"metric": "plan length", **base, "a": round(r["a_length"], 4), "b": round(r["b_length"], 4)})
        out.append({"metric": "time (s)", **base, "a": round(r["a_time"], 4), "b": round(r["b_time"], 4)})
        if sa and sb and not (math.isnan(r["a_expansions"]) or math.isnan(r["b_expansions"])):
            out.append({"metric": "expansions", **base, "a": round(r["a_expansions"], 4),
                        "b": round(r["b_expansions"], 4)})
    order = {"plan length": 0, "time (s)": 1, "expansions": 2}
    return sorted(out, key=lambda x: (order[x["metric"]], x["domain"], split_sort_key(x["split"]), x["problem"]))


def scatter_panels(c: Comparison) -> list[plotting.ScatterPanel]:
    """The panels of the scatter PNG: plan length, time per problem (log, the limit dotted), and
    expansions (log) when :meth:`Comparison.has_expansions`."""
    panels = [plotting.ScatterPanel("plan length", "plan length (commonly solved)"),
              plotting.ScatterPanel("time (s)", f"time per problem (s); unsolved at T = {c.time_limit:g} s",
                                    log=True, limit=c.time_limit or None)]
    if c.has_expansions():
        panels.append(plotting.ScatterPanel("expansions", "expansions (commonly solved)", log=True))
    return panels


def write_plots(c: Comparison, folder: str | Path) -> list[Path]:
    """Write ``scatter.png``, ``scatter.json`` (:func:`scatter_rows`) and ``scatter.vl.json``
    (:data:`planarena.report.plots.SCATTER_TEMPLATE`; ``dvc plots show <folder>/scatter.json
    --template <folder>/scatter.vl.json -x a -y b``) into ``folder``; returns their paths."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    rows = scatter_rows(c)
    atomic_write_json(folder / SCATTER_DATA, rows)
    atomic_write_json(folder / SCATTER_TEMPLATE, plotting.SCATTER_TEMPLATE)
    plotting.plot_scatter([{"metric": r["metric"], "domain": r["domain"], "x": r["a"], "y": r["b"],
                            "solved": r["solved"]} for r in rows],
                          scatter_panels(c), c.a, c.b, folder / SCATTER_PNG)
    return [folder / SCATTER_PNG, folder / SCATTER_DATA, folder / SCATTER_TEMPLATE]


# -- pages ------------------------------------------------------------------------------------------

def render(c: Comparison, plot_dir: str | None = ".", level: int = 1, intro: str = "") -> list[str]:
    """The markdown lines of one comparison: heading (at ``level``), ``intro`` (a line, when
    given), setting, the coverage and plan length tests, the per-domain table, the discordant
    problems, the largest plan-length differences, and the scatter PNG (``plot_dir``: its folder
    relative to the page; None: no image)."""
    h = "#" * level
    lines = [f"{h} `{c.a}` vs `{c.b}`", "", *([intro, ""] if intro else []), setting_line(c), "",
             f"- {coverage_line(c)}", f"- {length_line(c)}", ""]
    if c.n == 0:
        return lines
    lines += [f"{h}# Per domain", "", md_table(domain_table(c)), ""]
    disc = discordant_table(c)
    lines += [f"{h}# Discordant problems", "", "Solved by one method and not the other (over seeds: the "
              "solved fractions differ)." if len(disc) else "None: both methods solve the same problems.", ""]
    if len(disc):
        lines += [md_table(disc), ""]
    diffs = length_diff_table(c)
    lines += [f"{h}# Largest plan-length differences", ""]
    lines += ([f"Commonly solved problems, largest |{c.a} - {c.b}| first (at most {TOP_LENGTH_DIFFS}).", "",
               md_table(diffs), ""] if len(diffs) else ["None: every commonly solved problem has equal lengths.", ""])
    if plot_dir is not None:
        lines += [f"{h}# Scatter plots", "",
                  f"One point per common problem, `{c.a}` on x and `{c.b}` on y (below the diagonal: "
                  f"`{c.b}` smaller); data `{SCATTER_DATA}`, Vega-Lite template `{SCATTER_TEMPLATE}`.", "",
                  f"![{c.a} vs {c.b}]({plot_dir}/{SCATTER_PNG})", ""]
    return lines


def write_compare(c: Comparison, out: str | Path) -> Path:
    """Write ``<out>/compare.md`` (:func:`render`) and the scatter plot files (:func:`write_plots`);
    returns the page's path."""
    out = Path(out)
    write_plots(c, out)
    page = out / "compare.md"
    atomic_write_text(page, "\n".join(render(c, ".")).rstrip("\n") + "\n")
    return page


def time_limit_of(params: Mapping, method: str) -> float | None:
    """The time limit in seconds ``method``'s plan attempts ran under, from params: its block's
    ``time_limit``; for a Fast Downward configuration (a class with a ``config_name``)
    ``planners.<config>.time_limit``, which it runs with; else (also for a method without a block)
    ``evaluation.time_limit`` (:mod:`planarena.protocols.coverage`). None when params give none."""
    from planarena.methods import resolve

    try:
        cls, config = resolve(method, dict(params))
    except KeyError:
        cls, config = None, {}
    planners = params.get("planners") or {}
    planner = planners.get(getattr(cls, "config_name", "") or "") if isinstance(planners, Mapping) else None
    for value in (config.get("time_limit"), (planner or {}).get("time_limit") if isinstance(planner, Mapping) else None,
                  (params.get("evaluation") or {}).get("time_limit")):
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
    return None


def run_compare(params: Mapping, results_dir: str | Path, a: str, b: str, out: str | Path | None = None,
                splits: Sequence[str] | None = None) -> tuple[Comparison, Path]:
    """What ``planarena compare A B`` runs: read ``<results_dir>/*.jsonl``, compare (``T``: the
    larger of the two methods' time limits, :func:`time_limit_of`; the Monte-Carlo seed: params
    ``seed``, else 0) and write ``compare.md`` and the plots into ``out`` (default
    ``reports/compare/<A>-vs-<B>``). Returns the comparison and the page's path.

    Raises:
        ValueError: a method without plan records (one line naming those that have some).
    """
    from planarena.core.records import iter_records

    files = sorted(Path(results_dir).glob("*.jsonl")) if Path(results_dir).is_dir() else []
    limits = [t for t in (time_limit_of(params, a), time_limit_of(params, b)) if t is not None]
    seed = params.get("seed", 0)
    c = compare(list(iter_records(files)), a, b, splits=splits, time_limit=max(limits) if limits else None,
                seed=seed if isinstance(seed, int) else 0)
    page = write_compare(c, out if out is not None else Path("reports") / "compare" / f"{a}-vs-{b}")
    return c, page


# -- declared ablations (the report's detail/ablations.md) -----------------------------------------

@dataclass(frozen=True)
class Ablation:
    """A declared ablation pair (:attr:`ReportTraits.ablations`) and its comparison."""

    a: str
    b: str
    differs: str
    comparison: Comparison


def ablation_pairs(traits: Mapping[str, ReportTraits], methods: Iterable[str]) -> list[tuple[str, str, str]]:
    """``(a, b, what differs)`` for every pair some method declares in its
    :attr:`ReportTraits.ablations`, where both methods are in ``methods`` (those with records).
    A pair declared from both sides is listed once, as the first declaration in method order
    (sorted names) gives it; sorted by (a, b)."""
    have = set(methods)
    seen: dict[frozenset[str], tuple[str, str, str]] = {}
    for a in sorted(traits):
        for b, what in traits[a].ablations:
            if a in have and b in have and a != b:
                seen.setdefault(frozenset((a, b)), (a, b, what))
    return sorted(seen.values())


def ablations(records: Sequence[ResultRecord], traits: Mapping[str, ReportTraits], seed: int = 0,
              time_limits: Mapping[str, float] | None = None) -> list[Ablation]:
    """The comparison (:func:`compare` on the held-out splits) of every declared pair with plan
    records (:func:`ablation_pairs`). ``time_limits``: seconds per method (the report's
    ``ReportInputs.time_limits``); ``T`` of a pair is the larger of its two limits, or the largest
    time recorded for the pair when neither is known."""
    records = list(records)
    limits = time_limits or {}
    pairs = ablation_pairs(traits, methods_with_plan_records(records))
    out = []
    for a, b, what in pairs:
        known = [float(limits[m]) for m in (a, b) if m in limits]
        out.append(Ablation(a, b, what, compare(records, a, b, time_limit=max(known) if known else None, seed=seed)))
    return out


def pair_dir(a: str, b: str) -> str:
    """Folder of a pair's plots under ``reports/plots``: ``ablations/<a>-vs-<b>``."""
    return f"{ABLATIONS_DIR}/{a}-vs-{b}"


def render_ablations(items: Sequence[Ablation], plots_dir: str = "plots") -> list[str]:
    """The body of ``detail/ablations.md``: a summary table (pair, what differs, common problems,
    solved, discordant either way, test, p and Holm-adjusted p across the pairs), then a section per
    pair (:func:`render` with its scatter plot from ``../<plots_dir>/<pair_dir>``)."""
    lines = ["## Ablations", ""]
    if not items:
        return lines + ["No declared ablation pair has plan records of both methods.", ""]
    tested = [x.comparison.coverage.p if x.comparison.coverage else math.nan for x in items]
    adjusted = holm(tested)
    rows = []
    for x, p, q in zip(items, tested, adjusted, strict=True):
        c = x.comparison
        t = c.coverage
        rows.append({"A": f"`{x.a}`", "B": f"`{x.b}`", "differs": md_text(x.differs), "problems": str(c.n),
                     "A solved": _count(c.problems["a_solved"].sum()) if c.n else DASH,
                     "B solved": _count(c.problems["b_solved"].sum()) if c.n else DASH,
                     "A better": str(t.a_better) if t else DASH, "B better": str(t.b_better) if t else DASH,
                     "test": t.test if t else DASH, "p": _p(p) if t else DASH, "Holm p": _p(q) if t else DASH})
    lines += ["Each pair a method family declares as one of its paper's ablations, compared on the common "
              "held-out problems: the paired coverage test (McNemar's exact test for one run each, else "
              "the paired sign-flip permutation test of the per-problem solved fractions), with Holm's "
              f"correction across the {len(items)} pair{'s' * (len(items) != 1)} (α = {ALPHA}). Time "
              "per problem counts an unsolved attempt at T, the larger of the pair's time limits "
              "(each pair's setting line says where T comes from). The same comparison for any two "
              "methods: `planarena compare A B`.", "",
              md_table(pd.DataFrame(rows)), ""]
    for x in items:
        lines += render(x.comparison, f"../{plots_dir}/{pair_dir(x.a, x.b)}", level=3,
                        intro=f"What differs: {md_text(x.differs)}.")
    return lines


def write_ablation_plots(items: Sequence[Ablation], plots_dir: str | Path) -> None:
    """Write each pair's scatter files under ``<plots_dir>/ablations/<a>-vs-<b>/`` and remove the
    folders of pairs no longer compared, so the folder holds exactly this run's pairs."""
    root = Path(plots_dir) / ABLATIONS_DIR
    keep = {f"{x.a}-vs-{x.b}" for x in items}
    if root.is_dir():
        for old in sorted(root.iterdir()):
            if old.is_dir() and old.name not in keep:
                shutil.rmtree(old)
    for x in items:
        write_plots(x.comparison, Path(plots_dir) / pair_dir(x.a, x.b))


__all__ = [
    "ABLATIONS_PAGE", "Ablation", "Comparison", "ablation_pairs", "ablations", "compare", "coverage_line",
    "discordant_table", "domain_table", "length_diff_table", "length_line", "methods_with_plan_records",
    "pair_dir", "render", "render_ablations", "run_compare", "scatter_rows", "time_limit_of",
    "write_ablation_plots", "write_compare", "write_plots",
]
