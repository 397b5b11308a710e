"""plan -> trajectories -> train/evaluate on a smoke-sized suite, including faults and resuming."""

import json

import pytest
from conftest import TINY, only_domains

import planarena.methods.random_walk as rw
from planarena.core.io import read_jsonl
from planarena.core.problemset import ProblemSet
from planarena.core.trajectories import load_trajectories
from planarena.core.validation import validate_plan
from planarena.datasets.reference_plans import run_plan_stage, run_trajectories_stage
from planarena.datasets.suites import run_stage as generate
from planarena.runner.stages import run_evaluate_stage, run_train_stage


@pytest.fixture
def planned(smoke_params, layout):
    only_domains(smoke_params, "blocksworld", "gripper")
    generate(smoke_params, layout)
    run_plan_stage(smoke_params, layout)
    return smoke_params, layout


def test_plan_stage_records_and_validated_plan_files(planned):
    params, layout = planned
    ps = ProblemSet(layout.problems)
    recs = read_jsonl(layout.plans / "records.jsonl")
    assert len(recs) == len(ps.entries)
    for r in recs:
        assert r["outcome"] == "solved" and r["validated"] and r["planner"] == "astar_lmcut" and r["optimal"]
        assert r["attempts"][0]["config"] == "astar_lmcut"
        f = layout.plans / r["domain"] / r["split"] / f"{r['problem']}.plan"
        assert f.exists()


def test_trajectories_replay_every_validated_plan(planned):
    params, layout = planned
    run_trajectories_stage(params, layout)
    ps = ProblemSet(layout.problems)
    for (domain, split), entries in ps.by_domain_split().items():
        trajs = load_trajectories(layout.trajectories, domain, split)
        assert len(trajs) == len(entries)
        for t in trajs:
            assert len(t.states) == len(t.actions) + 1
            assert all(s == sorted(s) for s in t.states)
            assert set(t.goal) <= set(t.states[-1])  # last state satisfies the goal
            assert not set(t.goal) <= set(t.states[0]) or not t.actions


def test_timeout_is_recorded_and_excluded_from_training_data(planned):
    params, layout = planned
    params["planners"]["fallback"] = None
    params["planners"]["astar_lmcut"]["time_limit"] = 1
    # replace one train problem by a large Gripper problem that A*+LM-cut cannot solve in 1 s
    from planarena.datasets.suites import GENERATORS

    ps = ProblemSet(layout.problems)
    victim = next(e for e in ps.entries if e.domain == "gripper" and e.split == "train")
    (layout.problems / victim.path).write_text(GENERATORS["gripper"][0](40, 0))
    recs = {r["problem"]: r for r in run_plan_stage(params, layout)}
    assert recs[victim.problem]["outcome"] == "timeout"
    assert not recs[victim.problem]["validated"]
    run_trajectories_stage(params, layout)
    names = [t.problem for t in load_trajectories(layout.trajectories, "gripper", "train")]
    assert victim.problem not in names


def _results(layout, method):
    return read_jsonl(layout.results / f"{method}.jsonl")


def test_evaluate_classical_methods_and_validate_every_plan(planned):
    params, layout = planned
    ps = ProblemSet(layout.problems)
    for m in ("fd_astar_lmcut", "random_walk"):
        run_train_stage(params, layout, m)
        run_evaluate_stage(params, layout, m)
    astar = _results(layout, "fd_astar_lmcut")
    assert len(astar) == len(ps.entries)  # deterministic: one seed
    assert all(r["outcome"] == "solved" and r["validated"] for r in astar)
    walk = _results(layout, "random_walk")
    assert len(walk) == len(ps.entries) * len(params["evaluation"]["seeds"])
    for r in walk:
        if r["outcome"] == "solved":
            assert r["validated"] and r["plan_length"] <= params["methods"]["random_walk"]["horizon"]
            e = next(e for e in ps.entries if e.key == (r["domain"], r["split"], r["problem"]))
            assert validate_plan(ps.domain_file(e.domain), ps.problem_file(e), r["plan"]).valid


def test_evaluation_is_deterministic(planned, tmp_path):
    params, layout = planned
    run_train_stage(params, layout, "random_walk")
    run_evaluate_stage(params, layout, "random_walk")
    first = [(r["problem"], r["seed"], r["outcome"], r["plan"]) for r in _results(layout, "random_walk")]
    (layout.results / "random_walk.jsonl").unlink()
    run_evaluate_stage(params, layout, "random_walk")
    assert [(r["problem"], r["seed"], r["outcome"], r["plan"]) for r in _results(layout, "random_walk")] == first


def test_resume_after_kill_loses_no_record_and_reruns_nothing_done(planned, monkeypatch):
    params, layout = planned
    params = {**params, "jobs": 1}  # in-process, so the patched solve() below counts every call
    run_train_stage(params, layout, "random_walk")
    out = run_evaluate_stage(params, layout, "random_walk")
    full = out.read_text().splitlines()
    # simulate a kill halfway: half the lines written, the last one cut mid-write
    half = len(full) // 2
    out.write_text("\n".join(full[:half]) + "\n" + full[half][: len(full[half]) // 2])
    calls = []
    real = rw.RandomWalk.solve
    monkeypatch.setattr(rw.RandomWalk, "solve", lambda self, t, s: calls.append(1) or real(self, t, s))
    run_evaluate_stage(params, layout, "random_walk")
    assert len(calls) == len(full) - half  # only the missing attempts ran
    key = lambda r: (r["domain"], r["split"], r["problem"], r["seed"], r["outcome"], r["plan"])  # noqa: E731
    assert sorted(map(key, read_jsonl(out))) == sorted(key(json.loads(line)) for line in full)
    calls.clear()
    run_evaluate_stage(params, layout, "random_walk")
    assert calls == []  # nothing left to do


def test_changed_code_drops_stale_records(planned, monkeypatch):
    """A protocol or family edit reruns the evaluate stage (DVC) AND its records: the record
    fingerprint includes the evaluating code, so records of the old code are not resumed."""
    import planarena.core.fingerprint as fingerprint

    params, layout = planned
    run_train_stage(params, layout, "random_walk")
    run_evaluate_stage(params, layout, "random_walk")
    old = {r["config_hash"] for r in _results(layout, "random_walk")}
    run_evaluate_stage(params, layout, "random_walk")  # same code: resumed, same records
    assert {r["config_hash"] for r in _results(layout, "random_walk")} == old
    real = fingerprint.code_fingerprint
    monkeypatch.setattr(fingerprint, "code_fingerprint", lambda *a, **k: {**real(*a, **k), "edited": "1"})
    run_evaluate_stage(params, layout, "random_walk")
    assert {r["config_hash"] for r in _results(layout, "random_walk")}.isdisjoint(old)


def test_changed_config_drops_stale_records(planned):
    params, layout = planned
    run_train_stage(params, layout, "random_walk")
    run_evaluate_stage(params, layout, "random_walk")
    old = {r["config_hash"] for r in _results(layout, "random_walk")}
    params["methods"]["random_walk"]["horizon"] = 3
    run_evaluate_stage(params, layout, "random_walk")
    recs = _results(layout, "random_walk")
    assert {r["config_hash"] for r in recs}.isdisjoint(old)
    assert all(r["plan_length"] is None or r["plan_length"] <= 3 for r in recs)


def test_method_exception_is_recorded_as_error(planned, monkeypatch):
    params, layout = planned

    def broken(self, task, seed):
        raise RuntimeError("model exploded")

    monkeypatch.setattr(rw.RandomWalk, "solve", broken)
    run_train_stage(params, layout, "random_walk")
    run_evaluate_stage(params, layout, "random_walk")
    recs = _results(layout, "random_walk")
    assert recs and all(r["outcome"] == "error" and "model exploded" in r["failure_reason"] for r in recs)


def test_failed_training_is_recorded_not_raised(planned, monkeypatch):
    params, layout = planned

    def diverged(self, model_dir):
        raise FloatingPointError("loss is nan")

    monkeypatch.setattr(rw.RandomWalk, "train", diverged)
    info = run_train_stage(params, layout, "random_walk")
    assert info["status"] == "failed" and "loss is nan" in info["reason"]
    run_evaluate_stage(params, layout, "random_walk")
    recs = _results(layout, "random_walk")
    assert all(r["outcome"] == "error" and "training failed" in r["failure_reason"] for r in recs)


def test_never_revisit_walk_never_repeats_a_state_and_is_seeded(tmp_path):
    """The never-revisit floor (docs/concepts.md#floors-and-ceilings): every state on its path is
    new; same seed, same walk; on the tiny problem (12 reachable states) it either solves or hits a
    dead end, never the horizon."""
    from planarena.config import Layout
    from planarena.core.pddl import load_problem, replay
    from planarena.core.problemset import ProblemEntry
    from planarena.methods.base import PlanningTask
    from planarena.methods.random_walk import RandomWalk

    entry = ProblemEntry(domain="tiny", split="validation", problem="three", path="three.pddl",
                         size_param="blocks", size=3, objects=3, seed=None, origin="test")
    task = PlanningTask(entry, TINY / "domain.pddl", TINY / "three.pddl", time_limit=10)
    walk = RandomWalk("random_walk_novisit", {"horizon": 100, "never_revisit": True}, {}, Layout(tmp_path))
    outcomes = set()
    for seed in range(20):
        a, again = walk.solve(task, seed), walk.solve(task, seed)
        assert (again.outcome, again.plan) == (a.outcome, a.plan)
        outcomes.add(a.outcome)
        if a.outcome == "solved":
            states, _ = replay(load_problem(str(TINY / "domain.pddl"), str(TINY / "three.pddl")), a.plan)
            assert len(set(states)) == len(states)  # never revisits
        else:
            assert a.outcome == "unsolved" and a.failure_reason == "dead end: every successor already visited"
    assert outcomes == {"solved", "unsolved"}


def test_train_and_evaluate_stages_run_only_rows_whose_inputs_changed(planned):
    """The train and evaluate stages walk every row: a row off in the profile is left alone (its
    earlier records kept), a row whose inputs file did not change since its last complete run is
    up to date, and a change to one row's block reruns that row only (DVC's per-stage test, row by
    row); ``force`` reruns a named row, an unknown row name fails."""
    from planarena.runner.inputs import run_resolve_methods_stage
    from planarena.runner.stages import evaluate_stamp, run_evaluate_rows, run_train_rows

    params, layout = planned
    params = {**params, "jobs": 1, "methods": {
        "random_walk": {"horizon": 30}, "random_walk_novisit": {"method": "random_walk", "horizon": 30},
        "off_walk": {"method": "random_walk", "horizon": 30, "run": False}}}
    off_records = layout.results / "off_walk.jsonl"
    off_records.parent.mkdir(parents=True)
    off_records.write_text('{"kept": true}\n')
    run_resolve_methods_stage(params, layout)
    assert run_train_rows(params, layout) == {"random_walk": "trained", "random_walk_novisit": "trained",
                                              "off_walk": "off"}
    assert run_evaluate_rows(params, layout) == {"random_walk": "evaluated", "random_walk_novisit": "evaluated",
                                                 "off_walk": "off"}
    assert not (layout.models / "off_walk").exists() and off_records.read_text() == '{"kept": true}\n'
    records = {m: (layout.results / f"{m}.jsonl").read_bytes() for m in ("random_walk", "random_walk_novisit")}
    assert all(records.values()) and evaluate_stamp(layout, "random_walk").exists()

    run_resolve_methods_stage(params, layout)
    assert set(run_train_rows(params, layout).values()) == {"up to date", "off"}
    assert set(run_evaluate_rows(params, layout).values()) == {"up to date", "off"}

    params["methods"]["random_walk"]["horizon"] = 31
    run_resolve_methods_stage(params, layout)
    assert run_train_rows(params, layout)["random_walk"] == "trained"
    assert run_evaluate_rows(params, layout) == {"random_walk": "evaluated", "random_walk_novisit": "up to date",
                                                 "off_walk": "off"}
    assert (layout.results / "random_walk_novisit.jsonl").read_bytes() == records["random_walk_novisit"]
    assert run_evaluate_rows(params, layout, "random_walk_novisit", force=True) == {"random_walk_novisit": "evaluated"}
    # a hand run (`planarena stage`) after a params edit, without resolve_methods, sees the edit
    params["methods"]["random_walk_novisit"]["horizon"] = 29
    assert run_train_rows(params, layout, "random_walk_novisit") == {"random_walk_novisit": "trained"}
    # a killed evaluation leaves no stamp: the next run resumes the row
    evaluate_stamp(layout, "random_walk").unlink()
    assert run_evaluate_rows(params, layout, "random_walk") == {"random_walk": "evaluated"}
    with pytest.raises(KeyError, match="no methods block 'random_wlak'; did you mean `random_walk`"):
        run_train_rows(params, layout, "random_wlak")
