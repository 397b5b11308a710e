"""Training samples of the symmetry-aware transformers: fully expanded training state spaces,
sampled uniformly over goal distances.

Source: Fritzsche, Gestrin, Seipp (docs/papers/symmetry-aware-transformers.md), Appendix C ("we
fully expand each training instance and sample from the complete state space") and Appendix E: to
draw a sample, pick a training problem uniformly, then a goal distance uniformly among those that
occur in it, then a state uniformly among the states at that distance; the heuristic target is h*
(the goal distance) and the plan generators' target is one optimal plan from that state, drawn
uniformly among all of them (:func:`sample_plans`). Dead-end states (no goal reachable) have no
finite h* and are never drawn.

A training problem whose state space is too large to expand (``max_states``; None, the paper
profile's value, is no cap) can still give
samples: :func:`trajectory_space` turns its reference plan into a chain "space" (the plan's states,
each with the remaining plan length as its distance and the plan's next action as its only edge),
so every suffix of the plan is a sample. This is the harness's choice for such domains (the paper
expands every training problem, Appendix C); it is exact when the reference plan is optimal (Fast
Downward A*+LM-cut) and an upper bound otherwise, and the method's train facts record which.

The state spaces come from pymimir through
:func:`planarena.datasets.acp.space.expand_state_space` (the harness's one expansion routine).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from planarena.core.pddl import goal_atoms, load_problem, static_atoms


@dataclass
class ProblemSpace:
    """One training problem's full state space.

    Attributes:
        name: problem name (for messages).
        objects: the problem's object names.
        static: its static atoms; ``goal``: its goal atoms.
        states: fluent atoms of every reachable state.
        distance: ``(S,)`` int64 goal distance of every state (-1: dead end).
        successors: ``state -> [(action text, successor state)]`` (None: plans cannot be drawn).
        source: ``"state space"`` (fully expanded) or ``"reference plan"`` (:func:`trajectory_space`).
        optimal: whether ``distance`` is exact (False: a reference plan that is not known optimal).
    """

    name: str
    objects: list[str]
    static: list[str]
    goal: list[str]
    states: list[list[str]]
    distance: np.ndarray
    successors: Callable[[int], list[tuple[str, int]]] | None = None
    source: str = "state space"
    optimal: bool = True
    _counts: dict = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        d = np.asarray(self.distance, dtype=np.int64)
        self.distance = d
        self.levels = {int(k): np.nonzero(d == k)[0] for k in np.unique(d[d >= 0])}

    def optimal_edges(self, state: int) -> list[tuple[str, int]]:
        """The edges of ``state`` that lie on an optimal plan (successor one step closer), sorted."""
        d = int(self.distance[state])
        return sorted((a, t) for a, t in self.successors(state) if self.distance[t] == d - 1)

    def plan_count(self, state: int) -> int:
        """Number of optimal plans from ``state`` (exact integer, memoised; the recurrence of
        :func:`planarena.datasets.acp.space.count_optimal_plans` evaluated lazily)."""
        got = self._counts.get(state)
        if got is None:
            if self.distance[state] == 0:
                got = 1
            else:
                got = sum(self.plan_count(t) for _, t in self.optimal_edges(state))
            self._counts[state] = got
        return got

    def random_plan(self, state: int, rng: random.Random) -> list[str]:
        """One optimal plan from ``state``, uniformly among all of them (action texts).

        Raises:
            ValueError: no successor function, or ``state`` is a dead end.
        """
        if self.successors is None:
            raise ValueError(f"problem {self.name}: no successor function, so no plans can be drawn")
        if self.distance[state] < 0:
            raise ValueError(f"problem {self.name}: state {state} is a dead end")
        plan = []
        while self.distance[state] > 0:
            rank = rng.randrange(self.plan_count(state))
            for action, t in self.optimal_edges(state):
                if rank < self.plan_count(t):
                    plan.append(action)
                    state = t
                    break
                rank -= self.plan_count(t)
        return plan

    def atoms(self, state: int) -> list[str]:
        """Every atom of state ``state``: its fluent atoms and the static atoms."""
        return self.states[state] + self.static


#: pymimir's own default ``StateSpaceOptions.max_num_states`` (2**32 - 1): no cap in practice
NO_STATE_CAP = 2**32 - 1


def expand(domain_file: str | Path, problem_file: str | Path, max_states: int | None) -> ProblemSpace:
    """The full state space of one problem (pymimir).

    ``max_states``: the largest state space accepted (states); None expands the space whatever its
    size (pymimir's default cap, :data:`NO_STATE_CAP`), as the paper does for every training
    problem (Appendix C, symmetry-aware-transformers.txt line 319).

    Raises:
        planarena.datasets.acp.space.SkipProblem: more than ``max_states`` states, or no goal
            reachable (the message says which).
        PDDLError: a file does not parse (names it).
    """
    from planarena.datasets.acp.space import expand_state_space

    problem = load_problem(str(domain_file), str(problem_file))
    space = expand_state_space(problem, NO_STATE_CAP if max_states is None else int(max_states))
    return ProblemSpace(name=Path(problem_file).stem, objects=[str(o) for o in problem.get_objects()],
                        static=static_atoms(problem), goal=goal_atoms(problem), states=space.states,
                        distance=np.asarray(space.goal_distance), successors=space.successors)


def trajectory_space(trajectory, objects: Sequence[str]) -> ProblemSpace:
    """A chain :class:`ProblemSpace` of one reference plan (a
    :class:`planarena.core.trajectories.Trajectory`): its states, distance = the remaining plan
    length, one edge per state (the plan's next action). ``objects``: the problem's objects."""
    n = len(trajectory.actions)
    acts = list(trajectory.actions)

    def successors(i: int) -> list[tuple[str, int]]:
        return [(acts[i], i + 1)] if i < n else []

    return ProblemSpace(name=trajectory.problem, objects=list(objects), static=list(trajectory.static),
                        goal=list(trajectory.goal), states=[list(s) for s in trajectory.states],
                        distance=np.arange(n, -1, -1), successors=successors, source="reference plan",
                        optimal=bool(trajectory.optimal))


def sample_heuristic(spaces: Sequence[ProblemSpace], n: int, rng: np.random.Generator) -> list[tuple[int, int, int]]:
    """``n`` samples ``(problem index, state index, h*)`` drawn as Appendix E describes (uniform
    problem, then uniform goal distance occurring in it, then uniform state at that distance).

    Raises:
        ValueError: no spaces, or a space without any state that reaches the goal.
    """
    if not spaces:
        raise ValueError("no training state spaces to sample from")
    out = []
    for _ in range(n):
        p = int(rng.integers(len(spaces)))
        levels = spaces[p].levels
        if not levels:
            raise ValueError(f"problem {spaces[p].name}: no state reaches the goal")
        dist = list(levels)[int(rng.integers(len(levels)))]
        states = levels[dist]
        out.append((p, int(states[int(rng.integers(len(states)))]), dist))
    return out


def sample_plans(spaces: Sequence[ProblemSpace], n: int, rng: np.random.Generator) -> list[tuple[int, int, list[str]]]:
    """``n`` samples ``(problem index, state index, optimal plan)``: the state drawn as in
    :func:`sample_heuristic`, then one optimal plan from it uniformly (Appendix E, step 4).

    Raises:
        ValueError: as :func:`sample_heuristic`, or a space without a successor function.
    """
    out = []
    for p, s, _ in sample_heuristic(spaces, n, rng):
        out.append((p, s, spaces[p].random_plan(s, random.Random(int(rng.integers(2**63))))))
    return out


__all__ = ["ProblemSpace", "expand", "sample_heuristic", "sample_plans", "trajectory_space"]
