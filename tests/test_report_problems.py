"""Problems section: validator-rejected plans, errors and diverged runs, planning-stage outcomes."""

from __future__ import annotations

from test_report import manifest_3, rec, render, section, seeds_2_1_3, table_rows

from planarena.report import leaderboard as report
from planarena.report.records import ReportInputs
from planarena.report.sections.coverage import coverage_table


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
    cov = coverage_table(records, manifest_3())
    val = cov[(cov.domain == "blocksworld") & (cov.split == "validation")].iloc[0]
    assert val.solved == (1,)
    md = render(records, manifest_3(), plans)
    problems = section(md, "Problems")
    assert "precondition of (stack b1 b2) not satisfied at step 3" in problems
    assert "plan stage (lama_first)" in problems and "goal not reached" in problems
    assert "0.33 (1 run, n=3)" in section(md, "Coverage")
    detail = section(md, "Per-domain detail")
    assert "1/3, TO 0" in detail  # method: 1 of 3 attempts solved+validated
    assert "0/1, TO 0" in detail  # plan stage: its rejected plan is not solved
    a = report.analyse(ReportInputs(records, plans, manifest_3()))
    assert int(a.problems.rejected["Plans"].astype(int).sum()) == 2
    # metrics.json: the validated fraction only (the rejected plan counts as unsolved)
    assert report.build_metrics(a)["coverage"]["validation"]["m"] == 0.3333


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

