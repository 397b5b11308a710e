"""Plan quality as the field defines it (docs/concepts.md#coverage-and-plan-quality): QS / QS_S of
the symmetry-aware-transformers paper (Appendix E, Eq. 1-2) over every problem a method ran on, and
the IPC 2023 Learning Track quality and agile scores against the suite's reference costs. Every
expected number is computed by hand in the comments."""

from __future__ import annotations

import json
import math

import pytest
from conftest import TINY
from test_report import entry, rec

from planarena.core.problemset import ProblemEntry
from planarena.report.records import instance_index
from planarena.report.sections import coverage
from planarena.report.sections.quality import (ipc_agile, ipc_quality, ipc_table, quality_table,
                                                reference_costs, render, time_limits)


def ref_entry(domain: str, split: str, problem: str, cost: float | None) -> ProblemEntry:
    e = entry(domain, split, problem)
    return ProblemEntry(**{**e.to_dict(), "reference_cost": cost})


# -- QS / QS_S ---------------------------------------------------------------------------------


def test_qs_counts_every_problem_unsolved_and_unknown_as_zero():
    """p1..p4 validation; p4: no plan known to anyone (no planner, no method) -> counts 0, stays in P."""
    manifest = [entry("bw", "validation", p) for p in ("p1", "p2", "p3", "p4")]
    index = instance_index(manifest)
    plans = [{"domain": "bw", "split": "validation", "problem": "p1", "outcome": "solved", "validated": True,
              "plan_length": 4},
             {"domain": "bw", "split": "validation", "problem": "p4", "outcome": "timeout"}]
    records = [rec("a", "bw", "validation", "p1", 0, plan_length=8),   # 4/8 = 0.5
               rec("a", "bw", "validation", "p2", 0, plan_length=6),   # pi* = 6 (own plan): 1
               rec("a", "bw", "validation", "p3", 0, "unsolved"),      # 0 (b's plan of 3 known)
               rec("a", "bw", "validation", "p4", 0, "unsolved"),      # 0, no plan known
               rec("b", "bw", "validation", "p3", 0, plan_length=3)]   # b ran on every cell: P = 4
    t = quality_table(records, plans, index).set_index("method")
    assert t.loc["a", "n"] == 4 and t.loc["b", "n"] == 4
    assert t.loc["a", "qs_per_seed"] == pytest.approx((1.5 / 4,))     # (0.5 + 1 + 0 + 0) / 4
    assert t.loc["a", "QS"] == "0.38 (1 run)"
    assert t.loc["a", "qs_s_per_seed"] == pytest.approx((0.75,))      # (0.5 + 1) / 2
    assert t.loc["b", "QS"] == "0.25 (1 run)"                         # 1 / 4: p4 is not left out
    assert t.loc["b", "QS_S"] == "1.00 (1 run)"


def test_qs_is_zero_and_qs_s_dash_without_a_solved_problem_and_seeds_average():
    manifest = [entry("bw", "validation", p) for p in ("p1", "p2")]
    index = instance_index(manifest)
    records = [rec("a", "bw", "validation", "p1", 0, plan_length=2),   # seed 0: 1/2 and 0 -> QS 0.5
               rec("a", "bw", "validation", "p2", 0, "unsolved"),
               rec("a", "bw", "validation", "p1", 1, plan_length=4),   # seed 1: 2/4 -> QS 0.25
               rec("a", "bw", "validation", "p2", 1, "unsolved"),
               rec("z", "bw", "validation", "p1", 0, "timeout"),
               rec("z", "bw", "validation", "p2", 0, "unsolved")]
    t = quality_table(records, [], index).set_index("method")
    assert t.loc["a", "qs_per_seed"] == pytest.approx((0.5, 0.25))
    assert t.loc["a", "QS"] == "0.38 ± 0.12"                          # mean 0.375, population std 0.125
    assert t.loc["a", "QS_S"] == "0.75 ± 0.25"                        # 1.0 and 0.5
    assert t.loc["z", "QS"] == "0.00 (1 run)" and t.loc["z", "QS_S"] == "–"


def test_qs_never_exceeds_coverage_for_any_row():
    """Two domains, two held-out splits, methods on some cells only, several seeds, problems without
    a known plan: per row and seed QS <= the coverage section's pooled coverage of the same cells."""
    manifest = ([entry("bw", "validation", f"v{i}") for i in range(5)]
                + [entry("bw", "extrapolation", f"x{i}") for i in range(4)]
                + [entry("gr", "validation", f"g{i}") for i in range(3)]
                + [entry("bw", "train", "t0")])
    index = instance_index(manifest)
    records = []
    lengths = {"v0": 3, "v1": 5, "v2": 7, "x0": 9, "x1": 11, "g0": 2, "g1": 4}  # v3, v4, x2, x3, g2: unsolved
    for m, seeds, extra in (("walk", (0, 1, 2), 3), ("pol", (0, 1), 0), ("only_bw", (5,), 1)):
        for s in seeds:
            for e in manifest:
                if e.split == "train" or (m == "only_bw" and e.domain != "bw"):
                    continue
                n = lengths.get(e.problem)
                solved = n is not None and ((len(m) + s + int(e.problem[1:])) % 3 or m == "pol")
                records.append(rec(m, e.domain, e.split, e.problem, s, plan_length=n + extra + s)
                               if solved else rec(m, e.domain, e.split, e.problem, s, "unsolved"))
    t = quality_table(records, [], index)
    cov = coverage.coverage_table(records, manifest)
    assert len(t) == 6
    for row in t.itertuples(index=False):
        cells = cov[(cov["method"] == row.method) & (cov["split"] == row.split) & (cov["status"] == "ok")]
        n = int(cells["n"].sum())
        assert n == row.n
        pooled = [sum(c[i] for c in cells["solved"]) / n for i in range(len(cells["seeds"].iloc[0]))]
        assert row.coverage_per_seed == pytest.approx(tuple(pooled))
        for q, c in zip(row.qs_per_seed, pooled, strict=True):
            assert q <= c + 1e-12, (row.method, row.split)
    only = t[(t["method"] == "only_bw") & (t["split"] == "validation")].iloc[0]
    assert only.n == 5                                                  # its gr cell is not in its P


# -- IPC 2023 scores -----------------------------------------------------------------------------


def test_ipc_per_problem_scores():
    assert ipc_quality(10, None) == 0.0                   # unsolved
    assert ipc_quality(10, 10) == 1.0
    assert ipc_quality(10, 40) == 0.25
    assert ipc_quality(0, 0) == 1.0                       # empty plan, goal holds initially
    assert ipc_agile(None, 120) == 0.0                    # unsolved
    assert ipc_agile(0.2, 120) == 1.0 and ipc_agile(1.0, 120) == 1.0
    assert ipc_agile(10.0, 100) == pytest.approx(0.5)     # 1 - log 10 / log 100
    assert ipc_agile(100.0, 100) == 0.0 and ipc_agile(150.0, 100) == 0.0


def test_ipc_table_sums_per_domain_against_the_best_known_cost():
    manifest = [ref_entry("bw", "test-easy", "p1", 10), ref_entry("bw", "test-easy", "p2", 8),
                ref_entry("bw", "test-easy", "p3", 20), ref_entry("sp", "test-easy", "s1", 5),
                ref_entry("bw", "train", "t1", None)]
    records = [rec("a", "bw", "test-easy", "p1", 0, plan_length=20, plan_cost=20.0, wall_time=0.5),
               rec("a", "bw", "test-easy", "p2", 0, plan_length=8, plan_cost=8.0, wall_time=10.0),
               rec("a", "bw", "test-easy", "p3", 0, "timeout", wall_time=100.0),
               rec("a", "bw", "train", "t1", 0, plan_length=3),
               # b finds p2 cheaper than the reference (6 < 8): C*(p2) = 6 for everyone
               rec("b", "bw", "test-easy", "p2", 0, plan_length=6, plan_cost=None, wall_time=100.0),
               rec("b", "bw", "test-easy", "p1", 0, plan_length=5, validated=False, wall_time=1.0)]
    assert reference_costs(records, [], manifest)[("bw", "test-easy", "p2")] == (6.0, 8.0)
    assert reference_costs(records, [], manifest)[("bw", "test-easy", "p1")] == (10.0, 10.0)  # b's 5: rejected
    t = ipc_table(records, [], manifest, {"a": 100.0, "b": 100.0}).set_index("method")
    a, b = t.loc["a"], t.loc["b"]
    assert (a.domain, a.split, a.n, a.improved, a.seeds, a.solved) == ("bw", "test-easy", 3, 1, (0,), (2,))
    assert a.quality == pytest.approx((10 / 20 + 6 / 8 + 0,))          # 1.25
    assert a.agile == pytest.approx((1.0 + 0.5 + 0,))                  # T = 0.5 s: 1; T = 10 s of 100: 0.5
    assert b.solved == (1,) and b.quality == pytest.approx((1.0,)) and b.agile == pytest.approx((0.0,))  # T = T_max
    assert "sp" not in set(t["domain"])                                 # no method ran on sp
    text = "\n".join(render(quality_table(records, [], instance_index(manifest)), t.reset_index()))
    assert "### IPC 2023 Learning Track scores" in text
    assert "T_max = 100 s, the evaluation time limit in force" in text
    assert "| a        | bw       | test-easy | 2 / 3      | 1.2       | 1.5     |" in text
    assert "cheaper than the reference cost was found for 1 problem(s)" in text


def test_ipc_table_is_empty_without_reference_costs_and_unknown_limit_gives_no_agile():
    manifest = [entry("bw", "validation", "p1")]
    records = [rec("a", "bw", "validation", "p1", 0, plan_length=3)]
    assert ipc_table(records, [], manifest, {"a": 60.0}).empty
    assert "IPC" not in "\n".join(render(quality_table(records, [], instance_index(manifest)),
                                         ipc_table(records, [], manifest, {})))
    ipc = ipc_table(records, [], [ref_entry("bw", "validation", "p1", 3)], {})
    assert math.isnan(ipc.iloc[0]["agile"][0]) and ipc.iloc[0]["quality"] == (1.0,)


def test_time_limits_per_method_over_the_evaluation_default():
    params = {"evaluation": {"time_limit": 120}, "methods": {"a": {}, "b": {"time_limit": 30}, "c": None}}
    assert time_limits(params) == {"a": 120.0, "b": 30.0, "c": 120.0}


def test_reference_cost_is_the_minimum_of_the_two_upper_bound_files(tmp_path):
    from planarena.datasets.suites import import_external, reference_costs as suite_costs

    root = tmp_path / "ipc"
    d = root / "tiny"
    for folder in ("training/easy", "testing/easy", "testing/medium", "testing/hard"):
        (d / folder).mkdir(parents=True)
    (d / "domain.pddl").write_text((TINY / "domain.pddl").read_text())
    for name in ("p01", "p02", "p03"):
        (d / "testing" / "easy" / f"{name}.pddl").write_text((TINY / "three.pddl").read_text())
    (d / "training" / "easy" / "p01.pddl").write_text((TINY / "three.pddl").read_text())
    (root / "upper_bounds.json").write_text(json.dumps(
        {"tiny/testing/easy/p01.pddl": 10, "tiny/testing/easy/p02.pddl": 7, "tiny/testing/easy/p03.pddl": None}))
    (root / "upper_bounds_from_ipc_planners.json").write_text(json.dumps(
        {"tiny/testing/easy/p01.pddl": 12, "tiny/testing/easy/p02.pddl": 5, "tiny/testing/easy/p03.pddl": None}))
    params = {"suites": {"ipc2023": {"path": str(root), "domains": ["tiny"], "max_per_split": None}}}
    found, errors = import_external("ipc2023", params, tmp_path / "out")
    assert errors == []
    costs = {(e.split, e.problem): e.reference_cost for e in found}
    assert costs == {("train", "p01"): None, ("test-easy", "p01"): 10.0, ("test-easy", "p02"): 5.0,
                     ("test-easy", "p03"): None}
    rows = {(e.split, e.problem): e.to_dict() for e in found}
    assert "reference_cost" not in rows[("train", "p01")]          # manifests without costs unchanged
    (root / "upper_bounds.json").write_text('{"tiny/testing/easy/p01.pddl": "ten"}')
    errors = []
    assert suite_costs(root, errors) == {"tiny/testing/easy/p01.pddl": 12.0, "tiny/testing/easy/p02.pddl": 5.0}
    assert len(errors) == 1 and str(root / "upper_bounds.json") in errors[0]
