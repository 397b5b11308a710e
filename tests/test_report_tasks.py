"""Task sections: successor-set Hit@k, cost, and how records are classified by task and protocol."""

from __future__ import annotations

import math

import pytest
from conftest import TINY
from test_report import manifest_3, rec, render, section, seeds_2_1_3, subsection, table_rows

from planarena.report.markdown import DASH
from planarena.report.metrics import MIN_TIME_S, geometric_mean
from planarena.report.records import latest_records, record_task
from planarena.report.sections.cost import commonly_solved, cost_table
from planarena.report.sections.coverage import coverage_table
from planarena.report.sections.hitk import task_metric_table


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
    assert commonly_solved(records)[("blocksworld", "validation")] == {"p1", "p2"}
    cost = cost_table(records).set_index("Method")
    assert cost.loc["a", "commonly solved"] == "2"
    assert cost.loc["a", "time/problem, geo-mean (s)"] == "2.000"  # sqrt(1 * 4)
    assert cost.loc["b", "time/problem, geo-mean (s)"] == "4.000"  # sqrt(2 * 8)
    assert cost.loc["a", "mean wall time, all attempts (s)"] == "35.000"
    assert cost.loc["a", "parameters"] == "1,000" and cost.loc["b", "parameters"] == DASH
    assert cost.loc["b", "train time (s)"] == "3.5"
    assert geometric_mean([0.0, 1.0]) == pytest.approx(math.sqrt(MIN_TIME_S))


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
        latest = latest_records(records)
        assert len(latest) == 3
        assert {(record_task(r), r.extra.get("protocol")) for r in latest} == {
            ("plan", None),
            ("rank_successors", "successor_set"),
            ("rank_successors", "other"),
        }
        cov = coverage_table(records, manifest_3())
        cell = cov[(cov.domain == "blocksworld") & (cov.split == "validation")].iloc[0]
        assert cell.solved == (1,)
    # a later line of the same task and protocol still supersedes the earlier one
    latest = latest_records([plan, rank, rerun])
    assert len(latest) == 2
    ranks = [r for r in latest if record_task(r) == "rank_successors"]
    assert [r.extra["hit@1"] for r in ranks] == [0.75]
    md = render([plan, rank, rerun], manifest_3())
    assert "1 superseded record(s)" in section(md, "Problems")
    # a ranking record is no plan: not a rejected plan, not in coverage or detail
    assert "None: every plan reported as solved was accepted" in section(md, "Problems")
    cost = cost_table([plan, rank]).set_index(["Method", "Task"])
    assert cost.loc[("wl_xgb_delta", "plan"), "attempts"] == "1"
    assert cost.loc[("wl_xgb_delta", "rank_successors"), "attempts"] == "1"
    assert cost.loc[("wl_xgb_delta", "rank_successors"), "commonly solved"] == DASH


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
    table = task_metric_table(
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
    # pivoted: per domain and k a row per method, a column per split
    hit1 = table_rows(subsection(hitk, "blocksworld: hit@1"))
    assert hit1 == [
        ["method", "inputs", "seeds", "validation", "extrapolation"],
        ["embedplan_mlp", "state, action, goal", "1", "0.30 (1 run)", DASH],
        # seed 0: hit@1 = mean(0.5, 0.25) = 0.375; seed 1: 0.875 -> 0.625 ± 0.25
        ["wl_xgb_delta", "state, goal", "2", "0.62 ± 0.25", "0.25 ± 0.00"],
        ["*trajectories*", DASH, DASH, "2", "2"],
    ]  # fmt: skip
    assert table_rows(subsection(hitk, "blocksworld: hit@3"))[2][3:] == ["0.94 ± 0.06", "0.50 ± 0.00"]
    assert table_rows(subsection(hitk, "blocksworld: hit@5"))[1:3] == [
        ["embedplan_mlp", "state, action, goal", "1", "0.70 (1 run)", DASH],
        ["wl_xgb_delta", "state, goal", "2", "1.00 ± 0.00", "0.75 ± 0.00"],
    ]  # fmt: skip
    assert "`inputs`" in hitk and "ddof=0" in hitk
    assert "RuntimeError: no model" in section(md, "Problems")
    # the plan records of the same method, problems and seed still make its coverage
    assert "0.67 (1 run, n=3)" in section(md, "Coverage")
    assert "embedplan_mlp" not in section(md, "Coverage")


def test_successor_set_floor_row_trivial_cells_and_reference_plans_kept_apart():
    """Each cell gets the uniform-random-ranker row (from the records' chance@k), the mean
    successors per step, (trivial) where every step has at most k successors, and optimal (A*) and
    LAMA trajectories are separate cells."""
    def floor(chance, at_most, successors, plan):
        return {"hit_chance@1": chance[0], "hit_chance@3": chance[1], "hit_chance@5": chance[2],
                "at_most@1": at_most[0], "at_most@3": at_most[1], "at_most@5": at_most[2],
                "successors": successors, "reference_plan": plan}
    records = []
    for seed, hits in ((0, (0.5, 1.0, 1.0)), (1, (0.7, 1.0, 1.0))):
        records.append(rank_rec("m", "visitall", "validation", "v1", seed, hits,
                                extra=floor((0.30, 0.9, 1.0), (0.0, 0.5, 1.0), 3.0, "astar_lmcut")))
        records.append(rank_rec("m", "visitall", "validation", "v2", seed, hits,
                                extra=floor((0.20, 0.7, 1.0), (0.0, 0.0, 1.0), 4.0, "astar_lmcut")))
        records.append(rank_rec("m", "visitall", "validation", "v3", seed, (0.1, 0.2, 0.3),
                                extra=floor((0.10, 0.3, 0.5), (0.0, 0.0, 0.0), 10.0, "lama_first")))
    hitk = section(render(records, manifest_3()), "Hit@k")
    assert table_rows(subsection(hitk, "visitall: hit@5")) == [
        ["method", "inputs", "seeds", "validation (astar_lmcut)", "validation (lama_first)"],
        ["*uniform random ranker*", DASH, DASH, "1.00", "0.50"],
        ["m", "state, goal", "2", "1.00 ± 0.00 (trivial)", "0.30 ± 0.00"],
        ["*successors per step*", DASH, DASH, "3.5", "10.0"],
        ["*trajectories*", DASH, DASH, "2", "1"],
    ]  # fmt: skip
    assert table_rows(subsection(hitk, "visitall: hit@1"))[1:3] == [
        ["*uniform random ranker*", DASH, DASH, "0.25", "0.10"],
        ["m", "state, goal", "2", "0.60 ± 0.10", "0.10 ± 0.00"],
    ]  # fmt: skip
    assert table_rows(subsection(hitk, "visitall: hit@3"))[1:3] == [
        ["*uniform random ranker*", DASH, DASH, "0.80", "0.30"],
        ["m", "state, goal", "2", "1.00 ± 0.00", "0.20 ± 0.00"],
    ]  # fmt: skip


def test_successor_floor_of_a_real_trajectory(tmp_path):
    """chance@k from the PDDL: tiny problem's plan, every step's successors counted by pymimir."""
    from planarena.core.pddl import load_problem, read_plan_file, replay
    from planarena.core.trajectories import Trajectory
    from planarena.protocols.successor_set import successor_floor

    plan = read_plan_file(TINY / "three.plan")
    traj = Trajectory(domain="tiny", split="validation", problem="three", problem_file="three.pddl",
                      plan_source="astar_lmcut", optimal=True, actions=plan, states=[[]] * 5, static=[], goal=[])
    f = successor_floor(traj, TINY / "domain.pddl", TINY / "three.pddl")
    states, _ = replay(load_problem(str(TINY / "domain.pddl"), str(TINY / "three.pddl")), plan)
    counts = [len({a.apply(s) for a in s.generate_applicable_actions()}) for s in states[:-1]]
    assert f["successors"] == pytest.approx(sum(counts) / 4)
    assert f["hit_chance@1"] == pytest.approx(sum(1 / c for c in counts) / 4, abs=1e-6)
    assert f["hit_chance@5"] == pytest.approx(sum(min(5, c) / c for c in counts) / 4, abs=1e-6)
    assert f["at_most@5"] == pytest.approx(sum(c <= 5 for c in counts) / 4)


def test_record_task_from_extra():
    assert record_task(rec("m", "d", "s", "p", 0)) == "plan"
    assert record_task(rec("m", "d", "s", "p", 0, extra={"tasks": ["plan", "x"]})) == "plan"
    only_rank = rec("m", "d", "s", "p", 0, extra={"tasks": ["rank_successors"]})
    assert record_task(only_rank) == "rank_successors"
    assert record_task(rec("m", "d", "s", "p", 0, extra={"hit@1": 0.5})) == "rank_successors"
    schema = rec("m", "d", "s", "p", 0, extra={"task": "learn_schema"})
    assert record_task(schema) == "learn_schema"


def test_decode_time_per_step_is_averaged_over_attempts():
    records = [
        rec("m", "blocksworld", "validation", "p1", 0, extra={"time_per_step_s": 0.1}),
        rec("m", "blocksworld", "validation", "p2", 0, extra={"time_per_step_s": 0.3}),
        rec("m", "blocksworld", "validation", "p1", 1, extra={"time_per_step_s": 0.2}),
    ]
    cost = cost_table(records).set_index("Method")
    assert cost.loc["m", "decode time per step (s)"] == "0.2000"



def test_successor_set_headline_is_over_held_out_trajectories():
    from planarena.report.sections.hitk import held_out_mean

    records = [rank_rec("m", "bw", "validation", "p1", 0, (0.5, 1, 1)),
               rank_rec("m", "bw", "validation", "p2", 0, (0.25, 1, 1)),
               rank_rec("m", "bw", "validation", "p1", 1, (1.0, 1, 1)),
               rank_rec("m", "bw", "train", "t1", 0, (0.0, 0, 0))]  # train: not a result
    assert held_out_mean(records, "hit@1") == {"m": pytest.approx((0.375 + 1.0) / 2)}


def test_divergence_table_counts_diverged_seeds_per_method_and_domain():
    """Table E.9's count, from records: a seed diverged if its records carry ``diverged_at`` or
    have outcome ``diverged``; methods that do not report the field get no row."""
    from planarena.report.sections.divergence import divergence_table, render as render_div

    records = [
        rec("satr_nocl", "blocksworld", "validation", "p1", 13, "unsolved", extra={"diverged_at": 400}),
        rec("satr_nocl", "blocksworld", "validation", "p1", 14, "diverged"),
        rec("satr_nocl", "blocksworld", "validation", "p1", 15, "solved", extra={"diverged_at": None}),
        rec("satr_nocl", "gripper", "validation", "p9", 13, "solved", extra={"diverged_at": None}),
        rec("satr_cl", "blocksworld", "validation", "p1", 13, "solved", extra={"diverged_at": None}),
        rec("random_walk", "blocksworld", "validation", "p1", 13, "unsolved"),
    ]
    # two blocks decoding one trained model (extra["model"]) are one row
    records += [rec(f"encdec_{s}", "gripper", "validation", "p9", 13, "unsolved",
                    extra={"diverged_at": 30, "model": "encdec without CL"}) for s in ("greedy", "regrounding")]
    table = divergence_table(records)
    rows = {r["model"]: r for r in table.to_dict("records")}
    assert set(rows) == {"satr_cl", "satr_nocl", "encdec without CL"}
    assert rows["encdec without CL"]["gripper"] == "1 of 1"
    assert rows["satr_nocl"]["blocksworld"] == "2 of 3" and rows["satr_nocl"]["gripper"] == "0 of 1"
    assert rows["satr_cl"]["blocksworld"] == "0 of 1" and rows["satr_cl"]["gripper"] == "–"
    assert "## Training divergences" in render_div(table)
    assert divergence_table([rec("random_walk", "blocksworld", "validation", "p1", 13)]) is None
    assert render_div(None) == []
