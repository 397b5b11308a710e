"""Two searches over pymimir's successor generator, shared by learn.py and plan.py."""
import heapq
from collections import deque

import pymimir


def _problem(domain: str, task: str):
    return pymimir.Problem(pymimir.Domain(domain), task)


def _plan(parent: dict, state) -> list[str]:
    out = []
    while parent[state] is not None:
        state, action = parent[state]
        out.append(action)
    return out[::-1]


def gbfs(domain: str, task: str, budget: int):
    """Greedy best-first search with the goal-count heuristic: (plan or None, states expanded)."""
    problem = _problem(domain, task)
    goal = problem.get_goal_condition()
    goal_atoms = {str(lit.get_atom()) for lit in goal.get_literals() if lit.get_polarity()}

    def h(state):
        return len(goal_atoms - {str(a) for a in state.get_atoms(ignore_static=True)})

    init = problem.get_initial_state()
    parent, queue, n, expanded = {init: None}, [(h(init), 0, init)], 1, 0
    while queue and expanded < budget:
        _, _, state = heapq.heappop(queue)
        if goal.holds(state):
            return _plan(parent, state), expanded
        expanded += 1
        for action in sorted(state.generate_applicable_actions(), key=str):
            succ = action.apply(state)
            if succ not in parent:
                parent[succ] = (state, str(action))
                heapq.heappush(queue, (h(succ), n, succ))
                n += 1
    return None, expanded


def bfs(domain: str, task: str, budget: int):
    """Breadth-first search (shortest plan under unit cost): (plan or None, states expanded)."""
    problem = _problem(domain, task)
    goal = problem.get_goal_condition()
    init = problem.get_initial_state()
    parent, queue, expanded = {init: None}, deque([init]), 0
    while queue and expanded < budget:
        state = queue.popleft()
        if goal.holds(state):
            return _plan(parent, state), expanded
        expanded += 1
        for action in sorted(state.generate_applicable_actions(), key=str):
            succ = action.apply(state)
            if succ not in parent:
                parent[succ] = (state, str(action))
                queue.append(succ)
    return None, expanded
