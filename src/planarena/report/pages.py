"""The pages of ``reports/``: the front page ``leaderboard.md`` and the detail pages under
``reports/detail/`` (docs/concepts.md#the-pages).

The front page fits on about two screens: a line of provenance, the problems box (real problems
first; "None." when there are none), one headline table per task (plan coverage per held-out
split, successor ranking per protocol, schema learning when it has results), one line per method,
and links to the detail pages and plots. Every other table lives on a detail page, pivoted so that
a row is a method. Which section goes on which page is :data:`DETAIL_PAGES`; the sections render
themselves (:mod:`planarena.report.sections`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

from planarena.report import compare
from planarena.report.model import Analysis
from planarena.report.plots import Plot  # noqa: F401  (re-exported: the pages link these)
from planarena.report.markdown import md_table, md_text
from planarena.report.published.loader import PAPERS, PublishedPaper
from planarena.report.sections import claims as claims_section
from planarena.report.sections import glance
from planarena.report.sections import (
    budget,
    divergence,
    headline,
    coverage,
    cost,
    detail,
    hitk,
    info,
    pool,
    problems,
    published,
    quality,
    ranking,
    schema,
)


FRONT = "leaderboard.md"
DETAIL_DIR = "detail"


@dataclass(frozen=True)
class Page:
    """A detail page: its file name under ``reports/detail/``, title, what the front page's link
    says, and the function writing its sections' lines."""

    name: str
    title: str
    summary: str
    body: Callable[[Analysis, Mapping, Sequence[PublishedPaper]], list[str]]


def _published(a: Analysis, run_info: Mapping, papers: Sequence[PublishedPaper]) -> list[str]:
    # a paper's printed tables appear where the run has results of its protocol (the IPC 2023
    # track's own scores: a run on the ipc2023 suite)
    results_of = {"pool": a.pool is not None, "ipc2023": run_info.get("suite") == "ipc2023"}
    return published.render(
        [m for p in papers for m in p.matrices],
        run_info.get("planner_limits"),
        a.coverage,
        [p for p in papers if p.tables and results_of.get(p.protocol, True)],
        pool.published_summary(a.pool),
        a.pool.summary_notes if a.pool else (),
        a.pool.reading if a.pool else (),
    ) + schema.render_published(a.schema, papers)


#: The front page's coverage tables explained in full (on the coverage detail page, linked from them).
HEADLINE_HELP = (headline.DESCRIPTION + " *budget*: the length of one training run in its own unit (updates, "
                 "epochs or boosting rounds) x batch, its share of the budget its paper states (samples seen, "
                 "else steps), and training wall time per seed.")

#: The detail pages, in link order.
DETAIL_PAGES: tuple[Page, ...] = (
    Page("problems.md", "Problems", "every check: errors, rejected plans, planning stage, empty splits, "
         "data consistency", lambda a, i, p: problems.render(a.problems)),
    Page("coverage.md", "Coverage and plan quality", "coverage per domain and split (train included), "
         "horizon ceiling, plan quality QS / QS_S, training divergences",
         lambda a, i, p: ["## How to read the headline tables", "", HEADLINE_HELP, "",
                          *coverage.render(a.coverage, a.coverage_sum, a.ceiling, a.traits), "",
                          *quality.render(a.quality, a.ipc), "", *divergence.render(a.divergence)]),
    Page("per-domain.md", "Per-domain detail", "why attempts stopped (budget, dead end, exhausted, ...) per "
         "method; solved / attempted / timeouts per domain, split and method, beside the reference planning stage",
         lambda a, i, p: detail.render(a.details, a.stops)),
    Page("hitk.md", "Successor-set Hit@k", "Hit@1/3/5 per domain, split and reference plan, with the "
         "random-ranker floor and successors per step", lambda a, i, p: hitk.render(a.hitk)),
    Page("pool.md", "Candidate-pool Hit@k", "pool protocols per domain, lifts over each encoding's "
         "floor, test transitions seen in training, Cross-Domain matrix, transition datasets",
         lambda a, i, p: pool.render(a.pool) or ["## Candidate-pool Hit@k (EmbedPlan protocols)", "",
                                                 "No candidate-pool records yet."]),
    Page("schema.md", "Schema learning", "precision, recall, N_s / N_c / N_sc per domain",
         lambda a, i, p: schema.render(a.schema, p)),
    Page(compare.ABLATIONS_PAGE, "Ablations", "each family's declared ablation pairs compared problem by "
         "problem: paired coverage test, discordant problems, scatter plots",
         lambda a, i, p: compare.render_ablations(a.ablations)),
    Page("cost.md", "Cost", "time per problem, wall time, model size, train and decode time per "
         "method, domain and task", lambda a, i, p: cost.render(a.cost)),
    Page("published.md", "Published reference rows", "numbers copied from the papers, side by side "
         "with this run's", _published),
    Page("info.md", "Info", "provenance, package versions, method settings, records per method",
         lambda a, i, p: info.render(i, a.methods)),
)


def detail_link(name: str) -> str:
    """The link from the front page to the detail page ``name``."""
    return f"{DETAIL_DIR}/{name}"


def _provenance(a: Analysis, run_info: Mapping) -> str:
    domains = []
    if a.plan_domains:
        domains.append(f"{', '.join(a.plan_domains)} (problem set)")
    if a.pool is not None:
        pool_domains = sorted(set(a.pool.table["domain"]))
        domains.append(f"{', '.join(pool_domains)} (candidate pools)")
    return (f"Suite `{run_info.get('suite', 'unknown')}`, code `{run_info.get('code_hash') or 'unknown'}`, "
            f"params `{run_info.get('params_hash')}` (hashes: [info](detail/info.md)); {a.n_records} records in use"
            + (f", seeds {', '.join(map(str, run_info['seeds']))}" if run_info.get("seeds") else "") + ". "
            f"Domains: {'; '.join(domains) or 'none'}. Generated by the `report` stage from the records "
            "(`data/results`, `data/plans`, `data/problems`); do not edit by hand.")


def render_front(
    a: Analysis, run_info: Mapping, plots: Sequence[Plot] = ()
) -> str:
    """The front page ``leaderboard.md`` (pure: same arguments, same string)."""
    lines = ["# planarena leaderboard", "",
             budget.opening_line(str(run_info.get("profile", "unknown")), run_info.get("paper_runs") or (),
                                 run_info.get("description")), "",
             _provenance(a, run_info), ""]
    box = glance.lines(a.headline, a.traits, run_info.get("claims") or ())
    if box:
        lines += ["## At a glance", "", *box, "",
                  "How to read the tables below (kinds, floors, twins, intervals, tests): "
                  "[docs/concepts.md](../docs/concepts.md).", ""]
    if run_info.get("claims"):
        lines += ["## Claims", "", claims_section.DESCRIPTION, "", md_table(claims_section.table(run_info["claims"])), ""]
    lines += ["## Problems", "", *problems.box_lines(a.problems, detail_link("problems.md")), ""]
    lines += ["## Plan coverage", ""]
    if not a.headline:
        lines += ["No `plan` results yet: `data/results/` holds no records of methods that plan.", ""]
    else:
        how = f"{detail_link('coverage.md')}#how-to-read-the-headline-tables"
        lines += ["Each cell: the fraction of attempts solved and accepted by the validator, its 95 % interval and "
                  "k/N (problems x seeds); rows compared within their kind. **Bold**: significantly better than "
                  "every other row of its kind (Holm-adjusted p < 0.05). *Above floor* / *vs untrained twin*: "
                  "paired tests over the held-out problems against the floors / the row's untrained twin (the p "
                  f"shown is Holm-adjusted). How to read every column: [{how}]({how}); per domain, train and plan "
                  f"quality: [{detail_link('coverage.md')}]({detail_link('coverage.md')}).", ""]
        for i, table in enumerate(a.headline):
            if len(a.headline) > 1:
                lines += [f"Problem set {i + 1} of {len(a.headline)}: {', '.join(f'`{s}`' for s in table.splits)}.", ""]
            lines += [md_table(headline.render_table(table, a.traits, a.budgets)), ""]
        lines += [*a.ceiling, ""] if a.ceiling else []
    if a.not_applicable:
        lines += ["Not run on a domain of the suite (the method cannot read it; no cell counts it): "
                  + "; ".join(f"`{m}` on `{d}`: {md_text(why, 300)}" for m, d, why in a.not_applicable) + ".", ""]
    lines += [*ranking.render(a.ranking, a.traits, {"hitk": detail_link("hitk.md"), "pool": detail_link("pool.md")},
                              a.rank_records, a.seed), ""]
    if a.schema_headline is not None:
        lines += ["## Schema learning", "", "Mean ± population std over seeds, all domains together, with the 95 % interval "
                  "(precision, recall: bootstrap over domains, then seeds; N_sc: Wilson score of the runs) "
                  f"(per domain: [{detail_link('schema.md')}]({detail_link('schema.md')})).", "",
                  md_table(a.schema_headline), ""]
    lines += ["## Methods", "", *(a.method_lines or ["No result records yet."]), ""]
    lines += ["## Detail pages and plots", ""]
    lines += [f"- [{p.title}]({detail_link(p.name)}): {p.summary}" for p in DETAIL_PAGES]
    if plots:
        lines.append("- Plots: " + ", ".join(f"[{p.caption}]({p.path})" for p in plots)
                     + "; their data files beside them (`dvc plots show`, `dvc plots diff`).")
    return "\n".join(lines).rstrip("\n") + "\n"


def render_detail(
    page: Page, a: Analysis, run_info: Mapping, plots: Sequence[Plot] = (),
    papers: Sequence[PublishedPaper] = PAPERS,
) -> str:
    """One detail page (pure): its title, a link back to the front page, its sections, and the
    plots that belong to it (linked relative to ``reports/detail/``)."""
    lines = [f"# {page.title}", "", f"Part of the [planarena leaderboard](../{FRONT}); generated by the "
             "`report` stage from the records; do not edit by hand.", ""]
    lines += page.body(a, run_info, papers)
    mine = [p for p in plots if p.page == page.name]
    if mine:
        lines += ["", "## Plots", ""]
        for p in mine:
            lines += [f"![{p.caption}](../{p.path})", ""]
    return "\n".join(lines).rstrip("\n") + "\n"


def render_pages(
    a: Analysis, run_info: Mapping, plots: Sequence[Plot] = (), papers: Sequence[PublishedPaper] = PAPERS
) -> dict[str, str]:
    """Every page: ``{path relative to reports/: text}``, the front page first, then
    :data:`DETAIL_PAGES` in order."""
    out = {FRONT: render_front(a, run_info, plots)}
    for page in DETAIL_PAGES:
        out[detail_link(page.name)] = render_detail(page, a, run_info, plots, papers)
    return out
