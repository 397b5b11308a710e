"""Coverage section: arithmetic over seeds, missing records, empty splits, best in bold, the Sum
row, superseded records, coverage by instance size."""

from __future__ import annotations

import math

import pytest
from test_report import entry, front, manifest_3, rec, render, section, seeds_2_1_3, subsection, table_rows

from planarena.report.markdown import DASH
from planarena.report.plots import coverage_by_size
from planarena.report.sections.coverage import (
    best_methods,
    coverage_sum,
    coverage_table,
    format_coverage_cell,
)


def test_coverage_mean_and_population_std_over_seeds():
    cov = coverage_table(seeds_2_1_3(), manifest_3())
    row = cov[(cov.domain == "blocksworld") & (cov.split == "validation")].iloc[0]
    assert row.n == 3 and row.seeds == (0, 1, 2) and row.solved == (2, 1, 3)
    assert row["mean"] == pytest.approx(2 / 3)
    assert row["std"] == pytest.approx(math.sqrt(2 / 27))  # ddof=0
    assert format_coverage_cell(row["mean"], row["std"], row.n) == "0.67 ± 0.27 (n=3)"
    md = render(seeds_2_1_3(), manifest_3())
    assert "0.67 ± 0.27 (n=3)" in section(md, "Coverage")
    assert "ddof=0" in section(md, "Coverage")


def test_missing_records_count_as_unsolved_and_other_splits_show_dash():
    records = [rec("m", "blocksworld", "validation", "p1", 0)]  # 1 of 3 attempted and solved
    records += [rec("x", "blocksworld", "extrapolation", q, 0) for q in ("q1", "q2")]
    cov = coverage_table(records, manifest_3())
    val = cov[(cov.domain == "blocksworld") & (cov.split == "validation") & (cov.method == "m")]
    assert val.iloc[0]["mean"] == pytest.approx(1 / 3)
    ext = cov[(cov.domain == "blocksworld") & (cov.split == "extrapolation") & (cov.method == "m")]
    assert ext.iloc[0].status == "no records"
    md = render(records, manifest_3())
    rows = table_rows(subsection(section(md, "Coverage"), "blocksworld"))
    assert rows[0] == ["method", "validation", "extrapolation"]  # a row per method, a column per split
    assert ["m", "**0.33 (1 run, n=3)**", DASH] in rows
    assert ["x", DASH, "**1.00 (1 run, n=2)**"] in rows
    # a split no method ran on gets no column and is named below the tables
    assert table_rows(subsection(section(md, "Coverage"), "gripper"))[0] == ["method", "extrapolation"]
    assert "Not evaluated by any plan method (columns left out): `gripper/validation`." in md
    assert "seed 0 has records for 1 of 3 instances" in section(md, "Problems")


def test_empty_split_is_reported_as_no_instances_without_division_by_zero():
    records = seeds_2_1_3() + [rec("m", "gripper", "validation", "g1", s) for s in (0, 1, 2)]
    cov = coverage_table(records, manifest_3())
    empty = cov[(cov.domain == "gripper") & (cov.split == "extrapolation")].iloc[0]
    assert empty.n == 0 and empty.status == "no instances" and math.isnan(empty["mean"])
    md = render(records, manifest_3(), splits=("train",))
    gripper = table_rows(subsection(section(md, "Coverage"), "gripper"))
    assert gripper[0] == ["method", "train", "validation", "extrapolation"]
    assert gripper[1][3] == "no instances"
    assert "`gripper/extrapolation`: no instances" in section(md, "Problems")
    assert "`blocksworld/train`: no instances" in section(md, "Problems")  # declared in params only
    sums = coverage_sum(cov)
    assert sums.iloc[0]["n"] == 4  # 3 blocksworld/validation + 1 gripper/validation
    assert sums.iloc[0]["mean"] == pytest.approx(0.75)  # (2 solved on average + 1) / 4


def test_best_in_bold_picks_maximum_and_all_ties():
    assert best_methods({"a": 0.5, "b": 0.75, "c": 0.75}) == {"b", "c"}
    assert best_methods({"a": 0.0, "b": 0.0}) == set()
    assert best_methods({"a": math.nan}) == set()
    records = []
    for m, solved in (("a", {"p1"}), ("b", {"p1", "p2"}), ("c", {"p1", "p2"})):
        records += [
            rec(m, "blocksworld", "validation", p, 0, "solved" if p in solved else "unsolved")
            for p in ("p1", "p2", "p3")
        ]
    cov_md = section(render(records, manifest_3()), "Coverage")
    rows = table_rows(subsection(cov_md, "blocksworld"))
    assert [r[1] for r in rows] == ["validation", "0.33 (1 run, n=3)", "**0.67 (1 run, n=3)**",
                                    "**0.67 (1 run, n=3)**"]  # a column per split, best in bold
    held = table_rows(subsection(cov_md, "Held-out splits, all domains"))
    assert held[0][-1] == "held-out (n=3)"  # the instances some method ran on


def test_coverage_by_size_pools_splits_the_method_ran_on():
    df = coverage_by_size(seeds_2_1_3(), manifest_3())
    assert list(df["x"]) == [4, 5]  # extrapolation (sizes 9, 10) not run: not plotted
    assert df.set_index("x").loc[4, "coverage"] == pytest.approx(1.0)  # p1 solved by every seed
    assert df.set_index("x").loc[5, "coverage"] == pytest.approx((0.5 + 0 + 1) / 3)


def test_superseded_records_use_the_last_line():
    first = rec("m", "blocksworld", "validation", "p1", 0, "unsolved", config_hash="old")
    second = rec("m", "blocksworld", "validation", "p1", 0, "solved", config_hash="new")
    cov = coverage_table([first, second], manifest_3())
    assert cov[(cov.domain == "blocksworld") & (cov.split == "validation")].iloc[0].solved == (1,)
    assert "1 superseded record(s)" in section(render([first, second], manifest_3()), "Problems")



def test_sum_is_over_held_out_splits_only():
    """Train coverage is shown but never summed (nor in metrics.json)."""
    records = [rec("m", "blocksworld", "train", p, 0) for p in ("t1", "t2")]
    records += [rec("m", "blocksworld", "validation", p, 0, "solved" if p == "p1" else "unsolved")
                for p in ("p1", "p2", "p3")]
    manifest = manifest_3() + [entry("blocksworld", "train", p, 3) for p in ("t1", "t2")]
    cov = coverage_table(records, manifest)
    train = cov[(cov.split == "train") & (cov.method == "m")].iloc[0]
    assert train.status == "ok" and train["mean"] == 1.0  # visible in the table
    total = coverage_sum(cov).set_index("method").loc["m"]
    assert total.n == 3 and total["mean"] == pytest.approx(1 / 3)  # train's 2/2 not in the Sum
    cov_md = section(render(records, manifest), "Coverage")
    assert table_rows(subsection(cov_md, "blocksworld"))[1][1] == "**1.00 (1 run, n=2)**"  # train column
    held = table_rows(subsection(cov_md, "Held-out splits, all domains"))
    assert held[0] == ["method", "validation (n=3)", "held-out (n=3)"]  # no train column
    assert held[1] == ["m", "**0.33 (1 run)**", "**0.33 (1 run)**"]
    front_rows = table_rows(section(front(records, manifest), "Plan coverage"))
    assert front_rows[0][:4] == ["kind", "method", "validation (n=3)", "held-out (n=3)"]  # no train column
    # the only row of its kind: nothing to be significantly better than, so not bold
    assert front_rows[1][2].startswith("0.33 [") and front_rows[1][2].endswith(" 1/3")


def test_a_seed_without_records_in_a_cell_counts_as_zero():
    """Seed 1 ran (validation) but left no extrapolation records."""
    records = [rec("m", "blocksworld", "validation", p, s) for p in ("p1", "p2", "p3") for s in (0, 1)]
    records += [rec("m", "blocksworld", "extrapolation", q, 0) for q in ("q1", "q2")]
    cov = coverage_table(records, manifest_3())
    ext = cov[(cov.split == "extrapolation") & (cov.method == "m")].iloc[0]
    assert ext.seeds == (0, 1) and ext.solved == (2, 0)
    assert ext["mean"] == pytest.approx(0.5) and ext["std"] == pytest.approx(0.5)


def test_horizon_ceiling_counts_held_out_problems_whose_optimal_plan_is_too_long():
    from planarena.report.sections.coverage import horizon_ceiling

    index = {("blocksworld", "train"): {"t1"}, ("blocksworld", "validation"): {"p1", "p2", "p3", "p4"}}
    plans = [
        {"domain": "blocksworld", "split": "train", "problem": "t1", "outcome": "solved", "optimal": True,
         "plan_length": 500},  # train: not counted
        {"domain": "blocksworld", "split": "validation", "problem": "p1", "outcome": "solved", "optimal": True,
         "plan_length": 101},  # over
        {"domain": "blocksworld", "split": "validation", "problem": "p2", "outcome": "solved", "optimal": True,
         "plan_length": 100},  # fits
        {"domain": "blocksworld", "split": "validation", "problem": "p3", "outcome": "solved", "optimal": False,
         "plan_length": 120},  # unknown: LAMA's plan is longer, optimum not known
        {"domain": "blocksworld", "split": "validation", "problem": "p4", "outcome": "timeout"},  # unknown
    ]
    lines = horizon_ceiling(plans, index, {"walk": 100, "fd": None}, ["walk", "fd"])
    assert lines == ["Horizon ceiling: with plans of at most 100 steps (`walk`), 1 of 4 held-out problems "
                     "cannot be solved (their optimal plans are longer); for 2 more no optimal plan is known "
                     "and no plan within the horizon was found by the planners."]
    assert horizon_ceiling(plans, index, {"fd": None}, ["fd"]) == []
    # problems the planning stage never ran on (planners.splits) are said so, not "no plan found"
    index[("blocksworld", "test-easy")] = {"e1", "e2"}
    [line] = horizon_ceiling(plans, index, {"walk": 100}, ["walk"])
    assert line.endswith("1 of 6 held-out problems cannot be solved (their optimal plans are longer); for 2 "
                         "more no optimal plan is known and no plan within the horizon was found by the "
                         "planners; 2 have no reference-plan record (not planned, see `planners.splits`, or the "
                         "records were not kept), so their ceiling is unknown.")


def test_cap_ceiling_counts_problems_the_object_and_token_caps_make_unsolvable_per_split():
    """A plan generator's object vocabulary and token cap are ceilings, stated per held-out split
    like the horizon ceiling."""
    from planarena.report.sections.coverage import cap_ceiling, plan_tokens

    assert plan_tokens(["(pick b1 rooma left)", "(move rooma roomb)"]) == 4 + 3 + 1
    index = {("gripper", "train"): {"t1"}, ("gripper", "validation"): {"v1"},
             ("gripper", "extrapolation"): {"x1", "x2", "x3", "x4"}}
    six = ["(pick b1 rooma left)", "(move rooma roomb)"] * 3   # 22 tokens with the end token
    plans = [
        {"domain": "gripper", "split": "train", "problem": "t1", "outcome": "solved", "optimal": True,
         "objects": 99, "plan": six},                           # train: never counted
        {"domain": "gripper", "split": "validation", "problem": "v1", "outcome": "solved", "optimal": True,
         "objects": 6, "plan": six[:2]},                        # fits
        {"domain": "gripper", "split": "extrapolation", "problem": "x1", "outcome": "solved", "optimal": True,
         "objects": 70, "plan": six},                           # too many objects
        {"domain": "gripper", "split": "extrapolation", "problem": "x2", "outcome": "solved", "optimal": True,
         "objects": 10, "plan": six},                           # 22 tokens > 20
        {"domain": "gripper", "split": "extrapolation", "problem": "x3", "outcome": "solved", "optimal": False,
         "objects": 10, "plan": six},                           # unknown: not optimal, over the cap
        {"domain": "gripper", "split": "extrapolation", "problem": "x4", "outcome": "solved", "optimal": False,
         "objects": 10, "plan": six[:2]},                       # fits (a plan within the cap exists)
    ]
    lines = cap_ceiling(plans, index, {"gen": (64, 20), "enc": (64, None), "fd": (None, None)}, ["gen", "enc", "fd"])
    assert lines == [
        "Cap ceiling (`gen`): problems these caps make unsolvable by construction, per held-out split: "
        "extrapolation: 2 of 4 (1 more than 64 objects; 1 an optimal plan of more than 20 tokens; 1 unknown "
        "(no optimal plan within the cap found)); validation: 0 of 1 (0 more than 64 objects; 0 an optimal plan "
        "of more than 20 tokens).",
        "Cap ceiling (`enc`): problems these caps make unsolvable by construction, per held-out split: "
        "extrapolation: 1 of 4 (1 more than 64 objects); validation: 0 of 1 (0 more than 64 objects).",
    ]
    assert cap_ceiling(plans, index, {"fd": (None, None)}, ["fd"]) == []
    # with the cells each method ran on, a split the capped rows never decoded is not listed
    only_x = cap_ceiling(plans, index, {"gen": (64, 20)}, ["gen"], {"gen": {("gripper", "extrapolation")}})
    assert only_x == [lines[0].split("; validation")[0] + "."]
    assert cap_ceiling(plans, index, {"gen": (64, 20)}, ["gen"], {"gen": set()}) == []


def test_plan_quality_qs_and_qs_s():
    """QS / QS_S (symmetry-aware-transformers paper, Eq. 1-2) against the shortest known plan."""
    from planarena.report.sections.quality import best_lengths, quality_table

    index = {("blocksworld", "train"): frozenset({"t1"}),
             ("blocksworld", "validation"): frozenset({"p1", "p2", "p3", "p4"})}
    plans = [{"domain": "blocksworld", "split": "validation", "problem": p, "outcome": "solved",
              "validated": True, "plan_length": n} for p, n in (("p1", 4), ("p2", 6), ("p3", 10))]
    # p4: no planner plan, but method b finds one of length 8 -> pi* = 8
    records = [rec("a", "blocksworld", "validation", "p1", 0, plan_length=8),   # 4/8
               rec("a", "blocksworld", "validation", "p2", 0, plan_length=6),   # 6/6
               rec("a", "blocksworld", "validation", "p3", 0, "unsolved"),      # 0
               rec("a", "blocksworld", "validation", "p4", 0, "unsolved"),
               rec("a", "blocksworld", "train", "t1", 0, plan_length=3),        # train: not counted
               rec("b", "blocksworld", "validation", "p3", 0, plan_length=5),   # shorter than FD's 10
               rec("b", "blocksworld", "validation", "p4", 0, plan_length=8)]
    best = best_lengths(records, plans)
    assert best[("blocksworld", "validation", "p3")] == 5 and best[("blocksworld", "validation", "p4")] == 8
    table = quality_table(records, plans, index).set_index("method")
    assert table.loc["a", "n"] == 4
    assert table.loc["a", "QS"] == "0.38 (1 run)"       # (0.5 + 1 + 0 + 0) / 4
    assert table.loc["a", "QS_S"] == "0.75 (1 run)"     # (0.5 + 1) / 2
    assert table.loc["b", "QS"] == "0.50 (1 run)" and table.loc["b", "QS_S"] == "1.00 (1 run)"
