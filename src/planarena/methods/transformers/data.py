"""Training samples of the symmetry-aware transformers: fully expanded training state spaces,
sampled uniformly over goal distances.

Source: ``../shared/papers/symmetry-aware-transformers.txt``, Appendix C ("we fully expand each
training instance and sample from the complete state space") and Appendix E: to draw a sample,
pick a training problem uniformly, then a goal distance uniformly among those that occur in it,
then a state uniformly among the states at that distance; the heuristic target is h* (the goal
distance). Dead-end states (no goal reachable) have no finite h* and are never drawn.

The state spaces come from pymimir through
:func:`planarena.datasets.acp.space.expand_state_space` (the harness's one expansion routine).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

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
    """

    name: str
    objects: list[str]
    static: list[str]
    goal: list[str]
    states: list[list[str]]
    distance: np.ndarray

    def __post_init__(self) -> None:
        d = np.asarray(self.distance, dtype=np.int64)
        self.distance = d
        self.levels = {int(k): np.nonzero(d == k)[0] for k in np.unique(d[d >= 0])}

    def atoms(self, state: int) -> list[str]:
        """Every atom of state ``state``: its fluent atoms and the static atoms."""
        return self.states[state] + self.static


def expand(domain_file: str | Path, problem_file: str | Path, max_states: int) -> ProblemSpace:
    """The full state space of one problem (pymimir).

    Raises:
        planarena.datasets.acp.space.SkipProblem: more than ``max_states`` states, or no goal
            reachable (the message says which).
        PDDLError: a file does not parse (names it).
    """
    from planarena.datasets.acp.space import expand_state_space

    problem = load_problem(str(domain_file), str(problem_file))
    space = expand_state_space(problem, max_states)
    return ProblemSpace(name=Path(problem_file).stem, objects=[str(o) for o in problem.get_objects()],
                        static=static_atoms(problem), goal=goal_atoms(problem), states=space.states,
                        distance=np.asarray(space.goal_distance))


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


__all__ = ["ProblemSpace", "expand", "sample_heuristic"]
