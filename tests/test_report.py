"""Tests of planarena.report: coverage arithmetic, Problems, section order, stage outputs."""

from __future__ import annotations

import json
import math

import pytest

from planarena import report
from planarena.config import Layout
from planarena.problemset import ProblemEntry
from planarena.records import ResultRecord, write_jsonl
from planarena.reference import FD_LMCUT_STATE_CENTRIC_TABLE1, PUBLISHED_TABLES

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


def test_published_rows_only_in_their_own_labelled_section():
    t = FD_LMCUT_STATE_CENTRIC_TABLE1
    assert t in PUBLISHED_TABLES
    assert t.label == (
        "Published (not measured here): Fast Downward A*+LM-cut, 60 s — Table 1 of "
        "'On Sample-Efficient Generalized Planning via Learned Transition Models' "
        "(../shared/papers/state-centric-transition-models.txt)"
    )
    assert [r.value("extrapolation") for r in t.rows] == [0.60, 0.13, 0.50, 0.26]
    assert all(r.value("train") is None for r in t.rows)
    md = render(seeds_2_1_3(), manifest_3())
    pub = section(md, "Published reference rows")
    assert f"### {t.label}" in pub
    assert ["Gripper", "1.00", "1.00", "0.13"] in table_rows(pub)
    assert "no train split" in pub
    before = md[: md.index("\n## Published reference rows\n")]
    assert "Published (not measured here)" not in before
    assert "Gripper" not in before and "0.13" not in before


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
