"""ACPBench transition datasets for EmbedPlan (the ``acp`` stage).

EmbedPlan (``../shared/papers/embedplan-latent-transitions.txt``) learns next-state prediction from
(state, ground action, successor) triples extracted from up to 100 optimal plans per problem, over
nine ACPBench domains (Section 3 "Data"; Appendix C, Table 7). Its Hit@k protocol ranks the true
successor against a pool of states *of the same problem*, and its Plan-Variant protocol (Appendix
A.2) needs several distinct optimal plans per problem. This module builds such datasets offline:

1. **Problems.** Per domain, problems come from the ``pypddl-datasets`` generators (IPC generators
   ported to Python; the same ones :mod:`planarena.datasets.suites` calls) with the generator keyword
   arguments of ``acp.generators.<domain>.configs`` (cycled over problems) and a per-problem seed
   derived from the top-level ``seed``. Written to ``data/acp/<domain>/domain.pddl`` and
   ``data/acp/<domain>/problems/<problem>.pddl``.
2. **State space.** pymimir expands the full reachable state space (breadth first, stopping as soon
   as ``acp.max_states`` is exceeded) and labels every state with its unit-cost goal distance. A
   problem whose state space is too large (or smaller than ``acp.min_states``), which has no
   reachable goal, whose initial state already is a goal, or whose expansion times out is *skipped*
   with its reason in ``summary.json``; the stage never stops for one problem. Problems are drawn
   until ``problems`` are kept or ``max_attempts`` were drawn.
3. **Optimal plans.** An optimal plan follows edges ``s -a-> s'`` with ``d(s') = d(s) - 1`` from the
   initial state to a goal state. Their number is counted exactly by dynamic programming over this
   DAG; up to ``acp.max_plans`` distinct ones are kept (all of them when there are few enough, else
   distinct plan ranks drawn uniformly at random with a seeded RNG and unranked through the path
   counts), in rank order.
4. **Files.** One gzipped JSON per kept problem (format below), ``summary.json`` per domain (the
   columns of Table 7 plus skipped problems) and ``data/acp/manifest.json``.

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
import importlib
import json
import os
import random
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pymimir
from pymimir.advanced import datasets as _mimir_datasets
from tqdm import tqdm

from planarena.config import ConfigError, Layout, get
from planarena.core.io import atomic_write_bytes, derive_seed
from planarena.core.pddl import (
    atoms_of,
    goal_atoms,
    load_domain,
    normalise_action,
    parse_problem_of,
    static_atoms,
)

GEN_ROOT = "pypddl_datasets.generators.classical.ipc"

#: ACPBench domain name -> (pypddl-datasets generator package, domain file next to the generator).
#: Logistics uses the IPC-1998 encoding (``domain.pddl``, generator ``style="98"``): ACPBench's
#: ``logistics-c<cities>-s<city size>-p<packages>-a<airplanes>`` tasks have that structure.
DOMAINS: dict[str, tuple[str, str]] = {
    "blocksworld": ("blocks_4", "domain.pddl"),
    "depot": ("depots", "domain.pddl"),
    "ferry": ("ferry", "domain.pddl"),
    "floortile": ("floortile", "domain.pddl"),
    "goldminer": ("goldminer", "domain.pddl"),
    "grid": ("grid", "domain.pddl"),
    "logistics": ("logistics", "domain.pddl"),
    "rovers": ("rovers", "domain.pddl"),
    "satellite": ("satellite", "domain.pddl"),
}

#: Keys of every problem file (the format in the module docstring).
FILE_KEYS = (
    "domain", "problem", "problem_file", "seed", "generator", "max_states", "max_plans", "states",
    "initial", "static", "goal", "goal_distance", "actions", "applicable", "plans", "n_optimal_plans",
    "optimal_cost", "n_states_space", "n_transitions_space", "space_transitions", "max_space_transitions",
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


def parse_domain(domain_file: str | Path) -> "pymimir.Domain":
    """Parse a domain file with pymimir, uncached (files under ``data/acp`` may be rewritten).

    Raises:
        PDDLError: the file is missing or malformed; the message names the file.
    """
    # uncached: the stage rewrites domain.pddl in place when the generator's domain file changes
    return load_domain.__wrapped__(str(domain_file))


def parse_problem(domain: "str | Path | pymimir.Domain", problem_file: str | Path) -> "pymimir.Problem":
    """Parse a problem file with pymimir against a domain (a parsed one or its file), uncached.

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
    ranks = select_plan_ranks(total, max_plans, _derive_seed(seed, "plans"))
    plans_txt = [unrank_plan(r, space.initial, space.goal_distance, dag, counts) for r in ranks]

    edges_txt: list[tuple[int, str, int]] = []
    if space_transitions:
        all_edges = [(s, a, t) for s in range(space.n_states) for a, t in space.successors(s)]
        if 0 < space_transitions < len(all_edges):
            picks = sorted(random.Random(_derive_seed(seed, "edges")).sample(range(len(all_edges)), space_transitions))
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
# The stage
# --------------------------------------------------------------------------------------------


def _derive_seed(base: int, *parts: Any) -> int:
    """Deterministic 32-bit seed from ``base`` and ``parts`` (like :func:`planarena.datasets.suites._seed_for`)."""
    return derive_seed(base, *parts)


def problem_seed(base_seed: int, domain: str, index: int) -> int:
    """Seed of the ``index``-th problem drawn for ``domain`` (independent of the order of work)."""
    return _derive_seed(base_seed, "acp", domain, index)


def problem_name(domain: str, kwargs: dict, index: int) -> str:
    """``<domain>-<integer generator args joined by '-'>-<index:03d>``, e.g. ``blocksworld-5-002``
    (unique per domain through the index)."""
    sizes = [str(v) for v in kwargs.values() if isinstance(v, int) and not isinstance(v, bool)]
    return "-".join([domain, *sizes, f"{index:03d}"])


def domain_text(domain: str) -> str:
    """Text of the domain file of ``domain`` shipped with its pypddl-datasets generator.

    Raises:
        ConfigError: unknown domain (lists the known ones).
    """
    if domain not in DOMAINS:
        raise ConfigError(f"params: acp.domains: unknown domain {domain!r}; known: {sorted(DOMAINS)}")
    pkg, fname = DOMAINS[domain]
    gen = importlib.import_module(f"{GEN_ROOT}.{pkg}.generator")
    return (Path(gen.__file__).parent / fname).read_text()


def generate_problem_text(domain: str, kwargs: dict, seed: int) -> str | None:
    """PDDL text of one generated problem (``make_problem(**kwargs, seed=seed)``), or None when the
    generator rejects the arguments.

    Raises:
        ConfigError: unknown domain, or keyword arguments the generator does not accept.
    """
    if domain not in DOMAINS:
        raise ConfigError(f"params: acp.domains: unknown domain {domain!r}; known: {sorted(DOMAINS)}")
    if domain == "logistics" and kwargs.get("style", "98") != "98":
        raise ConfigError("params: acp.generators.logistics: only style '98' (domain.pddl, as ACPBench)")
    gen = importlib.import_module(f"{GEN_ROOT}.{DOMAINS[domain][0]}.generator")
    try:
        return gen.make_problem(**kwargs, seed=seed)
    except TypeError as exc:
        raise ConfigError(f"params: acp.generators.{domain}: bad generator arguments {kwargs}: {exc}") from exc


def domain_settings(params: dict, domain: str) -> dict:
    """Resolved settings of one domain: ``problems`` (kept target), ``max_attempts`` (problems drawn
    at most) and ``configs`` (list of generator kwargs, problem ``i`` uses ``configs[i % len]``).

    ``acp.generators.<domain>`` is ``{problems?: int, max_attempts?: int, configs: [kwargs, ...]}``;
    ``problems`` and ``max_attempts`` default to ``acp.problems`` and ``acp.max_attempts``
    (default: 3 x problems).

    Raises:
        ConfigError: the domain has no ``configs`` or a bad value (names the param).
    """
    cfg = get(params, f"acp.generators.{domain}", None)
    if not isinstance(cfg, dict) or not cfg.get("configs"):
        raise ConfigError(f"params: set `acp.generators.{domain}.configs` (a list of generator kwargs)")
    configs = cfg["configs"]
    if isinstance(configs, dict):
        configs = [configs]
    if not all(isinstance(c, dict) for c in configs):
        raise ConfigError(f"params: acp.generators.{domain}.configs must be a list of mappings")
    problems = int(cfg.get("problems", get(params, "acp.problems")))
    attempts = int(cfg.get("max_attempts", get(params, "acp.max_attempts", 3 * problems)))
    if problems < 0 or attempts < problems:
        raise ConfigError(f"params: acp: need 0 <= problems ({problems}) <= max_attempts ({attempts}) for {domain}")
    return {"problems": problems, "max_attempts": attempts, "configs": [dict(c) for c in configs]}


def _write_atomic(path: Path, data: bytes) -> None:
    atomic_write_bytes(path, data)


def write_problem_record(path: Path, rec: dict) -> None:
    """Write a record as gzipped JSON, atomically (temporary file + rename)."""
    data = gzip.compress(json.dumps(rec, separators=(",", ":")).encode(), compresslevel=6, mtime=0)
    _write_atomic(path, data)


def _write_json(path: Path, obj: Any) -> None:
    _write_atomic(path, (json.dumps(obj, indent=1) + "\n").encode())


def _cached_record(path: Path, seed: int, kwargs: dict, max_states: int, max_plans: int,
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


def _skip_key(seed: int, kwargs: dict, limits: dict) -> str:
    return json.dumps([seed, kwargs, limits], sort_keys=True)


def _previous_skips(summary_path: Path) -> dict[str, dict]:
    """Skips recorded by a previous run (problem -> record), to resume without re-expanding."""
    try:
        old = json.loads(summary_path.read_text())
        return {s["problem"]: s for s in old.get("skipped", []) if "key" in s}
    except (OSError, ValueError, AttributeError, TypeError, KeyError):
        return {}


def build_domain(params: dict, domain: str, out_dir: Path) -> dict:
    """Generate, expand and write one domain's problems under ``out_dir`` (``data/acp/<domain>``);
    return its summary (also written to ``summary.json``).

    Summary keys (Table 7 columns of EmbedPlan Appendix C): ``problems`` (kept), ``states`` (sum of
    state-space sizes), ``transitions`` (unique (s, a, s') over stored plans, summed over problems),
    ``transitions_space`` (edges of the state spaces, summed), ``actions`` (action schemas of the
    domain), ``plans`` (stored plans), and ``skipped`` (``[{problem, reason, seed, generator}]``),
    ``per_problem``, ``wall_time_s``.

    Raises:
        ConfigError: bad ``acp`` params for this domain.
        PDDLError: a generated file does not parse (names the file).
    """
    start = time.perf_counter()
    base_seed = int(get(params, "seed"))
    max_states = int(get(params, "acp.max_states"))
    max_plans = int(get(params, "acp.max_plans", 100))
    min_states = int(get(params, "acp.min_states", 0))
    space_k = int(get(params, "acp.space_transitions", 0) or 0)
    timeout_s = get(params, "acp.timeout_s", None)
    timeout_s = float(timeout_s) if timeout_s else None
    settings = domain_settings(params, domain)
    limits = {"max_states": max_states, "max_plans": max_plans, "min_states": min_states, "timeout_s": timeout_s,
              "space_transitions": space_k}

    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "problems").mkdir(exist_ok=True)
    domain_file = out_dir / "domain.pddl"
    text = domain_text(domain)
    if not domain_file.exists() or domain_file.read_text() != text:
        _write_atomic(domain_file, text.encode())
    pddl_domain = parse_domain(domain_file)
    old_skips = _previous_skips(out_dir / "summary.json")

    kept: list[dict] = []
    skipped: list[dict] = []
    keep_names: set[str] = set()
    bar = tqdm(total=settings["problems"], desc=f"acp {domain}", unit="problem")
    for index in range(settings["max_attempts"]):
        if len(kept) >= settings["problems"]:
            break
        kwargs = settings["configs"][index % len(settings["configs"])]
        seed = problem_seed(base_seed, domain, index)
        name = problem_name(domain, kwargs, index)
        key = _skip_key(seed, kwargs, limits)
        skip = {"problem": name, "seed": seed, "generator": kwargs, "key": key}
        text = generate_problem_text(domain, kwargs, seed)
        if text is None:
            skipped.append({**skip, "reason": f"generator returned no problem for {kwargs}"})
            bar.set_postfix(skipped=len(skipped))
            continue
        pddl_path = out_dir / "problems" / f"{name}.pddl"
        if not pddl_path.exists() or pddl_path.read_text() != text:
            _write_atomic(pddl_path, text.encode())
        json_path = out_dir / f"{name}.json.gz"
        rec = _cached_record(json_path, seed, kwargs, max_states, max_plans, space_k)
        if rec is None and name in old_skips and old_skips[name].get("key") == key:
            skipped.append({**skip, "reason": old_skips[name]["reason"]})
            bar.set_postfix(skipped=len(skipped))
            continue
        if rec is not None and rec["n_states_space"] < min_states:
            rec = None  # min_states was raised since; recompute gives the skip reason
        if rec is None:
            try:
                problem = parse_problem(pddl_domain, pddl_path)
                rec = build_problem_record(problem, domain=domain, name=name, seed=seed, generator=kwargs,
                                           max_states=max_states, max_plans=max_plans,
                                           min_states=min_states, timeout_s=timeout_s,
                                           space_transitions=space_k)
            except SkipProblem as exc:
                skipped.append({**skip, "reason": str(exc)})
                bar.set_postfix(skipped=len(skipped))
                if json_path.exists():
                    json_path.unlink()
                continue
            write_problem_record(json_path, rec)
        keep_names.add(name)
        kept.append(_problem_stats(rec))
        bar.update(1)
        bar.set_postfix(skipped=len(skipped))
    bar.close()

    # Files of problems not kept by this run (other params, earlier runs) would leak into loaders.
    for p in out_dir.glob("*.json.gz"):
        if p.name[: -len(".json.gz")] not in keep_names:
            p.unlink()
    for p in (out_dir / "problems").glob("*.pddl"):
        if p.stem not in keep_names:
            p.unlink()

    summary = {
        "domain": domain,
        "problems": len(kept),
        "states": sum(k["states"] for k in kept),
        "transitions": sum(k["transitions"] for k in kept),
        "transitions_space": sum(k["transitions_space"] for k in kept),
        "actions": len(pddl_domain.get_actions()),
        "plans": sum(k["plans"] for k in kept),
        "attempted": len(kept) + len(skipped),
        "skipped": skipped,
        "per_problem": kept,
        "generator": f"{GEN_ROOT}.{DOMAINS[domain][0]}.generator",
        "domain_file": f"{DOMAINS[domain][0]}/{DOMAINS[domain][1]}",
        "limits": limits,
        "target_problems": settings["problems"],
        "wall_time_s": round(time.perf_counter() - start, 3),
    }
    _write_json(out_dir / "summary.json", summary)
    return summary


def _problem_stats(rec: dict) -> dict:
    """Per-problem row of summary.json."""
    # the dataset's transitions: unique (s, a, s') on the stored plans plus the sampled state-space edges
    transitions = {tuple(t) for plan in rec["plans"] for t in plan} | {tuple(t) for t in rec.get("space_transitions", [])}
    return {
        "problem": rec["problem"],
        "seed": rec["seed"],
        "generator": rec["generator"],
        "states": rec["n_states_space"],
        "transitions": len(transitions),
        "transitions_space": rec["n_transitions_space"],
        "plans": len(rec["plans"]),
        "n_optimal_plans": rec["n_optimal_plans"],
        "optimal_cost": rec["optimal_cost"],
    }


def run_stage(params: dict, layout: Layout) -> Path:
    """The ``acp`` stage: build the transition datasets of ``acp.domains`` under ``layout.acp``.

    Params (``acp:``): ``domains`` (list of names of :data:`DOMAINS`), ``problems`` (kept per
    domain), ``max_attempts`` (problems drawn per domain at most; default 3 x problems),
    ``max_states`` (largest state space kept; expansion stops beyond it), ``min_states`` (smallest
    kept; default 0), ``max_plans`` (optimal plans stored per problem; default 100), ``timeout_s``
    (per expansion; default none), ``generators.<domain>`` (see :func:`domain_settings`); and the
    top-level ``seed``. Resumable: a problem whose file was made with the same seed, generator
    kwargs, ``max_states`` and ``max_plans`` is not recomputed, nor is a recorded skip with the same
    settings. Domain folders not in ``acp.domains`` are removed.

    Returns:
        The path of ``data/acp/manifest.json`` (``{"domains": [...], "problems": {domain: [names]},
        "seed": int, "wall_time_s": float}``).

    Raises:
        ConfigError: missing or bad ``acp`` params (names the param).
        PDDLError: a generated file does not parse (names the file).
    """
    start = time.perf_counter()
    domains = list(get(params, "acp.domains"))
    unknown = [d for d in domains if d not in DOMAINS]
    if unknown:
        raise ConfigError(f"params: acp.domains: unknown {unknown}; known: {sorted(DOMAINS)}")
    for key in ("acp.max_states", "acp.problems"):
        get(params, key)
    out = layout.acp
    out.mkdir(parents=True, exist_ok=True)
    for d in out.iterdir():
        if d.is_dir() and d.name not in domains and ((d / "summary.json").exists() or (d / "domain.pddl").exists()):
            shutil.rmtree(d)
    problems: dict[str, list[str]] = {}
    for domain in domains:
        summary = build_domain(params, domain, out / domain)
        problems[domain] = [p["problem"] for p in summary["per_problem"]]
    manifest = {
        "domains": domains,
        "problems": problems,
        "seed": int(get(params, "seed")),
        "wall_time_s": round(time.perf_counter() - start, 3),
    }
    path = out / "manifest.json"
    _write_json(path, manifest)
    return path
