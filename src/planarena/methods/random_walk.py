"""Random applicable walk: the coverage floor.

At each step choose uniformly among the applicable ground actions (pymimir successor generation),
stop at the goal or after ``horizon`` steps (params ``methods.random_walk.horizon``, default 100).
"""

from __future__ import annotations

import random
import time

from planarena.core.io import derive_seed
from planarena.core.pddl import load_problem
from planarena.methods.base import Attempt, Method, PlanningTask, ReportTraits


class RandomWalk(Method):
    family = "classical"
    tasks = frozenset({"plan"})
    stochastic = True
    parallel = True

    @classmethod
    def report_traits(cls, config: dict, params: dict) -> ReportTraits:
        """The coverage floor (DESIGN.md "Honest numbers")."""
        return ReportTraits(role="floor")

    def solve(self, task: PlanningTask, seed: int) -> Attempt:
        """One walk; ``seed`` and the problem name seed the generator (same params -> same walk)."""
        horizon = int(self.config.get("horizon", 100))
        rng = random.Random(derive_seed("random_walk", seed, task.entry.domain, task.entry.problem))
        start = time.perf_counter()
        problem = load_problem(str(task.domain_file), str(task.problem_file))
        goal = problem.get_goal_condition()
        state = problem.get_initial_state()
        plan: list[str] = []
        for _ in range(horizon + 1):
            if goal.holds(state):
                return Attempt("solved", plan, wall_time=time.perf_counter() - start, extra={"steps": len(plan)})
            if len(plan) == horizon or time.perf_counter() - start > task.time_limit:
                break
            actions = sorted(state.generate_applicable_actions(), key=str)
            if not actions:
                return Attempt("unsolved", None, "dead end: no applicable action",
                               wall_time=time.perf_counter() - start)
            action = rng.choice(actions)
            plan.append(str(action))
            state = action.apply(state)
        elapsed = time.perf_counter() - start
        if elapsed > task.time_limit:
            return Attempt("timeout", None, f"time limit {task.time_limit:g} s", wall_time=elapsed)
        return Attempt("unsolved", None, f"goal not reached within horizon {horizon}", wall_time=elapsed)
