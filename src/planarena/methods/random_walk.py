"""Random applicable walks: the coverage floors.

At each step choose uniformly among the applicable ground actions (pymimir successor generation),
stop at the goal or after ``horizon`` steps (params ``methods.<name>.horizon``, default 100).

With ``never_revisit: true`` the walk only moves to states it has not visited yet and stops at a
dead end when every successor was visited: what the beam decoder of the state-centric paper
(Algorithm 1, beam width 1, no revisits) does with an uninformative model, so it is the floor a
learned successor scorer must beat (docs/concepts.md#floors-and-ceilings).
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
        """The coverage floor of search, policy and decoder rows (docs/concepts.md#floors-and-ceilings);
        plans of at most ``horizon`` steps. Not a floor of lookahead policies: one IW(1) / AIW(1) jump
        is many primitive steps, so their floors are their untrained twin and a uniform choice among
        their lookahead's candidates (docs/concepts.md#untrained-twins); a primitive walk stays in
        their table as a labelled reference."""
        return ReportTraits(role="floor", horizon=int(config.get("horizon", 100)), kind="policy",
                            floor_kinds=("search", "policy", "decoder"))

    def solve(self, task: PlanningTask, seed: int) -> Attempt:
        """One walk; ``seed`` and the problem name seed the generator (same params -> same walk).

        Outcomes: ``solved`` (the plan reaches the goal), ``unsolved`` (horizon reached, or a dead
        end: no applicable action, or with ``never_revisit`` every successor visited), ``timeout``.
        """
        horizon = int(self.config.get("horizon", 100))
        never_revisit = bool(self.config.get("never_revisit", False))
        rng = random.Random(derive_seed("random_walk", seed, task.entry.domain, task.entry.problem))
        start, cpu_start = time.perf_counter(), time.process_time()   # the limit counts CPU time
        problem = load_problem(str(task.domain_file), str(task.problem_file))
        goal = problem.get_goal_condition()
        state = problem.get_initial_state()
        visited = {state}
        plan: list[str] = []
        for _ in range(horizon + 1):
            if goal.holds(state):
                return Attempt("solved", plan, wall_time=time.perf_counter() - start, extra={"steps": len(plan)})
            if len(plan) == horizon or time.process_time() - cpu_start > task.time_limit:
                break
            actions = sorted(state.generate_applicable_actions(), key=str)
            if not actions:
                return Attempt("unsolved", None, "dead end: no applicable action",
                               wall_time=time.perf_counter() - start)
            if never_revisit:
                moves = [(a, a.apply(state)) for a in actions]
                moves = [(a, s) for a, s in moves if s not in visited]
                if not moves:
                    return Attempt("unsolved", None, "dead end: every successor already visited",
                                   wall_time=time.perf_counter() - start)
                action, state = rng.choice(moves)
                visited.add(state)
            else:
                action = rng.choice(actions)
                state = action.apply(state)
            plan.append(str(action))
        elapsed = time.perf_counter() - start
        if time.process_time() - cpu_start > task.time_limit:
            return Attempt("timeout", None, f"CPU time limit {task.time_limit:g} s", wall_time=elapsed)
        return Attempt("unsolved", None, f"goal not reached within horizon {horizon}", wall_time=elapsed)
