"""Outcomes do not depend on machine load (docs/pipeline.md#stable-outputs): the limits that decide
``timeout`` count CPU time (:mod:`planarena.core.clock`), wall time is only recorded. A loaded
machine is simulated by a wall clock that jumps an hour at every reading: every outcome must equal
the unloaded run's, while a CPU-time limit of zero still times out."""

from __future__ import annotations

import time

import pytest
from conftest import TINY, ConstantScorer

from planarena.config import Layout
from planarena.core.clock import wall_safety
from planarena.core.pddl import load_problem
from planarena.core.problemset import ProblemEntry
from planarena.methods.base import PlanningTask
from planarena.methods.random_walk import RandomWalk
from planarena.search.decoding import DecodeProblem, DecodeSettings, decode_lockstep



@pytest.fixture
def loaded_wall_clock(monkeypatch):
    """``time.perf_counter`` / ``time.time`` advance 3600 s at every call (a machine so loaded
    that each step takes an hour of wall time); CPU time is untouched."""
    real = time.perf_counter
    jump = {"n": 0}

    def slow() -> float:
        jump["n"] += 1
        return real() + 3600.0 * jump["n"]

    monkeypatch.setattr(time, "perf_counter", slow)
    monkeypatch.setattr(time, "time", slow)
    return jump


def _walk_task(limit: float) -> PlanningTask:
    entry = ProblemEntry(domain="tiny", split="validation", problem="three", path="three.pddl",
                         size_param="blocks", size=3, objects=3, seed=None, origin="test")
    return PlanningTask(entry, TINY / "domain.pddl", TINY / "three.pddl", time_limit=limit)


def test_random_walk_outcome_ignores_the_wall_clock(tmp_path, loaded_wall_clock):
    walk = RandomWalk("random_walk", {"horizon": 100}, {}, Layout(tmp_path))
    loaded = [walk.solve(_walk_task(10), seed) for seed in range(6)]
    assert loaded_wall_clock["n"] > 0 and all(a.outcome != "timeout" for a in loaded)
    assert {a.outcome for a in loaded} <= {"solved", "unsolved"}
    assert walk.solve(_walk_task(0.0), 0).outcome == "timeout"   # no CPU time at all: the limit still holds


def test_lockstep_decoding_outcome_ignores_the_wall_clock(request):
    problem = load_problem(str(TINY / "domain.pddl"), str(TINY / "unsolvable.pddl"))
    settings = DecodeSettings(beam_width=1, horizon=30, revisit=True)
    calm = decode_lockstep([DecodeProblem(problem, time_limit=10)], ConstantScorer(), settings)[0]
    calls = request.getfixturevalue("loaded_wall_clock")
    loaded = decode_lockstep([DecodeProblem(problem, time_limit=10)], ConstantScorer(), settings)[0]
    assert calls["n"] > 0
    assert (loaded.outcome, loaded.steps) == (calm.outcome, calm.steps) == ("unsolved", 30)
    assert loaded.wall_s > 3600.0 > 10 > loaded.time_s        # wall recorded, CPU decided
    assert decode_lockstep([DecodeProblem(problem, time_limit=0.0)], ConstantScorer(), settings)[0].outcome == "timeout"


def test_wall_safety_net_is_far_above_the_cpu_limit():
    assert wall_safety(60) == 660.0 and wall_safety(0) == 60.0
