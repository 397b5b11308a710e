"""Tests of planarena.report.leaderboard: coverage arithmetic, Problems, section order, stage outputs."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest

from planarena.config import Layout
from planarena.core.io import write_jsonl
from planarena.core.problemset import ProblemEntry
from planarena.core.records import ResultRecord
from planarena.report import leaderboard as report
from planarena.report.published.state_centric import (
    PUBLISHED_TABLES,
    STATE_CENTRIC_TABLE1,
    PublishedCell,
    PublishedColumn,
    PublishedMatrix,
    PublishedMatrixRow,
    parse_cells,
)

INFO = {
    "git_revision": "abc1234",
    "git_dirty": False,
    "params_hash": "0123456789ab",
    "profile": "smoke",
    "suite": "generated",
    "cpu_model": "Test CPU",
    "cpu_count": 2,
    "python": "3.11.0",
    "packages": {"pandas": "1.0"},
}


def entry(domain: str, split: str, problem: str, size: int | None = None) -> ProblemEntry:
    return ProblemEntry(
        domain=domain,
        split=split,
        problem=problem,
        path=f"{domain}/{split}/{problem}.pddl",
        size_param="blocks",
        size=size,
        objects=(size or 0) + 1,
        seed=0,
        origin="test",
    )


def rec(
    method, domain, split, problem, seed, outcome="solved", validated=None, **kw
) -> ResultRecord:
    if validated is None:
        validated = outcome == "solved"
    kw.setdefault("validated_by", "unified-planning" if outcome == "solved" else None)
    kw.setdefault("family", "test-family")
    kw.setdefault("wall_time", 1.0)
    return ResultRecord(
        method=method,
        domain=domain,
        split=split,
        problem=problem,
        seed=seed,
        outcome=outcome,
        validated=validated,
        **kw,
    )


def manifest_3() -> list[ProblemEntry]:
    """blocksworld: 3 validation, 2 extrapolation; gripper: 1 validation, 0 extrapolation."""
    return [
        entry("blocksworld", "validation", "p1", 4),
        entry("blocksworld", "validation", "p2", 5),
        entry("blocksworld", "validation", "p3", 5),
        entry("blocksworld", "extrapolation", "q1", 9),
        entry("blocksworld", "extrapolation", "q2", 10),
        entry("gripper", "validation", "g1", 2),
    ]


def seeds_2_1_3(method="m") -> list[ResultRecord]:
    """Seeds 0, 1, 2 solve 2/3, 1/3, 3/3 of blocksworld/validation."""
    solved = {0: {"p1", "p2"}, 1: {"p1"}, 2: {"p1", "p2", "p3"}}
    return [
        rec(method, "blocksworld", "validation", p, s, "solved" if p in solved[s] else "unsolved")
        for s in (0, 1, 2)
        for p in ("p1", "p2", "p3")
    ]


def section(md: str, title: str) -> str:
    """Text of ``## title`` up to the next ``## `` heading."""
    start = md.index(f"\n## {title}\n")
    end = md.find("\n## ", start + 1)
    return md[start : end if end != -1 else len(md)]


def table_rows(text: str) -> list[list[str]]:
    """Cells of every markdown table row in ``text`` (padding stripped)."""
    return [
        [c.strip() for c in line.strip().strip("|").split(" | ")]
        for line in text.splitlines()
        if line.startswith("|") and not line.startswith("|:") and not line.startswith("|-")
    ]


def render(records, manifest, plan_records=(), **kw) -> str:
    inputs = report.ReportInputs(list(records), list(plan_records), list(manifest), **kw)
    return report.render_leaderboard(report.analyse(inputs), INFO, [("Coverage", "plots/c.png")])


# ---------------------------------------------------------------- coverage arithmetic


def test_coverage_mean_and_population_std_over_seeds():
    cov = report.coverage_table(seeds_2_1_3(), manifest_3())
    row = cov[(cov.domain == "blocksworld") & (cov.split == "validation")].iloc[0]
    assert row.n == 3 and row.seeds == (0, 1, 2) and row.solved == (2, 1, 3)
    assert row["mean"] == pytest.approx(2 / 3)
    assert row["std"] == pytest.approx(math.sqrt(2 / 27))  # ddof=0
    assert report.format_coverage_cell(row["mean"], row["std"], row.n) == "0.67 ± 0.27 (n=3)"
    md = render(seeds_2_1_3(), manifest_3())
    assert "0.67 ± 0.27 (n=3)" in section(md, "Coverage")
    assert "ddof=0" in section(md, "Coverage")


def test_missing_records_count_as_unsolved_and_other_splits_show_dash():
    records = [rec("m", "blocksworld", "validation", "p1", 0)]  # 1 of 3 attempted and solved
    records += [rec("x", "blocksworld", "extrapolation", q, 0) for q in ("q1", "q2")]
    cov = report.coverage_table(records, manifest_3())
    val = cov[(cov.domain == "blocksworld") & (cov.split == "validation") & (cov.method == "m")]
    assert val.iloc[0]["mean"] == pytest.approx(1 / 3)
    ext = cov[(cov.domain == "blocksworld") & (cov.split == "extrapolation") & (cov.method == "m")]
    assert ext.iloc[0].status == "no records"
    md = render(records, manifest_3())
    rows = table_rows(section(md, "Coverage"))
    assert ["blocksworld", "extrapolation", report.DASH, "**1.00 ± 0.00 (n=2)**"] in rows
    # a split no method ran on is left out of the table and named below it
    assert not [r for r in rows if r[:2] == ["gripper", "validation"]]
    assert "Not evaluated by any plan method (rows left out): `gripper/validation`." in md
    assert "seed 0 has records for 1 of 3 instances" in section(md, "Problems")


def test_validator_rejected_plan_never_counts_and_is_listed_with_reason():
    records = [
        rec("m", "blocksworld", "validation", "p1", 0),
        rec(
            "m",
            "blocksworld",
            "validation",
            "p2",
            0,
            "solved",
            validated=False,
            validator_reason="precondition of (stack b1 b2) not satisfied at step 3",
        ),
        rec("m", "blocksworld", "validation", "p3", 0, "unsolved"),
    ]
    plans = [
        {
            "domain": "blocksworld",
            "split": "validation",
            "problem": "p1",
            "outcome": "solved",
            "planner": "lama_first",
            "validated": False,
            "validator_reason": "goal not reached",
            "attempts": [],
        },
    ]
    cov = report.coverage_table(records, manifest_3())
    val = cov[(cov.domain == "blocksworld") & (cov.split == "validation")].iloc[0]
    assert val.solved == (1,)
    md = render(records, manifest_3(), plans)
    problems = section(md, "Problems")
    assert "precondition of (stack b1 b2) not satisfied at step 3" in problems
    assert "plan stage (lama_first)" in problems and "goal not reached" in problems
    assert "0.33 ± 0.00 (n=3)" in section(md, "Coverage")
    detail = section(md, "Per-domain detail")
    assert "1/3, TO 0" in detail  # method: 1 of 3 attempts solved+validated
    assert "0/1, TO 0" in detail  # plan stage: its rejected plan is not solved
    assert (
        report.build_metrics(report.analyse(report.ReportInputs(records, plans, manifest_3())))[
            "problems"
        ]["rejected_plans"]
        == 2
    )


def test_errors_and_diverged_runs_are_listed_with_failure_reason():
    records = seeds_2_1_3() + [
        rec(
            "m",
            "blocksworld",
            "extrapolation",
            "q1",
            0,
            "error",
            failure_reason="CUDA out of memory | oops",
        ),
        rec("m", "blocksworld", "extrapolation", "q2", 0, "diverged"),
    ]
    problems = section(render(records, manifest_3()), "Problems")
    assert "CUDA out of memory \\| oops" in problems  # pipe escaped inside the table
    assert "(no failure reason recorded)" in problems
    assert "q1 (seed 0)" in problems


def test_empty_split_is_reported_as_no_instances_without_division_by_zero():
    records = seeds_2_1_3() + [rec("m", "gripper", "validation", "g1", s) for s in (0, 1, 2)]
    cov = report.coverage_table(records, manifest_3())
    empty = cov[(cov.domain == "gripper") & (cov.split == "extrapolation")].iloc[0]
    assert empty.n == 0 and empty.status == "no instances" and math.isnan(empty["mean"])
    md = render(records, manifest_3(), splits=("train",))
    assert ["gripper", "extrapolation", "no instances"] in table_rows(section(md, "Coverage"))
    assert "`gripper/extrapolation`: no instances" in section(md, "Problems")
    assert "`blocksworld/train`: no instances" in section(md, "Problems")  # declared in params only
    sums = report.coverage_sum(cov)
    assert sums.iloc[0]["n"] == 4  # 3 blocksworld/validation + 1 gripper/validation
    assert sums.iloc[0]["mean"] == pytest.approx(0.75)  # (2 solved on average + 1) / 4


def test_plan_stage_timeouts_summarised_per_domain_split():
    plans = [
        {
            "domain": "blocksworld",
            "split": "extrapolation",
            "problem": "q1",
            "outcome": "timeout",
            "planner": None,
            "validated": False,
            "attempts": [
                {"config": "astar_lmcut", "outcome": "timeout", "failure_reason": "time limit 60 s"}
            ],
        },
        {
            "domain": "blocksworld",
            "split": "validation",
            "problem": "p1",
            "outcome": "solved",
            "planner": "astar_lmcut",
            "validated": True,
            "attempts": [],
        },
    ]
    problems = section(render([], manifest_3(), plans), "Problems")
    assert "time limit 60 s" in problems
    cells = next(r for r in table_rows(problems) if r[:2] == ["blocksworld", "extrapolation"])
    assert cells[:10] == ["blocksworld", "extrapolation", "2", "0", "0", "0", "1", "0", "0", "1"]
    assert "1 of 6 instances have a validated reference plan" in problems


# ---------------------------------------------------------------- best in bold, sum row


def test_best_in_bold_picks_maximum_and_all_ties():
    assert report.best_methods({"a": 0.5, "b": 0.75, "c": 0.75}) == {"b", "c"}
    assert report.best_methods({"a": 0.0, "b": 0.0}) == set()
    assert report.best_methods({"a": math.nan}) == set()
    records = []
    for m, solved in (("a", {"p1"}), ("b", {"p1", "p2"}), ("c", {"p1", "p2"})):
        records += [
            rec(m, "blocksworld", "validation", p, 0, "solved" if p in solved else "unsolved")
            for p in ("p1", "p2", "p3")
        ]
    cov_md = section(render(records, manifest_3()), "Coverage")
    row = next(r for r in table_rows(cov_md) if r[:2] == ["blocksworld", "validation"])
    assert row[2:] == ["0.33 ± 0.00 (n=3)", "**0.67 ± 0.00 (n=3)**", "**0.67 ± 0.00 (n=3)**"]
    assert "**Sum**" in cov_md


# ---------------------------------------------------------------- other sections


def test_sections_in_design_order_and_hitk_not_faked():
    md = render(seeds_2_1_3(), manifest_3())
    titles = [line[3:] for line in md.splitlines() if line.startswith("## ")]
    assert titles == [
        "Problems",
        "Info",
        "Coverage",
        "Hit@k",
        "Schema learning",
        "Cost",
        "Per-domain detail",
        "Published reference rows",
        "Plots",
    ]
    hitk = section(md, "Hit@k")
    assert "No `rank_successors` method has results yet" in hitk and "|" not in hitk
    assert "![Coverage](plots/c.png)" in md


def test_hitk_rendered_from_rank_successors_records_and_kept_out_of_coverage():
    records = seeds_2_1_3() + [
        rec(
            "embedplan",
            "blocksworld",
            "validation",
            p,
            s,
            "unsolved",
            extra={"protocol": "interp", "hit@1": h, "hit@5": 1.0},
        )
        for s, h in ((0, 0.5), (1, 1.0))
        for p in ("p1", "p2")
    ]
    md = render(records, manifest_3())
    hitk = section(md, "Hit@k")
    assert "0.75 ± 0.25" in hitk and "hit@5" in hitk and "interp" in hitk
    assert "embedplan" not in section(md, "Coverage")


def test_cost_geometric_mean_over_commonly_solved_and_extra_fields():
    records = [
        rec("a", "blocksworld", "validation", "p1", 0, wall_time=1.0, extra={"parameters": 1000}),
        rec("a", "blocksworld", "validation", "p2", 0, wall_time=4.0, extra={"parameters": 1000}),
        rec("a", "blocksworld", "validation", "p3", 0, wall_time=100.0),
        rec("b", "blocksworld", "validation", "p1", 0, wall_time=2.0, extra={"train_time_s": 3.5}),
        rec("b", "blocksworld", "validation", "p2", 0, wall_time=8.0),
        rec("b", "blocksworld", "validation", "p3", 0, "timeout", wall_time=60.0),
    ]
    assert report.commonly_solved(records)[("blocksworld", "validation")] == {"p1", "p2"}
    cost = report.cost_table(records).set_index("Method")
    assert cost.loc["a", "commonly solved"] == "2"
    assert cost.loc["a", "time/problem, geo-mean (s)"] == "2.000"  # sqrt(1 * 4)
    assert cost.loc["b", "time/problem, geo-mean (s)"] == "4.000"  # sqrt(2 * 8)
    assert cost.loc["a", "mean wall time, all attempts (s)"] == "35.000"
    assert cost.loc["a", "parameters"] == "1,000" and cost.loc["b", "parameters"] == report.DASH
    assert cost.loc["b", "train time (s)"] == "3.5"
    assert report.geometric_mean([0.0, 1.0]) == pytest.approx(math.sqrt(report.MIN_TIME_S))


# ---------------------------------------------------------------- published reference

TABLE1_COLUMNS = (
    "FD",
    "Plansformer (greedy)",
    "PlanGPT greedy",
    "PlanGPT appl.",
    "PlanGPT regr.",
    "SATr (enc) greedy",
    "SATr (enc-dec) greedy",
    "SATr (enc-dec) appl.",
    "SATr (enc-dec) regr.",
    "WL-LSTM state",
    "WL-LSTM delta",
    "WL-XGB state",
    "WL-XGB delta",
    "FSF-LSTM state",
    "FSF-LSTM delta",
    "FSF-XGB state",
    "FSF-XGB delta",
)


def test_table1_has_every_row_and_column():
    t = STATE_CENTRIC_TABLE1
    assert t in PUBLISHED_TABLES
    assert tuple(c.label for c in t.columns) == TABLE1_COLUMNS
    assert [(r.domain, r.split) for r in t.rows] == [
        (d, s)
        for d in ("blocksworld", "gripper", "visitall", "logistics")
        for s in ("validation", "interpolation", "extrapolation")
    ]
    for r in t.rows:
        assert len(r.cells) == len(TABLE1_COLUMNS) == 17, (r.domain_label, r.split_label)
        assert r.cells[0].std is None  # FD: one run, no std
        assert all(c.std is not None for c in r.cells[1:])  # the 16 other systems: mean ± std
        assert all(0.0 <= c.mean <= 1.0 and 0.0 <= c.std <= 0.5 for c in r.cells[1:])
    assert t.row("blocksworld", "train") is None  # the paper has no train split


def test_table1_cells_as_printed_in_the_paper():
    t = STATE_CENTRIC_TABLE1
    assert t.cell("blocksworld", "extrapolation", "wl_xgb_delta") == PublishedCell(0.45, 0.00)
    assert t.cell("visitall", "extrapolation", "wl_xgb_delta") == PublishedCell(0.87, 0.00)
    assert t.cell("gripper", "extrapolation", "SATr (enc-dec) regr.") == PublishedCell(0.79, 0.16)
    assert t.cell("logistics", "interpolation", "WL-LSTM state") == PublishedCell(0.78, 0.16)
    # cells whose text carries the underline artefact "¯{}_{\\scriptscriptstyle\\pm..}"
    assert t.cell("blocksworld", "validation", "wl_lstm_state") == PublishedCell(0.56, 0.16)
    assert t.cell("logistics", "interpolation", "fsf_xgb_state") == PublishedCell(0.44, 0.00)
    assert t.cell("gripper", "interpolation", "SATr (enc) greedy") == PublishedCell(0.89, 0.16)
    assert t.cell("blocksworld", "validation", "Plansformer (greedy)") == PublishedCell(1.0, 0.0)
    assert t.cell("visitall", "validation", "FSF-XGB delta") == PublishedCell(0.92, 0.00)
    fd = [t.cell(d, "extrapolation", "fd_astar_lmcut") for d in ("blocksworld", "gripper")]
    assert fd == [PublishedCell(0.60), PublishedCell(0.13)]
    assert [t.cell(d, "extrapolation", "FD").mean for d in ("visitall", "logistics")] == [
        0.50,
        0.26,
    ]
    assert t.cell("blocksworld", "extrapolation", "no such system") is None
    assert t.cell("blocks", "extrapolation", "FD") is None


def test_table1_matches_the_paper_text_cell_for_cell():
    t = STATE_CENTRIC_TABLE1
    path = Path(__file__).resolve().parents[1] / t.paper_file
    if not path.exists():
        pytest.skip(f"paper text not available: {path}")
    lines = path.read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(t.caption))
    underline = re.compile(
        r"±(\d\.\d\d)¯\{\}_\{\\scriptscriptstyle\\pm\\underline\{(\d\.\d\d)\}\}"
    )
    rows = []
    artefacts = 0
    for line in lines[start + 3 : start + 15]:
        for std, dup in underline.findall(line):
            assert std == dup  # the artefact repeats the std of the underlined (second best) value
            artefacts += 1
        clean = underline.sub(r"±\1", line)
        rows.append(parse_cells(" ".join(re.findall(r"\d\.\d\d(?:±\d\.\d\d)?", clean))))
    assert artefacts > 0 and all(len(r) == 17 for r in rows)
    assert rows == [r.cells for r in t.rows]


def test_table1_columns_map_to_harness_methods():
    t = STATE_CENTRIC_TABLE1
    assert t.methods == (
        "fd_astar_lmcut",
        "wl_lstm_state",
        "wl_lstm_delta",
        "wl_xgb_state",
        "wl_xgb_delta",
        "fsf_lstm_state",
        "fsf_lstm_delta",
        "fsf_xgb_state",
        "fsf_xgb_delta",
    )
    assert t.column("fd_astar_lmcut").label == "FD"
    assert t.column("FSF-XGB delta").method == "fsf_xgb_delta"
    assert t.column("PlanGPT regr.").method is None
    assert len(t.groups) == 2
    assert [len([c for c in t.columns if c.group == g]) for g in t.groups] == [9, 8]


def test_published_matrix_rejects_a_row_with_a_missing_value():
    cols = (PublishedColumn("A", "a", "g"), PublishedColumn("B", None, "g"))
    with pytest.raises(ValueError, match="has 1 values, expected 2"):
        PublishedMatrix(
            "k", "title", "f.txt", "Table 9", "Table 9:", "coverage", "mean", cols,
            (PublishedMatrixRow("d", "s", "D", "S", parse_cells("0.50±0.10")),),
        )  # fmt: skip
    with pytest.raises(ValueError, match="not a published value"):
        parse_cells("0.50±0.10 n/a")


def test_published_rows_only_in_their_own_labelled_section():
    t = STATE_CENTRIC_TABLE1
    assert t.label == (
        "Published (not measured here): Table 1 of 'On Sample-Efficient Generalized Planning via "
        "Learned Transition Models' — coverage, mean ± std over 3 seeds"
    )
    inputs = report.ReportInputs(seeds_2_1_3(), [], manifest_3())
    a = report.analyse(inputs)
    md = report.render_leaderboard(a, INFO, [("Coverage", "plots/c.png")])
    pub = section(md, "Published reference rows")
    assert f"### {t.label}" in pub
    rows = table_rows(pub)
    header = next(r for r in rows if r[:2] == ["Domain", "Split"] and "FD (fd_astar_lmcut)" in r)
    assert header[2:] == [
        "FD (fd_astar_lmcut)",
        "Plansformer (greedy)",
        "PlanGPT greedy",
        "PlanGPT appl.",
        "PlanGPT regr.",
        "SATr (enc) greedy",
        "SATr (enc-dec) greedy",
        "SATr (enc-dec) appl.",
        "SATr (enc-dec) regr.",
    ]
    assert [
        "gripper", "extrapolation", "0.13", "0.00 ± 0.00", "0.00 ± 0.00", "0.00 ± 0.00",
        "0.00 ± 0.00", "0.02 ± 0.03", "0.00 ± 0.00", "0.15 ± 0.06", "0.79 ± 0.16",
    ] in rows  # fmt: skip
    assert [
        "blocksworld", "extrapolation", "0.03 ± 0.02", "0.15 ± 0.07", "0.25 ± 0.00",
        "0.45 ± 0.00", "0.00 ± 0.00", "0.00 ± 0.00", "0.00 ± 0.00", "0.00 ± 0.00",
    ] in rows  # fmt: skip
    assert "WL-XGB delta (wl_xgb_delta)" in pub and "no train split" in pub
    # one set of published numbers: the FD column lives only in the matrix (no second FD table)
    assert pub.count("Published (not measured here)") == 1
    before = md[: md.index("\n## Published reference rows\n")]
    assert "Published (not measured here)" not in before
    assert "published (Table 1)" not in before and "0.79 ± 0.16" not in before
    metrics = json.dumps(report.build_metrics(a))
    assert "0.13" not in metrics and "0.26" not in metrics and "published" not in metrics


def test_side_by_side_measured_vs_published_for_methods_with_a_column():
    manifest = manifest_3()
    records = [
        rec("fd_astar_lmcut", "blocksworld", "validation", p, s, family="classical")
        for p in ("p1", "p2", "p3")
        for s in (0, 1)
    ]
    records += [
        rec(
            "fd_astar_lmcut",
            "blocksworld",
            "extrapolation",
            q,
            0,
            "solved" if q == "q1" else "timeout",
            family="classical",
        )
        for q in ("q1", "q2")
    ]
    records += seeds_2_1_3("random_walk")  # no published column: no side-by-side table
    md = render(records, manifest)
    cov_rows = table_rows(section(md, "Coverage"))
    measured_ext = next(r for r in cov_rows if r[:2] == ["blocksworld", "extrapolation"])[2]
    pub = section(md, "Published reference rows")
    side = pub[pub.index("### Side by side: measured (this run) vs published (Table 1)") :]
    assert "#### fd_astar_lmcut (published column: FD)" in side
    assert "#### random_walk" not in side
    rows = table_rows(side)
    assert rows[0] == ["Domain", "Split", "measured (this run)", "published (Table 1)"]
    assert rows[1:4] == [
        ["blocksworld", "validation", "1.00 ± 0.00 (n=3)", "1.00"],
        ["blocksworld", "interpolation", report.DASH, "1.00"],
        ["blocksworld", "extrapolation", "0.50 ± 0.00 (n=2)", "0.60"],
    ]
    assert measured_ext.strip("*") == "0.50 ± 0.00 (n=2)"  # same number as Coverage
    assert ["gripper", "extrapolation", "no instances", "0.13"] in rows
    assert ["logistics", "extrapolation", report.DASH, "0.26"] in rows  # not in this run's suite
    assert len(rows) == 1 + 12
    assert "without plan results here: `wl_lstm_state`" in side
    # measured cells come from the same coverage table the Coverage section renders
    cov = report.coverage_table(records, manifest)
    df = report.side_by_side_table(STATE_CENTRIC_TABLE1, "fd_astar_lmcut", cov)
    assert list(df.columns) == ["Domain", "Split", "measured (this run)", "published (Table 1)"]


def test_side_by_side_says_so_when_no_measured_method_has_a_column():
    pub = section(render(seeds_2_1_3(), manifest_3()), "Published reference rows")
    assert "No method measured here has a published column yet." in pub
    assert "####" not in pub


# ---------------------------------------------------------------- stage outputs


def write_inputs(tmp_path, records, plans=(), manifest=None) -> Layout:
    layout = Layout(root=tmp_path / "data")
    write_jsonl(
        layout.problems / "manifest.jsonl", [e.to_dict() for e in (manifest or manifest_3())]
    )
    by_method: dict[str, list[dict]] = {}
    for r in records:
        by_method.setdefault(r.method, []).append(r.to_dict())
    for m, rows in by_method.items():
        write_jsonl(layout.results / f"{m}.jsonl", rows)
    write_jsonl(layout.plans / "records.jsonl", list(plans))
    return layout


def test_run_stage_writes_outputs_deterministically(tmp_path):
    records = (
        seeds_2_1_3("wl_xgb")
        + seeds_2_1_3("astar")
        + [
            rec(
                "wl_xgb", "blocksworld", "extrapolation", q, s, "solved" if q == "q1" else "timeout"
            )
            for q in ("q1", "q2")
            for s in (0, 1, 2)
        ]
    )
    layout = write_inputs(tmp_path, records)
    params = {
        "profile": "smoke",
        "suite": "generated",
        "suites": {"generated": {"domains": {"blocksworld": {}, "gripper": {}, "logistics": {}}}},
        "evaluation": {"splits": ["validation", "extrapolation"]},
    }
    out = tmp_path / "reports"
    report.run_stage(params, layout, out)
    md1 = (out / "leaderboard.md").read_bytes()
    metrics1 = (out / "metrics.json").read_bytes()
    png1 = (out / "plots" / "coverage_by_size.png").read_bytes()
    assert png1.startswith(b"\x89PNG\r\n\x1a\n")
    assert b"(plots/coverage_by_size.png)" in md1
    assert b"`logistics/validation`: no instances" in md1

    metrics = json.loads(metrics1)
    assert set(metrics) == {"coverage", "coverage_sum", "problems"}
    assert metrics["coverage"]["wl_xgb"]["blocksworld"] == {
        "validation": 0.6667,
        "extrapolation": 0.5,
    }
    assert "extrapolation" not in metrics["coverage"]["astar"]["blocksworld"]
    assert metrics["coverage_sum"]["wl_xgb"] == pytest.approx((2 + 1) / 5, abs=1e-4)
    assert metrics["problems"] == {"error": 0, "diverged": 0, "rejected_plans": 0}

    report.run_stage(params, layout, out)
    assert (out / "leaderboard.md").read_bytes() == md1
    assert (out / "metrics.json").read_bytes() == metrics1
    assert (out / "plots" / "coverage_by_size.png").read_bytes() == png1


def test_run_stage_without_results_still_renders(tmp_path):
    layout = write_inputs(tmp_path, [])
    report.run_stage({"profile": "smoke"}, layout, tmp_path / "reports")
    md = (tmp_path / "reports" / "leaderboard.md").read_text()
    assert "No `plan` results yet" in md
    assert (tmp_path / "reports" / "plots" / "coverage_by_size.png").exists()
    assert json.loads((tmp_path / "reports" / "metrics.json").read_text())["coverage"] == {}


def test_malformed_results_line_names_file_and_line(tmp_path):
    layout = write_inputs(tmp_path, seeds_2_1_3())
    path = layout.results / "m.jsonl"
    lines = path.read_text().splitlines()
    lines.insert(1, "{not json")
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(ValueError, match=r"m\.jsonl:2: not valid JSON"):
        report.run_stage({"profile": "smoke"}, layout, tmp_path / "reports")


def test_missing_manifest_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="manifest"):
        report.run_stage({}, Layout(root=tmp_path / "data"), tmp_path / "reports")


def test_coverage_by_size_pools_splits_the_method_ran_on():
    df = report.coverage_by_size(seeds_2_1_3(), manifest_3())
    assert list(df["x"]) == [4, 5]  # extrapolation (sizes 9, 10) not run: not plotted
    assert df.set_index("x").loc[4, "coverage"] == pytest.approx(1.0)  # p1 solved by every seed
    assert df.set_index("x").loc[5, "coverage"] == pytest.approx((0.5 + 0 + 1) / 3)


def test_superseded_records_use_the_last_line():
    first = rec("m", "blocksworld", "validation", "p1", 0, "unsolved", config_hash="old")
    second = rec("m", "blocksworld", "validation", "p1", 0, "solved", config_hash="new")
    cov = report.coverage_table([first, second], manifest_3())
    assert cov[(cov.domain == "blocksworld") & (cov.split == "validation")].iloc[0].solved == (1,)
    assert "1 superseded record(s)" in section(render([first, second], manifest_3()), "Problems")


def rank_rec(method, domain, split, problem, seed, hits, inputs="state, goal", **kw):
    """A successor-ranking record as a state-centric method writes it (one per trajectory, seed)."""
    extra = {
        "task": "rank_successors",
        "protocol": "successor_set",
        "hit@1": hits[0],
        "hit@3": hits[1],
        "hit@5": hits[2],
        "steps": 4,
        "inputs": inputs,
        "tasks": ["plan", "rank_successors"],
    }
    extra.update(kw.pop("extra", {}))
    return rec(method, domain, split, problem, seed, "solved", validated=False, validated_by=None,
               extra=extra, **kw)  # fmt: skip


def test_plan_and_rank_records_of_one_attempt_do_not_supersede_each_other():
    plan = rec("wl_xgb_delta", "blocksworld", "validation", "p1", 0, extra={"tasks": ["plan"]})
    rank = rank_rec("wl_xgb_delta", "blocksworld", "validation", "p1", 0, (0.5, 1.0, 1.0))
    other_protocol = rank_rec(
        "wl_xgb_delta", "blocksworld", "validation", "p1", 0, (0.25, 0.5, 1.0),
        extra={"protocol": "other"},
    )  # fmt: skip
    rerun = rank_rec("wl_xgb_delta", "blocksworld", "validation", "p1", 0, (0.75, 1.0, 1.0))
    for records in ([plan, rank, other_protocol], [rank, other_protocol, plan]):
        latest = report.latest_records(records)
        assert len(latest) == 3
        assert {(report.record_task(r), r.extra.get("protocol")) for r in latest} == {
            ("plan", None),
            ("rank_successors", "successor_set"),
            ("rank_successors", "other"),
        }
        cov = report.coverage_table(records, manifest_3())
        cell = cov[(cov.domain == "blocksworld") & (cov.split == "validation")].iloc[0]
        assert cell.solved == (1,)
    # a later line of the same task and protocol still supersedes the earlier one
    latest = report.latest_records([plan, rank, rerun])
    assert len(latest) == 2
    ranks = [r for r in latest if report.record_task(r) == "rank_successors"]
    assert [r.extra["hit@1"] for r in ranks] == [0.75]
    md = render([plan, rank, rerun], manifest_3())
    assert "1 superseded record(s)" in section(md, "Problems")
    # a ranking record is no plan: not a rejected plan, not in coverage or detail
    assert "None: every plan reported as solved was accepted" in section(md, "Problems")
    cost = report.cost_table([plan, rank]).set_index(["Method", "Task"])
    assert cost.loc[("wl_xgb_delta", "plan"), "attempts"] == "1"
    assert cost.loc[("wl_xgb_delta", "rank_successors"), "attempts"] == "1"
    assert cost.loc[("wl_xgb_delta", "rank_successors"), "commonly solved"] == report.DASH


def test_hitk_successor_set_by_protocol_domain_split_method_with_inputs():
    hits = {  # (method, split, seed) -> hit@1/3/5 of the two trajectories
        ("wl_xgb_delta", "validation", 0): [(0.5, 1.0, 1.0), (0.25, 0.75, 1.0)],
        ("wl_xgb_delta", "validation", 1): [(1.0, 1.0, 1.0), (0.75, 1.0, 1.0)],
        ("wl_xgb_delta", "extrapolation", 0): [(0.0, 0.5, 1.0), (0.5, 0.5, 0.5)],
        ("wl_xgb_delta", "extrapolation", 1): [(0.0, 0.5, 1.0), (0.5, 0.5, 0.5)],
        ("embedplan_mlp", "validation", 0): [(0.2, 0.4, 0.6), (0.4, 0.6, 0.8)],
    }
    records = []
    for (m, split, seed), per_traj in hits.items():
        inputs = "state, action, goal" if m == "embedplan_mlp" else "state, goal"
        problems = ("p1", "p2") if split == "validation" else ("q1", "q2")
        for p, h in zip(problems, per_traj, strict=True):
            records.append(rank_rec(m, "blocksworld", split, p, seed, h, inputs=inputs))
    records += [rec("wl_xgb_delta", "blocksworld", "validation", p, 0) for p in ("p1", "p2")]
    # an errored trajectory reports no hit@k: not averaged, not counted, listed under Problems
    records.append(
        rec("wl_xgb_delta", "blocksworld", "validation", "p3", 1, "error",
            failure_reason="RuntimeError: no model",
            extra={"task": "rank_successors", "protocol": "successor_set"})
    )  # fmt: skip
    table = report.task_metric_table(
        records,
        "rank_successors",
        None,
        ("protocol", "domain", "split"),
        text_keys=("inputs",),
        unit="trajectories",
    )
    assert list(table.columns) == [
        "protocol", "domain", "split", "method", "inputs", "seeds", "trajectories",
        "hit@1", "hit@3", "hit@5",
    ]  # fmt: skip
    md = render(records, manifest_3())
    hitk = section(md, "Hit@k")
    rows = table_rows(hitk)
    assert rows[0] == [
        "protocol", "domain", "split", "method", "inputs", "seeds", "trajectories",
        "hit@1", "hit@3", "hit@5",
    ]  # fmt: skip
    # seed 0: hit@1 = mean(0.5, 0.25) = 0.375; seed 1: 0.875 -> 0.625 ± 0.25
    assert rows[1:] == [
        ["successor_set", "blocksworld", "validation", "embedplan_mlp", "state, action, goal",
         "1", "2", "0.30 ± 0.00", "0.50 ± 0.00", "0.70 ± 0.00"],
        ["successor_set", "blocksworld", "validation", "wl_xgb_delta", "state, goal",
         "2", "2", "0.62 ± 0.25", "0.94 ± 0.06", "1.00 ± 0.00"],
        ["successor_set", "blocksworld", "extrapolation", "wl_xgb_delta", "state, goal",
         "2", "2", "0.25 ± 0.00", "0.50 ± 0.00", "0.75 ± 0.00"],
    ]  # fmt: skip
    assert "`inputs`" in hitk and "ddof=0" in hitk
    assert "RuntimeError: no model" in section(md, "Problems")
    # the plan records of the same method, problems and seed still make its coverage
    assert "0.67 ± 0.00 (n=3)" in section(md, "Coverage")
    assert "embedplan_mlp" not in section(md, "Coverage")


def test_record_task_from_extra():
    assert report.record_task(rec("m", "d", "s", "p", 0)) == "plan"
    assert report.record_task(rec("m", "d", "s", "p", 0, extra={"tasks": ["plan", "x"]})) == "plan"
    only_rank = rec("m", "d", "s", "p", 0, extra={"tasks": ["rank_successors"]})
    assert report.record_task(only_rank) == "rank_successors"
    assert report.record_task(rec("m", "d", "s", "p", 0, extra={"hit@1": 0.5})) == "rank_successors"
    schema = rec("m", "d", "s", "p", 0, extra={"task": "learn_schema"})
    assert report.record_task(schema) == "learn_schema"


def test_declared_domains_and_splits_from_params():
    params = {
        "suite": "satr",
        "suites": {"satr": {"domains": ["gripper", "visitall"]}, "generated": {"domains": {}}},
        "evaluation": {"splits": ["validation", "extrapolation"]},
    }
    assert report.declared_domains(params) == ("gripper", "visitall")
    assert report.declared_splits(params) == ("validation", "extrapolation")
    assert report.declared_domains({}) == () and report.declared_splits({}) == ()


def test_decode_time_per_step_is_averaged_over_attempts():
    records = [
        rec("m", "blocksworld", "validation", "p1", 0, extra={"time_per_step_s": 0.1}),
        rec("m", "blocksworld", "validation", "p2", 0, extra={"time_per_step_s": 0.3}),
        rec("m", "blocksworld", "validation", "p1", 1, extra={"time_per_step_s": 0.2}),
    ]
    cost = report.cost_table(records).set_index("Method")
    assert cost.loc["m", "decode time per step (s)"] == "0.2000"
