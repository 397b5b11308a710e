"""The front page's coverage tables (``planarena.report.sections.headline``): one problem set per
table, k/N and an interval in every cell, rows grouped by kind, learned rows tested against the
floors of their kind, the best tier in bold; the problems box lists only real problems."""

from __future__ import annotations

import math

from test_report import entry, rec

from planarena.methods.base import Budget, ReportTraits
from planarena import stats
from planarena.report.records import instance_index
from planarena.report.sections import headline, problems

BUDGET = Budget(steps=10, batch=2, paper_steps=1000, paper_batch=2)
TRAITS = {
    "walk": ReportTraits(role="floor", kind="policy", floor_kinds=("policy", "search", "decoder")),
    "pol": ReportTraits(kind="policy", budget=BUDGET),
    "weak": ReportTraits(kind="policy", budget=BUDGET),
    "fd": ReportTraits(kind="search"),
    "learned_search": ReportTraits(kind="search", budget=BUDGET),
    "schema_floor": ReportTraits(role="floor", kind="search", floor_kinds=("search",)),
}


def _manifest(n=10):
    return ([entry("bw", "validation", f"v{i}") for i in range(n)]
            + [entry("bw", "extrapolation", f"x{i}") for i in range(n)]
            + [entry("bw", "schema-test", f"s{i}") for i in range(3)])


PREFIX = {"validation": "v", "extrapolation": "x"}


def _plans(method, split, solved, seeds=(13,)):
    return [rec(method, "bw", split, p, s, "solved" if p in solved else "unsolved")
            for s in seeds for p in [f"{PREFIX[split]}{i}" for i in range(10)]]


def _tables(records, manifest=None):
    manifest = manifest or _manifest()
    return headline.coverage_tables(records, instance_index(manifest, records), TRAITS, seed=0)


def test_cells_have_k_over_n_and_wilson_or_bootstrap_interval():
    records = (_plans("fd", "validation", {f"v{i}" for i in range(10)})
               + _plans("fd", "extrapolation", {"x0", "x1"})
               + _plans("pol", "validation", {"v0"}, seeds=(13, 14, 15))
               + _plans("pol", "extrapolation", set(), seeds=(13, 14, 15)))
    [t] = _tables(records)
    assert t.splits == ["validation", "extrapolation"] and len(t.problems["held-out"]) == 20
    fd = t.cells[("fd", "held-out")]
    assert fd.method == "wilson" and (fd.k, fd.n) == (12, 20)
    assert fd == stats.wilson(12, 20)
    # k = n and k = 0 cells
    assert t.cells[("fd", "validation")].high == 1.0
    zero = t.cells[("pol", "extrapolation")]
    # 0 of 10 problems x 3 seeds: the bootstrap degenerates; Wilson on the 10 problems, not zero width
    assert zero.method == "wilson-problems" and (zero.value, zero.low) == (0.0, 0.0) and math.isclose(zero.high, stats.wilson(0, 10).high)
    assert headline.format_cell(fd) == f"0.60 {stats.format_interval(fd)} 12/20"
    assert headline.format_cell(t.cells[("pol", "validation")]).endswith(" 3/30")


def test_schema_test_is_its_own_problem_set():
    records = (_plans("fd", "validation", {"v0"}) + _plans("fd", "extrapolation", set())
               + [rec("learned_search", "bw", "schema-test", f"s{i}", 13) for i in range(3)])
    tables = _tables(records)
    assert [t.splits for t in tables] == [["validation", "extrapolation"], ["schema-test"]]
    assert tables[1].methods == ["learned_search"] and len(tables[1].problems["held-out"]) == 3


def test_rows_grouped_by_kind_and_best_tier_within_kind():
    every = {f"v{i}" for i in range(10)}
    records = (_plans("fd", "validation", every) + _plans("learned_search", "validation", every - {"v0"})
               + _plans("pol", "validation", {"v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7"})
               + _plans("weak", "validation", set()) + _plans("walk", "validation", set()))
    [t] = _tables(records)
    assert t.methods == ["fd", "learned_search", "pol", "weak", "walk"]
    assert [t.group[m] for m in t.methods] == ["search", "search", "policy", "policy", "floor"]
    col = "validation"
    # fd 10/10 vs learned_search 9/10: one discordant problem, not significant -> one tier, no bold
    assert t.tier[col] == {"fd", "learned_search", "pol"} and not t.bold[col] & {"fd", "learned_search"}
    # the policy best (8/10) against weak (0/10): 8 discordant, p = 2 / 2**8 -> pol alone is bold
    assert t.bold[col] == {"pol"}
    frame = headline.render_table(t, TRAITS, {"pol": "10 x 2 (1.0 % of paper)"})
    assert list(frame.columns) == ["kind", "method", "validation (n=10)", "held-out (n=10)", "above floor",
                                   headline.TWIN_COLUMN, "budget"]
    assert frame.loc[frame.method == "pol", "validation (n=10)"].iloc[0].startswith("**0.80")


def test_the_split_a_row_selected_its_checkpoint_on_is_marked():
    records = (_plans("pol", "validation", {"v0"}) + _plans("pol", "extrapolation", {"x0"})
               + _plans("weak", "validation", {"v0"}) + _plans("weak", "extrapolation", set()))
    [t] = _tables(records)
    traits = {**TRAITS, "pol": ReportTraits(kind="policy", budget=BUDGET, selected_on="validation")}
    frame = headline.render_table(t, traits).set_index("method")
    assert frame.loc["pol", "validation (n=10)"].endswith(f"1/10 {headline.SELECTED}")  # ties weak: not bold
    assert headline.SELECTED not in frame.loc["pol", "extrapolation (n=10)"]
    assert headline.SELECTED not in frame.loc["weak", "validation (n=10)"]
    assert headline.SELECTED in headline.DESCRIPTION


def test_nothing_bold_when_the_best_solves_nothing():
    records = _plans("pol", "validation", set()) + _plans("weak", "validation", set())
    [t] = _tables(records)
    assert t.bold["validation"] == set()


def test_above_floor_by_paired_test_holm_corrected():
    records = (_plans("pol", "validation", {f"v{i}" for i in range(10)})
               + _plans("weak", "validation", {"v0", "v1"})
               + _plans("walk", "validation", {"v0"})
               + _plans("fd", "validation", set()))
    [t] = _tables(records)
    # pol vs walk: 9 discordant, p = 2 / 2**9; weak vs walk: 1 discordant, p = 1; Holm over 2 tests
    tests = {m: x for m, [x] in t.floor_tests.items()}
    assert set(tests) == {"pol", "weak"}  # fd learns nothing: no floor test
    assert tests["pol"][0] == "walk" and math.isclose(tests["pol"][2], 2 * 2 / 2 ** 9)
    assert tests["weak"][2] == 1.0
    assert t.above_floor("pol") is True and t.above_floor("weak") is False and t.above_floor("fd") is None
    assert headline.format_floor(t, "pol").startswith("yes (p=")
    assert headline.format_floor(t, "weak") == "at floor at this budget: `walk` p=1.00"


def test_problems_box_lists_only_real_problems():
    manifest = [entry("bw", "validation", "v0"), entry("bw", "schema-test", "s0"), entry("bw", "schema-test", "s1")]
    records = [
        # a floor's plan rejected by the validator: expected, not in the box
        rec("schema_floor", "bw", "schema-test", "s0", 13, "solved", validated=False, validator_reason="bad"),
        # a schema-learning record names its domain as problem: not an unknown problem
        rec("learned_search", "bw", "schema-test", "bw", 13, "solved", extra={"task": "learn_schema"}),
        rec("learned_search", "bw", "schema-test", "s0", 13),
        rec("learned_search", "bw", "schema-test", "s1", 13),
        rec("pol", "bw", "validation", "v0", 13),
    ]
    plans = [{"domain": "bw", "split": "validation", "problem": "v0", "outcome": "timeout", "attempts": []}]
    index = instance_index(manifest, records)
    roles = {m: t.role for m, t in TRAITS.items()}
    p = problems.analyse(records, plans, index, roles, ("schema-test",))
    assert problems.box_lines(p) == ["None."]
    detail = "\n".join(problems.render(p))
    assert "1 plan(s) of floor rows rejected by the validator" in detail
    assert "`schema_floor` seed 13 has records for 1 of 2 instances" in detail
    # the same rejection by a learned row is a problem
    records.append(rec("pol", "bw", "validation", "v0", 14, "solved", validated=False, validator_reason="bad"))
    box = problems.box_lines(problems.analyse(records, plans, index, roles, ("schema-test",)))
    assert len(box) == 1 and "rejected by the validator" in box[0] and "`pol`" in box[0]
    # a plan found in a learned domain and rejected by the true one measures the learned schema:
    # expected (the schema table counts it), on the detail page, not in the box
    records.append(rec("learned_search", "bw", "schema-test", "s1", 13, "solved", validated=False,
                       validator_reason="wrong arity"))
    p = problems.analyse(records, plans, index, roles, ("schema-test",))
    box = problems.box_lines(p)
    assert len(box) == 1 and "`pol`" in box[0]
    assert "1 plan(s) found in learned domains (`schema-test`) rejected" in "\n".join(problems.render(p))


def test_paired_tests_use_the_problems_both_rows_attempted():
    """A floor measured on one of three schema-test problems by configuration: the learned row is
    compared with it on that problem only, not on problems the floor never tried."""
    records = ([rec("learned_search", "bw", "schema-test", f"s{i}", 13) for i in range(3)]
               + [rec("schema_floor", "bw", "schema-test", "s0", 13, "unsolved")])
    [t] = _tables(records)
    assert t.cells[("schema_floor", "held-out")].k == 0 and t.cells[("schema_floor", "held-out")].n == 3
    [(floor, test, p)] = t.floor_tests["learned_search"]
    assert floor == "schema_floor" and test.n == 1 and (test.a_better, test.b_better) == (1, 0) and p == 1.0
