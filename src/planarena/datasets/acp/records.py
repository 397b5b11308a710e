"""The files of the ACP datasets: record format, writing, resuming and loading.

File ``data/acp/<domain>/<problem>.json.gz`` (all atoms and actions as in :mod:`planarena.core.pddl`:
``"(pred a b)"``, ``"(action a b)"``, lower case)::

    domain, problem            names; problem_file "problems/<problem>.pddl" (relative to the domain dir)
    seed, generator            generator seed and keyword arguments
    max_states, max_plans      limits this file was computed with (checked on resume)
    states                     list over ALL states of the state space (index = state id) of the
                               sorted fluent ground atoms of that state
    initial                    state id of the initial state
    static, goal               sorted static atoms; sorted goal atoms
    goal_distance              per state id: unit-cost distance to the nearest goal state, -1 = dead end
    actions                    sorted ground actions applicable in some state of ``applicable``
    applicable                 {str(state id): [[action id, successor id], ...]} for every non-goal
                               state on a stored plan or source of a space transition: ALL its applicable ground actions (action id
                               indexes ``actions``), sorted by action id
    plans                      stored optimal plans, each a list of transitions [s, a, s'] (ids)
    n_optimal_plans            number of optimal plans (int; a float when >= 2**53)
    optimal_cost               plan length (unit cost) = goal_distance[initial]
    n_states_space             len(states)
    n_transitions_space        edges (s, a, s') of the whole state space
    space_transitions          up to ``acp.space_transitions`` edges [s, a, s'] of the whole state space,
                               sampled uniformly (seeded); their sources also get ``applicable`` and
                               their actions are in ``actions`` (transitions off the optimal plans)
    max_space_transitions      the ``acp.space_transitions`` this file was computed with

Costs are unit costs even where a domain declares action costs (Floortile's ``total-cost``), as in
EmbedPlan's plans counted in steps.

Loaders for model code: :class:`ProblemTransitions`, :func:`load_problem`,
:func:`load_domain_dataset`, :func:`domains_available`.
"""

from __future__ import annotations

import gzip
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from planarena.core.io import atomic_write_bytes

#: Keys of every problem file (the format in the module docstring).
FILE_KEYS = (
    "domain", "problem", "problem_file", "seed", "generator", "max_states", "max_plans", "states",
    "initial", "static", "goal", "goal_distance", "actions", "applicable", "plans", "n_optimal_plans",
    "optimal_cost", "n_states_space", "n_transitions_space", "space_transitions", "max_space_transitions",
)


# --------------------------------------------------------------------------------------------
# Loaders
# --------------------------------------------------------------------------------------------


@dataclass
class ProblemTransitions:
    """One ACPBench-style problem's transition dataset (EmbedPlan §3 "Data"; Appendix C, Table 7).

    Attributes:
        domain, problem: names; ``problem_file`` is ``problems/<problem>.pddl`` relative to the
            domain folder (``data/acp/<domain>``).
        seed, generator: the generator's seed and keyword arguments.
        max_states, max_plans: the limits the file was computed with.
        states: ``[n_states][k_s]`` sorted fluent ground atoms of every state of the state space;
            list index = state id.
        initial: state id of the initial state.
        static, goal: sorted static atoms and goal atoms of the problem.
        goal_distance: ``[n_states]`` unit-cost distance to the nearest goal state (-1: dead end).
        actions: sorted ground actions (``"(name a b)"``); an action id indexes this list.
        applicable: state id -> ``[(action id, successor id), ...]``: every ground action
            applicable in that state, for every non-goal state on a stored plan (int keys here;
            ``str`` keys in the file).
        plans: stored optimal plans (up to ``max_plans``; Appendix A.2's plan variants), each a list
            of transitions ``(state, action id, successor)`` from ``initial`` to a goal state.
        n_optimal_plans: number of optimal plans of the problem (float when >= 2**53).
        optimal_cost: optimal plan length (unit cost).
        n_states_space, n_transitions_space: state and edge counts of the whole state space.
    """

    domain: str
    problem: str
    problem_file: str
    seed: int
    generator: dict[str, Any]
    max_states: int
    max_plans: int
    states: list[list[str]]
    initial: int
    static: list[str]
    goal: list[str]
    goal_distance: list[int]
    actions: list[str]
    applicable: dict[int, list[tuple[int, int]]]
    plans: list[list[tuple[int, int, int]]]
    n_optimal_plans: int | float
    optimal_cost: int
    n_states_space: int
    n_transitions_space: int
    space_transitions: list[tuple[int, int, int]] = field(default_factory=list)
    max_space_transitions: int = 0

    @property
    def n_states(self) -> int:
        """Number of states of the state space."""
        return len(self.states)

    def transitions(self) -> list[tuple[int, int, int]]:
        """Unique transitions ``(state, action id, successor)`` over all stored plans, sorted."""
        return sorted({tuple(t) for plan in self.plans for t in plan})

    def goal_states(self) -> list[int]:
        """State ids with goal distance 0."""
        return [i for i, d in enumerate(self.goal_distance) if d == 0]

    def to_dict(self) -> dict:
        """The file record (``applicable`` keys as strings, tuples as lists)."""
        return {
            "domain": self.domain, "problem": self.problem, "problem_file": self.problem_file,
            "seed": self.seed, "generator": dict(self.generator), "max_states": self.max_states,
            "max_plans": self.max_plans, "states": self.states, "initial": self.initial,
            "static": self.static, "goal": self.goal, "goal_distance": self.goal_distance,
            "actions": self.actions,
            "applicable": {str(s): [list(e) for e in edges] for s, edges in self.applicable.items()},
            "plans": [[list(t) for t in plan] for plan in self.plans],
            "n_optimal_plans": self.n_optimal_plans, "optimal_cost": self.optimal_cost,
            "n_states_space": self.n_states_space, "n_transitions_space": self.n_transitions_space,
            "space_transitions": [list(t) for t in self.space_transitions],
            "max_space_transitions": self.max_space_transitions,
        }

    @classmethod
    def from_dict(cls, rec: dict, source: str = "record") -> "ProblemTransitions":
        """Build and check a record read from a file.

        Raises:
            ValueError: a key is missing or has the wrong type, or an id is out of range; the
                message starts with ``source`` (the file path).
        """
        if not isinstance(rec, dict):
            raise ValueError(f"{source}: expected a JSON object, got {type(rec).__name__}")
        missing = [k for k in FILE_KEYS if k not in rec]
        if missing:
            raise ValueError(f"{source}: missing keys {missing}")
        try:
            n = len(rec["states"])
            states = [list(map(str, s)) for s in rec["states"]]
            goal_distance = [int(x) for x in rec["goal_distance"]]
            n_actions = len(rec["actions"])
            applicable = {int(k): [(int(a), int(t)) for a, t in v] for k, v in rec["applicable"].items()}
            plans = [[(int(s), int(a), int(t)) for s, a, t in plan] for plan in rec["plans"]]
            obj = cls(
                domain=str(rec["domain"]), problem=str(rec["problem"]),
                problem_file=str(rec["problem_file"]), seed=int(rec["seed"]),
                generator=dict(rec["generator"]), max_states=int(rec["max_states"]),
                max_plans=int(rec["max_plans"]), states=states, initial=int(rec["initial"]),
                static=list(rec["static"]), goal=list(rec["goal"]), goal_distance=goal_distance,
                actions=list(rec["actions"]), applicable=applicable, plans=plans,
                n_optimal_plans=rec["n_optimal_plans"], optimal_cost=int(rec["optimal_cost"]),
                n_states_space=int(rec["n_states_space"]),
                n_transitions_space=int(rec["n_transitions_space"]),
                space_transitions=[(int(a), int(b), int(c)) for a, b, c in rec.get("space_transitions", [])],
                max_space_transitions=int(rec.get("max_space_transitions", 0)),
            )
        except (TypeError, ValueError, AttributeError) as exc:
            raise ValueError(f"{source}: malformed record: {exc}") from exc
        if len(goal_distance) != n or n != obj.n_states_space:
            raise ValueError(f"{source}: {n} states but {len(goal_distance)} goal distances and "
                             f"n_states_space={obj.n_states_space}")
        if not 0 <= obj.initial < n:
            raise ValueError(f"{source}: initial state id {obj.initial} out of range [0, {n})")
        for s, edges in applicable.items():
            for a, t in edges:
                if not (0 <= s < n and 0 <= t < n and 0 <= a < n_actions):
                    raise ValueError(f"{source}: applicable[{s}] has an out-of-range id ({a}, {t})")
        for s, a, t in obj.space_transitions:
            if not (0 <= s < n and 0 <= t < n and 0 <= a < n_actions) or s not in applicable:
                raise ValueError(f"{source}: space transition ({s}, {a}, {t}) is out of range or has no applicable entry")
        for i, plan in enumerate(plans):
            for s, a, t in plan:
                if not (0 <= s < n and 0 <= t < n and 0 <= a < n_actions):
                    raise ValueError(f"{source}: plan {i} has an out-of-range id ({s}, {a}, {t})")
        return obj


def load_problem(path: str | os.PathLike) -> ProblemTransitions:
    """Read one ``<problem>.json.gz`` file.

    Raises:
        FileNotFoundError: the file does not exist (message names it).
        ValueError: not gzip/JSON, or not in the format of this module (message names the file).
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: ACP problem file not found (run the acp stage)")
    try:
        with gzip.open(path, "rt", encoding="utf-8") as fh:
            rec = json.load(fh)
    except (OSError, EOFError, json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path}: not a gzipped JSON file: {exc}") from exc
    return ProblemTransitions.from_dict(rec, source=str(path))


def _problem_files(domain_dir: Path) -> list[Path]:
    return sorted(domain_dir.glob("*.json.gz"), key=lambda p: p.name[: -len(".json.gz")])


def load_domain_dataset(acp_dir: str | os.PathLike, domain: str) -> list[ProblemTransitions]:
    """All problems of one domain under ``acp_dir`` (``data/acp``), sorted by problem name.

    Raises:
        FileNotFoundError: ``acp_dir/domain`` is missing or holds no problem file (the message lists
            the domains available).
        ValueError: a problem file is malformed (names the file).
    """
    acp_dir = Path(acp_dir)
    files = _problem_files(acp_dir / domain) if (acp_dir / domain).is_dir() else []
    if not files:
        raise FileNotFoundError(
            f"{acp_dir / domain}: no ACP problem files for domain {domain!r}; "
            f"available: {domains_available(acp_dir)}"
        )
    return [load_problem(p) for p in files]


def domains_available(acp_dir: str | os.PathLike) -> list[str]:
    """Sorted names of the domain folders under ``acp_dir`` that hold at least one problem file
    (an absent ``acp_dir`` gives ``[]``)."""
    acp_dir = Path(acp_dir)
    if not acp_dir.is_dir():
        return []
    return sorted(d.name for d in acp_dir.iterdir() if d.is_dir() and _problem_files(d))


# --------------------------------------------------------------------------------------------
# Writing and resuming
# --------------------------------------------------------------------------------------------


def write_problem_record(path: Path, rec: dict) -> None:
    """Write a record as gzipped JSON, atomically (temporary file + rename)."""
    data = gzip.compress(json.dumps(rec, separators=(",", ":")).encode(), compresslevel=6, mtime=0)
    atomic_write_bytes(path, data)


def cached_record(path: Path, seed: int, kwargs: dict, max_states: int, max_plans: int,
                   space_transitions: int = 0) -> dict | None:
    """The existing record at ``path`` when it was made with the same seed, generator kwargs and
    limits (resume), else None (missing, unreadable or stale)."""
    if not path.exists():
        return None
    try:
        with gzip.open(path, "rt", encoding="utf-8") as fh:
            rec = json.load(fh)
    except (OSError, EOFError, ValueError):
        return None
    if not isinstance(rec, dict) or any(k not in rec for k in FILE_KEYS):
        return None
    same = (rec["seed"] == seed and rec["generator"] == kwargs and rec["max_states"] == max_states
            and rec["max_plans"] == max_plans and rec.get("max_space_transitions", 0) == space_transitions)
    return rec if same else None


__all__ = ["FILE_KEYS", "ProblemTransitions", "cached_record", "domains_available", "load_domain_dataset",
           "load_problem", "write_problem_record"]
