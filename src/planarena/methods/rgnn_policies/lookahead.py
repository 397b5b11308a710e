"""Lookaheads of the width-based policies: primitive successors, IW(1), Abstracted IW(1) and its
variants, each returning the tree of candidate "jumps" from a state.

Source: Aichmüller et al. (docs/papers/rgnn-policies.md), Section 3 ("Iterated Width", "Abstracted
IW(k)") and Appendix B (BAIW, C-AIW).

* ``flat``: the distinct primitive successors of the state (one jump per successor state).
* ``iw``: IW(1) from the state: breadth-first search that keeps a generated state only if it makes
  some ground atom true for the first time in the search (the root's atoms count as seen). Every
  primitive successor of the root is a candidate even if not novel (Appendix B: "the primitive
  successors guaranteed by a prior IW(0) search"); only novel states are expanded.
* ``aiw``: as IW(1), but a non-goal atom ``P(o1..on)`` is tested through its abstracted forms
  ``P(r(o1)..o_i..r(on))``, i = 1..n, with ``r(o)`` the object's most specific type (its declared
  type in the problem file, a constant's in the domain file; untyped ones share one universal type); the atom is novel if any
  form is. Atoms of the goal are never abstracted (Section 3, "Reduced Goals" ablation of
  Appendix C shows why). ``goals="reduced"`` is that ablation (Appendix C, Table 5): goal atoms
  are abstracted like every other atom (for ``aiw``, ``baiw`` and ``caiw``; IW(1) abstracts nothing).
* ``baiw``: every object abstracted to the universal type (Appendix B, "Base-Abstracted IW").
* ``caiw``: AIW with a capacity: at each depth at most ``capacity`` novel states are kept for the
  next depth, those satisfying the most goal atoms first, ties first-seen (Appendix B, C = 1000).
  The others leave the tree (primitive successors of the root stay candidates, unexpanded); the
  features they made novel stay in the novelty table (the paper does not say; they were tested).

pymimir's own ``iw`` search returns a plan to the goal, not the tree of novel states, and has no hook
for abstracted novelty, so the search is written here once for all five kinds; a test checks that
the ``iw`` tree expands the same states as ``pymimir.iw(problem, s, 1)``. Successors come from
pymimir's advanced API through :mod:`planarena.core.successors` (a grounded applicable-action
generator, actions in the order of their text, a successor's new atoms read off its action's add
effects): the same trees as the search over pymimir's wrappers (a test compares them on every fixture
domain), about 20 times less CPU on Spanner (``benchmarks/replay_lookaheads.py``).
The lookahead is computed under the *problem's* goal (for AIW's goal atoms and C-AIW's heuristic)
even when the policy is conditioned on a relabelled (hindsight) goal: the paper is silent here, and
this keeps a state's candidate set a fixed property of the state, which the DQN target needs.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from planarena.core.successors import Successors, successors_of

KINDS = ("flat", "iw", "aiw", "baiw", "caiw")
UNIVERSAL = "object"
#: how the abstracting lookaheads treat goal atoms: ``full`` (never abstracted, Section 3: "AIW
#: therefore does not abstract an atom P(o1, ..., on) if it is mentioned in the goal") or ``reduced``
#: (abstracted like the others: Appendix C's "Reduced Goals" ablation, Table 5); the default first
GOALS = ("full", "reduced")


class LookaheadTimeout(RuntimeError):
    """The lookahead passed its deadline (the episode's time limit)."""


class Jump:
    """A candidate of the policy: the lookahead state ``state`` reached from the root by the
    primitive ``actions`` (a tuple of pymimir ground actions), at ``depth`` = len(actions).

    Duck-types pymimir-rl's action interface: :meth:`apply` returns the target state, and two jumps
    are equal when they reach the same state (the candidate sets of the DQN replay are recomputed).
    """

    __slots__ = ("state", "actions", "parent", "depth")

    def __init__(self, state, actions: tuple, parent: int):
        self.state = state
        self.actions = actions
        self.parent = parent  # index of the parent jump in the tree, -1: the root
        self.depth = len(actions)

    def apply(self, state):
        """The jump's target state (``state`` is the root it was computed from)."""
        return self.state

    def __eq__(self, other) -> bool:
        return isinstance(other, Jump) and self.state == other.state

    def __hash__(self) -> int:
        return hash(self.state)

    def __repr__(self) -> str:
        return f"Jump(depth={self.depth}, {' '.join(str(a) for a in self.actions)})"


@dataclass
class LookaheadTree:
    """The lookahead from ``root``: ``jumps`` in breadth-first order (depth non-decreasing);
    ``edges`` the (parent, child) jump-index pairs among them (the root is implicit); counters:
    ``expanded`` states expanded, ``generated`` successors generated, ``novelty_features`` the size
    of the novelty table at the end; ``seconds`` the wall time."""

    root: object
    jumps: list[Jump]
    edges: list[tuple[int, int]] = field(default_factory=list)
    expanded: int = 0
    generated: int = 0
    novelty_features: int = 0
    seconds: float = 0.0

    @property
    def max_depth(self) -> int:
        return max((j.depth for j in self.jumps), default=0)


class AtomFeatures:
    """Novelty features of the fluent atoms of one problem (memoised per atom index).

    ``kind`` ``iw``: the atom itself. ``aiw`` / ``baiw``: the abstracted forms (predicate, position,
    object, the abstract types of the other positions) of a non-goal atom, the atom itself for a goal
    atom. ``types`` maps object name -> most specific type (``None``: untyped -> universal type).
    ``goals`` (:data:`GOALS`): ``full`` keeps goal atoms whole (Section 3); ``reduced`` abstracts them
    too (Appendix C, "Reduced Goals"); it changes nothing for ``iw``.

    Raises:
        ValueError: unknown ``kind`` or ``goals``.
    """

    def __init__(self, problem, kind: str, types: dict[str, str | None] | None = None, goals: str = "full"):
        if kind not in ("iw", "aiw", "baiw"):
            raise ValueError(f"novelty kind {kind!r}; one of iw, aiw, baiw")
        if goals not in GOALS:
            raise ValueError(f"goals {goals!r}; one of {', '.join(GOALS)}")
        self.kind = kind
        self.goals = goals
        self.problem = problem
        self._repos = problem._advanced_problem.get_repositories()
        types = types or {}
        self._type = {} if kind == "iw" else {
            str(o.get_name()): (UNIVERSAL if kind == "baiw" else (types.get(str(o.get_name())) or UNIVERSAL))
            for o in list(problem.get_objects()) + list(problem.get_domain().get_constants())}
        # the goal atoms kept whole (none under Reduced Goals)
        self._goal = set() if goals == "reduced" else {
            int(lit.get_atom().get_index()) for lit in problem.get_goal_condition()
            if lit.get_polarity() and lit.get_atom().is_fluent()}
        self._memo: dict[int, tuple] = {}

    def __call__(self, index: int) -> tuple:
        got = self._memo.get(index)
        if got is None:
            got = self._memo[index] = self._features(index)
        return got

    def _features(self, index: int) -> tuple:
        if self.kind == "iw" or index in self._goal:
            return (index,)
        import pymimir

        atom = pymimir.GroundAtom(self._repos.get_fluent_ground_atoms_from_indices([int(index)])[0])
        pred = atom.get_predicate().get_name()
        names = [str(t.get_name()) for t in atom.get_terms()]
        if not names:
            return ((pred,),)
        abstract = [self._type[n] for n in names]
        return tuple((pred, i, names[i], tuple(abstract[:i] + abstract[i + 1:])) for i in range(len(names)))


def lookahead(problem, state, kind: str, features: AtomFeatures | None = None, capacity: int = 1000,
              deadline: float | None = None, goals: str = "full", successors: Successors | None = None) -> LookaheadTree:
    """The ``kind`` lookahead tree from ``state`` (see the module docstring).

    Args:
        problem: the pymimir problem of ``state``.
        features: the problem's :class:`AtomFeatures` (``iw`` for ``iw``; ``aiw`` for ``aiw`` and
            ``caiw``; ``baiw``); built here if None (build once per problem and pass it in a loop).
        goals: :data:`GOALS`, for the features built here (a given ``features`` carries its own).
        capacity: C-AIW's states kept per depth.
        successors: the problem's :class:`~planarena.core.successors.Successors` (None: the
            problem's grounded one, :func:`~planarena.core.successors.successors_of`).
        deadline: ``time.process_time()`` value (CPU seconds of this process, so that a loaded
            machine does not change the outcome) after which :class:`LookaheadTimeout` is raised.

    Returns:
        :class:`LookaheadTree`; no jump reaches the root or repeats a state.

    Raises:
        ValueError: unknown ``kind``. LookaheadTimeout: past ``deadline``.
    """
    if kind not in KINDS:
        raise ValueError(f"lookahead kind {kind!r}; one of {', '.join(KINDS)}")
    start = time.perf_counter()
    tree = LookaheadTree(root=state, jumps=[])
    succs = successors if successors is not None else successors_of(problem)
    root = state._advanced_state
    seen_states = {root.get_index()}  # states of one repository: equal iff same index
    if kind == "flat":
        tree.expanded = 1
        for action in succs.actions(root):
            succ = succs.successor(root, action)
            tree.generated += 1
            if succ.get_index() not in seen_states:
                seen_states.add(succ.get_index())
                tree.jumps.append(Jump(succs.state(succ), (succs.action(action),), -1))
        tree.seconds = time.perf_counter() - start
        return tree
    if features is None:
        features = AtomFeatures(problem, "iw" if kind == "iw" else ("baiw" if kind == "baiw" else "aiw"), goals=goals)
    goal_atoms = {int(lit.get_atom().get_index()) for lit in problem.get_goal_condition()
                  if lit.get_polarity() and lit.get_atom().is_fluent()}  # C-AIW's h(s') counts these
    seen: set = set()
    root_atoms = frozenset(root.get_fluent_atoms())
    for a in root_atoms:
        seen.update(features(a))
    # (advanced state, jump index, actions, its fluent atoms). Every atom of a kept state is in
    # ``seen`` (a novel state adds its new features; a non-novel one has none), so only the atoms a
    # successor adds to its parent can be novel: those its action adds that the parent lacks.
    layer: list[tuple] = [(root, -1, (), root_atoms)]
    while layer:
        nxt: list[tuple] = []  # + goal count for C-AIW
        for s, idx, path, atoms in layer:
            if deadline is not None and time.process_time() > deadline:
                raise LookaheadTimeout(f"lookahead {kind} past the time limit after {tree.expanded} expansions")
            tree.expanded += 1
            for action in succs.actions(s):
                tree.generated += 1
                added = succs.added(action)
                if added is None or idx == -1:
                    succ = succs.successor(s, action)
                    sid = succ.get_index()
                    if sid in seen_states:
                        continue
                    new_atoms = succ.get_fluent_atoms() if added is None else added
                else:
                    # A state already in the tree has every feature in ``seen``, so a successor
                    # with a novel feature is new and one without is pruned, duplicate or not: the
                    # novelty test comes first, and only a novel successor is made.
                    succ, new_atoms = None, added
                novel = False
                for a in new_atoms:
                    if a in atoms:
                        continue
                    for f in features(a):
                        if f not in seen:
                            seen.add(f)
                            novel = True
                if not novel and idx != -1:
                    continue  # pruned (novelty > 1); primitive successors of the root stay candidates
                if succ is None:
                    succ = succs.successor(s, action)
                    sid = succ.get_index()
                seen_states.add(sid)
                jpath = path + (succs.action(action),)
                tree.jumps.append(Jump(succs.state(succ), jpath, idx))
                j = len(tree.jumps) - 1
                if idx >= 0:
                    tree.edges.append((idx, j))
                if novel:
                    succ_atoms = frozenset(succ.get_fluent_atoms())
                    nxt.append((succ, j, jpath, succ_atoms,
                                len(goal_atoms.intersection(succ_atoms)) if kind == "caiw" else 0))
        if kind == "caiw" and len(nxt) > capacity:
            keep = sorted(range(len(nxt)), key=lambda i: (-nxt[i][4], i))[:capacity]
            # ejected states leave the tree, except primitive successors of the root (always
            # candidates); their features stay in the novelty table (they were tested at generation)
            dropped = {nxt[i][1] for i in range(len(nxt)) if tree.jumps[nxt[i][1]].parent != -1} - {nxt[i][1] for i in keep}
            nxt = [nxt[i] for i in sorted(keep)]
            renumber = _drop(tree, dropped)
            nxt = [(s, renumber[j], p, a, g) for s, j, p, a, g in nxt]
        layer = [x[:4] for x in nxt]
    tree.novelty_features = len(seen)
    tree.seconds = time.perf_counter() - start
    return tree


def _drop(tree: LookaheadTree, dropped: set[int]) -> dict[int, int]:
    """Remove the jumps ``dropped`` (indices of the last layer: leaves), renumber parents and
    edges; returns old index -> new index of the jumps kept."""
    keep = [k for k in range(len(tree.jumps)) if k not in dropped]
    new = {old: i for i, old in enumerate(keep)}
    jumps = []
    for old in keep:
        j = tree.jumps[old]
        j.parent = new.get(j.parent, -1) if j.parent >= 0 else -1
        jumps.append(j)
    tree.jumps = jumps
    tree.edges = [(new[a], new[b]) for a, b in tree.edges if a in new and b in new]
    return new


def object_types(problem_file, domain_file=None) -> dict[str, str | None]:
    """Declared type of every object of a problem file and, with ``domain_file``, of every constant
    of its domain (``None``: untyped), for AIW's ``r(o)``: a constant is abstracted to its declared
    type like an object (Section 3: "replaces objects by their type in the planning domain"), e.g.
    Childsnack's ``kitchen - place``, Sokoban's ``up - direction``."""
    from planarena.core.pddl import domain_constants, read_problem_text

    types = domain_constants(domain_file) if domain_file is not None else {}
    return {**types, **read_problem_text(problem_file).objects}


__all__ = ["GOALS", "KINDS", "AtomFeatures", "Jump", "LookaheadTimeout", "LookaheadTree", "lookahead",
           "object_types"]
