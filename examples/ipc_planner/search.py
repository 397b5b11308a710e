"""The searches of learn.py and plan.py over pymimir's successor generator."""
import heapq

import pymimir


def best_first(problem, budget: int, priority):
    """Best-first search of a pymimir problem ordered by ``priority(state, depth)`` (ties: first
    generated first), at most ``budget`` expansions: (plan or None, states expanded)."""
    goal = problem.get_goal_condition()
    init = problem.get_initial_state()
    parent, queue, n, expanded = {init: None}, [(priority(init, 0), 0, init, 0)], 1, 0
    while queue and expanded < budget:
        _, _, state, depth = heapq.heappop(queue)
        if goal.holds(state):
            plan = []
            while parent[state] is not None:
                state, action = parent[state]
                plan.append(action)
            return plan[::-1], expanded
        expanded += 1
        for action in sorted(state.generate_applicable_actions(), key=str):
            succ = action.apply(state)
            if succ not in parent:
                parent[succ] = (state, str(action))
                heapq.heappush(queue, (priority(succ, depth + 1), n, succ, depth + 1))
                n += 1
    return None, expanded


def gbfs(domain: str, task: str, budget: int):
    """Greedy best-first search with the goal-count heuristic (goal atoms a state lacks)."""
    problem = pymimir.Problem(pymimir.Domain(domain), task)
    goal = {str(lit.get_atom()) for lit in problem.get_goal_condition().get_literals() if lit.get_polarity()}
    return best_first(problem, budget,
                      lambda state, _: len(goal - {str(a) for a in state.get_atoms(ignore_static=True)}))


def bfs(domain: str, task: str, budget: int):
    """Breadth-first search: the shortest plan under unit cost."""
    return best_first(pymimir.Problem(pymimir.Domain(domain), task), budget, lambda _, depth: depth)
