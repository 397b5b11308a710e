import pytest
from conftest import TINY

import planarena.datasets.planning as planning
from planarena.core.validation import validate_plan
from planarena.datasets.planning import (
    PlannerCache,
    plan_cached,
    plan_with_fallback,
    run_fast_downward,
)
from planarena.datasets.suites import GENERATORS, _domain_text

DOMAIN = TINY / "domain.pddl"


def test_astar_lmcut_finds_optimal_plan():
    res = run_fast_downward("astar_lmcut", DOMAIN, TINY / "three.pddl", time_limit=20, memory_mb=2048)
    assert res.outcome == "solved"
    assert res.plan_length == 4 and res.cost == 4
    assert res.expansions is not None
    assert validate_plan(DOMAIN, TINY / "three.pddl", res.plan).valid


def test_unsolvable_problem_is_an_outcome_not_a_crash():
    res = run_fast_downward("astar_lmcut", DOMAIN, TINY / "unsolvable.pddl", time_limit=20, memory_mb=2048)
    assert res.outcome == "unsolved"
    assert res.plan == [] and res.plan_length is None


def test_malformed_input_is_recorded_as_error():
    res = run_fast_downward("astar_lmcut", DOMAIN, TINY / "malformed_problem.pddl", time_limit=20, memory_mb=2048)
    assert res.outcome == "error"
    assert res.failure_reason


def test_unknown_config_raises():
    with pytest.raises(ValueError, match="planners.bfs: set `search`"):
        run_fast_downward("bfs", DOMAIN, TINY / "three.pddl", 5, 512)


def test_configurations_are_params():
    assert planning.fd_arguments("lama_first") == (("--alias", "lama-first"), ())
    assert planning.fd_arguments("astar_lmcut", {"time_limit": 5}) == ((), ("--search", "astar(lmcut())"))
    block = {"search": "lazy_greedy([h], preferred=[h])", "options": ["--evaluator", "h=ff()"],
             "driver_options": ["--translate-options", "--full-encoding"]}
    assert planning.fd_arguments("gbfs_ff", block) == (
        ("--translate-options", "--full-encoding"), ("--evaluator", "h=ff()", "--search", "lazy_greedy([h], preferred=[h])"))
    for bad, match in [({"search": "x", "alias": "y"}, "not both"), ({"serch": "x"}, "unknown key"),
                       ({"search": "x", "options": "--evaluator"}, "list of command-line words"),
                       ({"search": "x", "driver_options": ["--overall-time-limit", "9s"]}, "set by planarena")]:
        with pytest.raises(ValueError, match=match):
            planning.fd_arguments("mine", bad)


def test_a_configured_search_runs_and_is_cached_apart(tmp_path):
    block = {"search": "lazy_greedy([h], preferred=[h])", "options": ["--evaluator", "h=ff()"]}
    res = run_fast_downward("gbfs_ff", DOMAIN, TINY / "three.pddl", 20, 2048, block)
    assert res.outcome == "solved" and validate_plan(DOMAIN, TINY / "three.pddl", res.plan).valid
    key = PlannerCache.key
    assert key("gbfs_ff", DOMAIN, TINY / "three.pddl", 20, 2048, block) != key(
        "gbfs_ff", DOMAIN, TINY / "three.pddl", 20, 2048, {"search": "astar(blind())"})
    # the built-ins keep their keys whether or not the block spells their search out
    assert key("astar_lmcut", DOMAIN, TINY / "three.pddl", 20, 2048, {"search": "astar(lmcut())"}) == key(
        "astar_lmcut", DOMAIN, TINY / "three.pddl", 20, 2048)


def test_a_fast_downward_row_from_params(tmp_path):
    from planarena.config import ConfigError, Layout
    from planarena.methods.base import PlanningTask
    from planarena.methods.classical import FastDownward

    params = {"planners": {"blind": {"search": "astar(blind())", "time_limit": 20, "memory_limit_mb": 2048}}}
    row = FastDownward("fd_blind", {"method": "fast_downward", "planner": "blind"}, params, Layout(root=tmp_path))
    assert row.uses_params == ("planners.blind",)
    attempt = row.solve(PlanningTask(None, DOMAIN, TINY / "three.pddl", 20), 13)
    assert attempt.outcome == "solved" and len(attempt.plan) == 4
    with pytest.raises(ConfigError, match="planners.nope"):
        FastDownward("fd_x", {"planner": "nope"}, params, Layout(root=tmp_path))


@pytest.fixture
def big_gripper(tmp_path):
    gen, dom, _ = GENERATORS["gripper"]
    (tmp_path / "domain.pddl").write_text(_domain_text(dom))
    (tmp_path / "g.pddl").write_text(gen(40, 0))
    return tmp_path / "domain.pddl", tmp_path / "g.pddl"


def test_timeout_then_lama_fallback(big_gripper, tmp_path):
    domain, problem = big_gripper
    planners = {
        "primary": "astar_lmcut",
        "fallback": "lama_first",
        "astar_lmcut": {"time_limit": 1, "memory_limit_mb": 2048},
        "lama_first": {"time_limit": 30, "memory_limit_mb": 2048},
    }
    attempts = plan_with_fallback(domain, problem, planners, PlannerCache(tmp_path / "cache"))
    assert [a.config for a in attempts] == ["astar_lmcut", "lama_first"]
    assert attempts[0].outcome == "timeout"
    assert attempts[1].outcome == "solved"
    assert validate_plan(domain, problem, attempts[1].plan).valid


def test_cache_serves_repeat_runs_without_running_the_planner(tmp_path, monkeypatch):
    cache = PlannerCache(tmp_path / "cache")
    first = plan_cached("astar_lmcut", DOMAIN, TINY / "three.pddl", 20, 2048, cache)
    assert not first.cached

    def boom(*a, **k):
        raise AssertionError("planner must not run on a cache hit")

    monkeypatch.setattr(planning, "run_fast_downward", boom)
    again = plan_cached("astar_lmcut", DOMAIN, TINY / "three.pddl", 20, 2048, cache)
    assert again.cached and again.plan == first.plan
    # another limit is another key
    with pytest.raises(AssertionError):
        plan_cached("astar_lmcut", DOMAIN, TINY / "three.pddl", 21, 2048, cache)
