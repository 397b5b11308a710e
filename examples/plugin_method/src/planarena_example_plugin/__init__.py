"""An example planarena method that lives in its own package: greedy best-first search with the
goal-count heuristic (the number of goal atoms a state lacks).

planarena finds it through this package's entry point (``pyproject.toml``, group
``planarena.methods``); a params block then runs it like any built-in method::

    methods:
      goal_count_gbfs: {method: goal_count_gbfs, max_expansions: 10000}

It subclasses :class:`planarena.methods.base.Method` and implements :meth:`solve` only: it learns
nothing (no ``train``), so it is a ``search`` row of the coverage table, and its plans are validated
by planarena like every other row's.
"""

from __future__ import annotations

import heapq
import time

from planarena.core.pddl import atoms_of, goal_atoms, load_problem
from planarena.methods.base import Attempt, Method, PlanningTask, ReportTraits


class GoalCountGBFS(Method):
    """Greedy best-first search, h(s) = goal atoms not in s; ties broken by insertion order.

    Params block keys: ``max_expansions`` (default 10,000: a step limit, so the outcome does not
    depend on machine load). Outcomes: ``solved``, ``unsolved`` (search space exhausted or
    expansion limit), ``timeout`` (the task's CPU-time limit).
    """

    family = "example-plugin"
    tasks = frozenset({"plan"})
    stochastic = False          # deterministic: one attempt per problem

    @classmethod
    def report_traits(cls, config: dict, params: dict) -> ReportTraits:
        return ReportTraits(kind="search")

    def solve(self, task: PlanningTask, seed: int) -> Attempt:
        limit = int(self.config.get("max_expansions", 10_000))
        start, cpu = time.perf_counter(), time.process_time()
        problem = load_problem(str(task.domain_file), str(task.problem_file))
        goal = set(goal_atoms(problem))

        def h(state) -> int:
            return len(goal - set(atoms_of(state)))

        init = problem.get_initial_state()
        parent = {init: None}
        frontier = [(h(init), 0, init)]
        counter, expansions = 1, 0
        while frontier:
            _, _, state = heapq.heappop(frontier)
            if problem.get_goal_condition().holds(state):
                plan = []
                while parent[state] is not None:
                    state, action = parent[state]
                    plan.append(action)
                return Attempt("solved", plan[::-1], wall_time=time.perf_counter() - start,
                               extra={"expansions": expansions})
            if expansions >= limit:
                return Attempt("unsolved", None, f"expansion limit {limit}", wall_time=time.perf_counter() - start)
            if time.process_time() - cpu > task.time_limit:
                return Attempt("timeout", None, f"CPU time limit {task.time_limit:g} s",
                               wall_time=time.perf_counter() - start)
            expansions += 1
            for action in sorted(state.generate_applicable_actions(), key=str):
                succ = action.apply(state)
                if succ not in parent:
                    parent[succ] = (state, str(action))
                    heapq.heappush(frontier, (h(succ), counter, succ))
                    counter += 1
        return Attempt("unsolved", None, "search space exhausted", wall_time=time.perf_counter() - start)
