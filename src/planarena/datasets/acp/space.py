"""State space and optimal plans of one ACP problem (pymimir), and the problem's dataset record.

:func:`expand_state_space` expands the full reachable state space with pymimir (through
:mod:`planarena.core.pddl`) and labels every state with its unit-cost goal distance;
:func:`optimal_plan_dag`, :func:`count_optimal_plans`, :func:`unrank_plan` and
:func:`select_plan_ranks` count the optimal plans exactly and pick up to ``max_plans`` of them;
:func:`build_problem_record` turns one problem into its file record (format: :mod:`.records`).
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pymimir
from pymimir.advanced import datasets as _mimir_datasets

from planarena.core.io import derive_seed
from planarena.core.pddl import (
    atoms_of,
    goal_atoms,
    normalise_action,
    parse_domain,  # uncached: the stage rewrites domain.pddl in place when the generator's file changes
    parse_problem_of,
    static_atoms,
)

_FLOAT_EXACT = 2 ** 53
_UNREACHABLE = 2 ** 31 - 1  # pymimir's goal distance of a dead end (INT_MAX) or anything above it


class SkipProblem(Exception):
    """A generated problem cannot enter the dataset; ``str(exc)`` is the reason recorded in summary.json."""


# --------------------------------------------------------------------------------------------
# State space (pymimir)
# --------------------------------------------------------------------------------------------


@dataclass
class StateSpace:
    """The full reachable state space of one problem, as expanded by pymimir.

    Attributes:
        problem: the parsed pymimir problem.
        states: per state id (breadth-first order from the initial state), the sorted fluent
            ground atoms (:func:`planarena.core.pddl.atoms_of`).
        initial: state id of the initial state.
        goal_distance: per state id, the unit-cost distance to the nearest goal state; -1 for dead
            ends (no goal reachable).
        n_transitions: number of edges ``(s, a, s')`` of the state space.
        successors: callable ``state id -> [(ground action string, successor id), ...]``: every
            ground action applicable in the state and the successor it produces (pymimir's edges).
    """

    problem: Any
    states: list[list[str]]
    initial: int
    goal_distance: list[int]
    n_transitions: int
    successors: Any = field(repr=False)
    _keepalive: Any = field(default=None, repr=False)  # pymimir state space owning the graph

    @property
    def n_states(self) -> int:
        """Number of states of the state space."""
        return len(self.states)


def parse_problem(domain: "str | Path | pymimir.Domain", problem_file: str | Path) -> "pymimir.Problem":
    """Parse a problem file with pymimir against a domain (a parsed one or its file), uncached
    (files under ``data/acp`` may be rewritten; domain files go through
    :func:`planarena.core.pddl.parse_domain`).

    Raises:
        PDDLError: either file is missing or malformed; the message names the file.
    """
    if not isinstance(domain, pymimir.Domain):
        domain = parse_domain(domain)
    return parse_problem_of(domain, problem_file)


def expand_state_space(problem: "pymimir.Problem", max_states: int,
                       timeout_s: float | None = None) -> StateSpace:
    """Expand the full reachable state space of ``problem`` with pymimir.

    pymimir searches breadth first from the initial state and aborts as soon as the state count
    exceeds ``max_states`` (or ``timeout_s`` seconds pass), so a huge problem costs little. Goal
    distances are pymimir's unit goal distances (backward breadth-first search from the goal states).

    Args:
        problem: a parsed pymimir problem (:func:`parse_problem`).
        max_states: the largest state space accepted (states).
        timeout_s: wall-clock limit of the expansion in seconds (None: no limit).

    Returns:
        The :class:`StateSpace`.

    Raises:
        SkipProblem: the state space has more than ``max_states`` states, the expansion timed out,
            or no goal state is reachable (message = the reason).
    """
    options = _mimir_datasets.StateSpaceOptions()
    options.max_num_states = int(max_states)
    options.remove_if_unsolvable = False  # tell "unsolvable" apart from "too large"
    options.symmetry_pruning = False
    if timeout_s is not None:
        options.timeout_ms = max(1, int(timeout_s * 1000))
    start = time.perf_counter()
    result = _mimir_datasets.StateSpace.create(problem._search_context, options)
    if result is None:
        elapsed = time.perf_counter() - start
        if timeout_s is not None and elapsed >= timeout_s:
            raise SkipProblem(f"state-space expansion timed out after {timeout_s:g} s")
        raise SkipProblem(f"state space exceeds max_states={max_states} states")
    space = result[0]
    if not space.get_goal_vertices():
        raise SkipProblem("no goal state is reachable from the initial state (unsolvable)")
    graph = space.get_graph()
    n = graph.get_num_vertices()
    states: list[list[str]] = []
    distance: list[int] = []
    for v in range(n):
        vertex = graph.get_vertex(v)
        if vertex.get_index() != v:  # pragma: no cover - pymimir invariant
            raise RuntimeError("pymimir state-space vertices are not indexed 0..n-1")
        states.append(atoms_of(pymimir.State(_mimir_datasets.get_state(vertex), problem)))
        dist = _mimir_datasets.get_unit_goal_distance(vertex)
        distance.append(-1 if dist is None or dist >= _UNREACHABLE or dist < 0 else int(dist))

    action_text: dict[int, str] = {}

    def successors(state_id: int) -> list[tuple[str, int]]:
        out = []
        for edge in graph.get_forward_adjacent_edges(state_id):
            ga = _mimir_datasets.get_action(edge)
            key = ga.get_index()
            text = action_text.get(key)
            if text is None:
                text = action_text[key] = normalise_action(str(pymimir.GroundAction(ga, problem)))
            out.append((text, int(edge.get_target())))
        return out

    return StateSpace(problem=problem, states=states, initial=int(space.get_initial_vertex()),
                      goal_distance=distance, n_transitions=int(graph.get_num_edges()),
                      successors=successors, _keepalive=(space, graph))


# --------------------------------------------------------------------------------------------
# Optimal plans
# --------------------------------------------------------------------------------------------


def optimal_plan_dag(initial: int, goal_distance: list[int], successors) -> dict[int, list[tuple[str, int]]]:
    """The optimal-plan DAG: for every state reachable from ``initial`` along optimal edges and not
    a goal state, its optimal edges ``(ground action, successor)`` with ``d(successor) = d(state) - 1``,
    sorted by (action, successor) so that plan ranks do not depend on pymimir's edge order.

    Args:
        initial: initial state id.
        goal_distance: unit goal distance per state id (-1 = dead end).
        successors: ``state id -> [(ground action, successor id), ...]``.

    Raises:
        ValueError: the initial state is a dead end.
    """
    if goal_distance[initial] < 0:
        raise ValueError("the initial state is a dead end: no optimal plan")
    dag: dict[int, list[tuple[str, int]]] = {}
    layer = [initial]
    while layer:
        nxt: set[int] = set()
        for s in layer:
            d = goal_distance[s]
            if d == 0:
                continue
            edges = sorted((a, t) for a, t in successors(s) if goal_distance[t] == d - 1)
            dag[s] = edges
            nxt.update(t for _, t in edges)
        layer = sorted(nxt)
    return dag


def count_optimal_plans(initial: int, goal_distance: list[int], dag: dict[int, list[tuple[str, int]]]) -> dict[int, int]:
    """Number of optimal plans (distinct action sequences) from every state of the DAG to a goal.

    ``N(s) = 1`` for a goal state and ``N(s) = sum over optimal edges s -a-> s' of N(s')``; exact
    Python integers. Returns ``{state id: N(state)}`` for the states of the DAG and their goal leaves.
    """
    counts: dict[int, int] = {}
    order = sorted(set(dag) | {t for edges in dag.values() for _, t in edges} | {initial},
                   key=lambda s: goal_distance[s])
    for s in order:
        if goal_distance[s] == 0:
            counts[s] = 1
        else:
            counts[s] = sum(counts[t] for _, t in dag.get(s, []))
    return counts


def unrank_plan(rank: int, initial: int, goal_distance: list[int], dag: dict[int, list[tuple[str, int]]],
                counts: dict[int, int]) -> list[tuple[int, str, int]]:
    """The optimal plan with index ``rank`` (0 <= rank < N(initial)) in the lexicographic order of
    the sorted DAG edges, as transitions ``(state, ground action, successor)``."""
    plan = []
    s = initial
    while goal_distance[s] != 0:
        for action, t in dag[s]:
            if rank < counts[t]:
                plan.append((s, action, t))
                s = t
                break
            rank -= counts[t]
        else:  # pragma: no cover - rank out of range
            raise ValueError(f"plan rank out of range at state {s}")
    return plan


def select_plan_ranks(total: int, max_plans: int, seed: int) -> list[int]:
    """Ranks of the optimal plans to store: all of ``range(total)`` when ``total <= max_plans``, else
    ``max_plans`` distinct ranks drawn uniformly at random (``random.Random(seed)``), sorted.

    Uniform over ranks is uniform over optimal plans (EmbedPlan §3: "up to 100" optimal plans per
    problem); ``total`` may be astronomically large."""
    if total <= max_plans:
        return list(range(total))
    rng = random.Random(seed)
    ranks: set[int] = set()
    while len(ranks) < max_plans:
        ranks.add(rng.randrange(total))
    return sorted(ranks)


def _json_count(n: int) -> int | float:
    """``n`` as stored in JSON: exact int below 2**53, else the nearest float (inf if it overflows)."""
    if n < _FLOAT_EXACT:
        return n
    try:
        return float(n)
    except OverflowError:
        return float("inf")


# --------------------------------------------------------------------------------------------
# One problem
# --------------------------------------------------------------------------------------------


def build_problem_record(problem: "pymimir.Problem", *, domain: str, name: str, seed: int,
                         generator: dict, max_states: int, max_plans: int, min_states: int = 0,
                         timeout_s: float | None = None, space_transitions: int = 0) -> dict:
    """Expand one problem and return its file record (the keys of :data:`FILE_KEYS`).

    EmbedPlan §3 "Data": up to ``max_plans`` optimal plans per problem, from which the
    (state, action, successor) triples are taken; several distinct optimal plans per problem feed
    the Plan-Variant protocol (Appendix A.2). ``applicable`` holds every applicable ground action of
    the states on those plans (the action-disambiguation loss, §3 "Training Objective").
    Plan ranks are drawn with a seed derived from ``seed``, so the record is deterministic.

    ``space_transitions`` > 0 also stores that many edges ``(s, a, s')`` of the whole state space,
    drawn uniformly without replacement (seeded; all of them when there are fewer; -1: all). The
    paper's Table 7 counts (e.g. Grid: 664,346 transitions over 8,671 states) are far above what
    100 optimal plans per problem can hold, i.e. its datasets include transitions off the optimal
    plans; these edges play that role. Their source states get ``applicable`` entries too.

    Raises:
        SkipProblem: the problem is unusable (too many or too few states, unsolvable, initial state
            already a goal, timeout); the message is the reason.
    """
    space = expand_state_space(problem, max_states, timeout_s)
    if space.n_states < min_states:
        raise SkipProblem(f"state space has {space.n_states} states < min_states={min_states}")
    d0 = space.goal_distance[space.initial]
    if d0 < 0:
        raise SkipProblem("no goal state is reachable from the initial state (unsolvable)")
    if d0 == 0:
        raise SkipProblem("the initial state is a goal state (empty optimal plan)")
    dag = optimal_plan_dag(space.initial, space.goal_distance, space.successors)
    counts = count_optimal_plans(space.initial, space.goal_distance, dag)
    total = counts[space.initial]
    ranks = select_plan_ranks(total, max_plans, derive_seed(seed, "plans"))
    plans_txt = [unrank_plan(r, space.initial, space.goal_distance, dag, counts) for r in ranks]

    edges_txt: list[tuple[int, str, int]] = []
    if space_transitions:
        all_edges = [(s, a, t) for s in range(space.n_states) for a, t in space.successors(s)]
        if 0 < space_transitions < len(all_edges):
            picks = sorted(random.Random(derive_seed(seed, "edges")).sample(range(len(all_edges)), space_transitions))
            all_edges = [all_edges[i] for i in picks]
        edges_txt = all_edges
    # non-goal states on stored plans, and sources of the stored state-space edges
    on_plan = sorted({s for plan in plans_txt for s, _, _ in plan} | {s for s, _, _ in edges_txt})
    applicable_txt = {s: space.successors(s) for s in on_plan}
    actions = sorted({a for edges in applicable_txt.values() for a, _ in edges})
    aid = {a: i for i, a in enumerate(actions)}
    applicable = {str(s): sorted([aid[a], t] for a, t in edges) for s, edges in applicable_txt.items()}
    plans = [[[s, aid[a], t] for s, a, t in plan] for plan in plans_txt]
    return {
        "space_transitions": [[s, aid[a], t] for s, a, t in edges_txt],
        "max_space_transitions": int(space_transitions),
        "domain": domain,
        "problem": name,
        "problem_file": f"problems/{name}.pddl",
        "seed": int(seed),
        "generator": dict(generator),
        "max_states": int(max_states),
        "max_plans": int(max_plans),
        "states": space.states,
        "initial": space.initial,
        "static": static_atoms(problem),
        "goal": goal_atoms(problem),
        "goal_distance": space.goal_distance,
        "actions": actions,
        "applicable": applicable,
        "plans": plans,
        "n_optimal_plans": _json_count(total),
        "optimal_cost": int(d0),
        "n_states_space": space.n_states,
        "n_transitions_space": space.n_transitions,
    }


__all__ = ["SkipProblem", "StateSpace", "build_problem_record", "count_optimal_plans", "expand_state_space",
           "optimal_plan_dag", "parse_domain", "parse_problem", "select_plan_ranks", "unrank_plan"]
