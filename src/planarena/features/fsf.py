"""Fixed-Size Factored (FSF) state and goal encoding (state-centric paper, Appendix F).

``phi_FSF(s)`` is a vector in ``R^{N+1}`` (Gupta et al., "On Sample-Efficient Generalized Planning
via Learned Transition Models", Appendix F.1; docs/papers/state-centric.md): slot 0 holds
global/robot information, slots ``1..N`` hold one object each with domain-specific semantics (Table
5, F.2), unused slots of a smaller problem hold the padding value ``-99.0`` (:data:`PAD`) and goal
variables that the goal does not specify hold the don't-care value ``-10.0`` (:data:`DONT_CARE`).
FSF is the paper's deliberately non-relational ablation baseline (F.4): it needs a fixed ``N``, a
fixed object-to-slot mapping and hand-written semantics per domain.

Domains and slot semantics (Table 5)
------------------------------------
Every value below is a small integer stored exactly in ``float32``. "slot(x)" is the 1-based slot of
a slotted object ``x``; "room(r)" / "loc(l)" is the 1-based index of a room / location among the
problem's rooms / locations (the *value* objects, which have no slot of their own).

==============  ======================================  ===================================================
domain          slots (in this order)                   values
==============  ======================================  ===================================================
blocksworld     0: unused; 1..B: blocks                 slot 0 = 0. block x: 0 on table ``(ontable x)``,
                                                        -1 held ``(holding x)``, slot(y) on block y
                                                        ``(on x y)``
gripper         0: robot; 1..G: grippers;               slot 0 = room(r) for ``(at-robby r)``.
                G+1..G+B: balls                         ball b: room(r) for ``(at b r)``, -slot(g) for
                                                        ``(carry b g)``. gripper g: 0 for ``(free g)``,
                                                        slot(b) for ``(carry b g)``
logistics       0: unused; packages, then trucks,       slot 0 = 0. object x: loc(l) for ``(at x l)``,
                then airplanes                          -slot(v) for ``(in x v)`` (v a truck/airplane)
visitall        0: robot; 1..C: cells                   slot 0 = slot(c) for ``(at-robot c)``. cell c:
                                                        1 if ``(visited c)``, else 0
==============  ======================================  ===================================================

Object references inside values use the referenced object's *slot* ("on block j", "carried by
gripper j", "inside vehicle j" of Table 5 name the object of slot ``j``); rooms and locations, which
have no slot, are numbered within their own kind. Cities (logistics) are neither slots nor values.
Grippers come before balls so that the (always two) gripper slots keep the same position in every
gripper problem whatever the number of balls.

Object ordering (the fixed object-to-slot mapping of F.4)
---------------------------------------------------------
Within each kind, objects are sorted *naturally* by name (digit runs compare as integers, so
``b2 < b10`` and ``loc-x2-y0 < loc-x10-y0``; exact ties, e.g. ``b01``/``b1``, fall back to plain
string order). Kinds are laid out in the order of the table above. The mapping therefore depends
only on the set of object names and their kinds, never on the order in which a PDDL file declares
objects or atoms: the same problem written differently encodes identically.

Object kinds come from unary *kind atoms* or PDDL types, so both the pypddl-datasets (generated
suite) and the SATr variants of each domain are read:

* blocksworld: every object is a block;
* gripper: ``(ball x)``, ``(gripper x)``, ``(room x)`` (or objects typed ``ball``/``gripper``/``room``);
* logistics (IPC-2000 ``logistics00`` and SATr's copy, same predicates): ``(package x)``,
  ``(truck x)``, ``(airplane x)``, ``(location x)`` or ``(airport x)`` (both are locations),
  ``(city x)``; IPC-1998 logistics (ACPBench's variant) writes ``(obj x)`` for packages;
* visitall: ``(place x)`` atoms (SATr) or objects of PDDL type ``place`` (pypddl-datasets, where
  pymimir also writes ``(place x)`` into a trajectory's ``static`` list); if no object has kind
  ``place``, every object is a cell.

An object with two conflicting kinds, or (gripper, logistics, visitall) with no kind, raises
``ValueError`` naming it.

Where N comes from
------------------
F.1: "N is the maximum number of objects across all problems in the domain". :func:`fsf_size` returns
the maximum number of *slots* (blocks; grippers + balls; packages + trucks + airplanes; cells) over a
list of problem files, and :func:`fsf_size_for_problemset` does so over every problem of a domain in
``data/problems/manifest.jsonl`` (all splits: train, validation, interpolation, extrapolation), which
is how the harness fixes ``N`` before training, as the paper does. This reads only object names and
kinds of the test problems (no plans, no goals, no labels). Rooms, locations and cities are values,
not slots, so they do not count towards ``N``. A problem with more slots than ``N`` cannot be
represented (F.4): :meth:`FSFEncoder.bind` raises ``ValueError`` naming the problem and ``N``.

Usage
-----
::

    enc = FSFEncoder("blocksworld", N=fsf_size("blocksworld", problem_files))
    bound = enc.bind("data/problems/blocksworld/train/p.pddl")   # parsed once, cached per file
    X = bound.encode_states(list_of_atom_lists)                   # (M, N+1) float32
    g = bound.encode_goal(goal_atoms)                             # (N+1,) float32
    S, g = enc.encode_trajectory(traj)                            # (T+1, N+1), (N+1,)

Atoms are strings ``"(pred obj1 obj2)"`` as pymimir prints them (see :mod:`planarena.core.trajectories`).
Predicates that FSF does not use (``clear``, ``handempty``, ``connected``, type atoms, ...) are
ignored. Problem files are read through the PDDL layer, :func:`planarena.core.pddl.read_problem_text`
(re-exported here as :func:`read_problem`, with :class:`~planarena.core.pddl.ProblemText`): objects
with their types, initial atoms and goal literals, without the domain file.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from planarena.core.pddl import ProblemText, format_atom, split_atom
from planarena.core.pddl import read_problem_text as read_problem

__all__ = [
    "PAD",
    "DONT_CARE",
    "SUPPORTED_DOMAINS",
    "FSFEncoder",
    "BoundFSF",
    "ProblemText",
    "canonical_domain",
    "natural_key",
    "read_problem",
    "fsf_size",
    "fsf_size_for_problemset",
    "encode_trajectory",
]

PAD = -99.0
"""F.1 padding value: slot unused for this problem size."""

DONT_CARE = -10.0
"""F.1 don't-care value: goal variable not specified by the goal."""

SUPPORTED_DOMAINS = ("blocksworld", "gripper", "logistics", "visitall")

_ALIASES = {
    "blocksworld": "blocksworld",
    "blocks": "blocksworld",
    "blocks_4": "blocksworld",
    "blocks-world": "blocksworld",
    "blocksworld-4ops": "blocksworld",
    "gripper": "gripper",
    "gripper-strips": "gripper",
    "logistics": "logistics",
    "logistics00": "logistics",
    "logistics-strips": "logistics",
    "visitall": "visitall",
    "visit-all": "visitall",
    "visitall-from-everywhere": "visitall",
    "grid-visit-all": "visitall",
}


def canonical_domain(name: str) -> str:
    """Harness domain name (or alias) -> one of :data:`SUPPORTED_DOMAINS`.

    Raises:
        ValueError: the domain has no FSF design (lists the supported domains and aliases).
    """
    key = str(name).strip().lower()
    if key in _ALIASES:
        return _ALIASES[key]
    raise ValueError(
        f"FSF: no encoding for domain {name!r}; supported: {list(SUPPORTED_DOMAINS)} "
        f"(aliases: {sorted(k for k in _ALIASES if k not in SUPPORTED_DOMAINS)}). FSF is hand-designed "
        "per domain (state-centric paper, Appendix F.2, Table 5)."
    )


_DIGITS = re.compile(r"(\d+)")


def natural_key(name: str) -> tuple:
    """Sort key comparing digit runs as integers: ``b2 < b10``, ``loc-x2-y9 < loc-x2-y10``."""
    parts = _DIGITS.split(name)
    return (tuple(int(p) if i % 2 else p for i, p in enumerate(parts)), name)


# ------------------------------------------------------------------------------------------------
# Per-domain layouts
# ------------------------------------------------------------------------------------------------

# unary predicate (or PDDL type) -> object kind, per domain
_KIND_PREDICATES: dict[str, dict[str, str]] = {
    "blocksworld": {},
    "gripper": {"ball": "ball", "gripper": "gripper", "room": "room"},
    "logistics": {
        "package": "package",
        "obj": "package",  # IPC-1998 logistics (ACPBench's) calls packages `obj`
        "truck": "truck",
        "airplane": "airplane",
        "location": "location",
        "airport": "location",
        "city": "city",
    },
    "visitall": {"place": "cell"},
}

# kinds that get slots, in slot order
_SLOT_KINDS: dict[str, tuple[str, ...]] = {
    "blocksworld": ("block",),
    "gripper": ("gripper", "ball"),
    "logistics": ("package", "truck", "airplane"),
    "visitall": ("cell",),
}

# predicates whose atoms FSF reads; any other predicate in a state or goal is ignored
_RELEVANT: dict[str, frozenset[str]] = {
    "blocksworld": frozenset({"on", "ontable", "holding"}),
    "gripper": frozenset({"at-robby", "at", "free", "carry"}),
    "logistics": frozenset({"at", "in"}),
    "visitall": frozenset({"at-robot", "visited"}),
}


@dataclass
class _Layout:
    """Slots, value indices and the atom table of one problem (built once per problem)."""

    domain: str
    kinds: dict[str, list[str]]          # kind -> naturally sorted objects
    slot_objects: list[str]              # slot i (1-based) holds slot_objects[i - 1]
    slot_labels: list[str]               # "kind:name" per slot 1..K
    table: dict[str, tuple[tuple[int, float], ...]] = field(default_factory=dict)
    state_slot0: float = np.nan          # NaN: a state must set it
    state_object_default: float = np.nan  # NaN: a state must set every object slot
    slot0_label: str = ""

    @property
    def n_slots(self) -> int:
        return len(self.slot_objects)

    def summary(self) -> str:
        return ", ".join(f"{k}: {len(v)}" for k, v in self.kinds.items())


def _classify(domain: str, objects: Iterable[str], kind_atoms: Iterable[tuple[str, str]],
              problem: str) -> dict[str, list[str]]:
    """Objects -> {kind: naturally sorted names}. ``kind_atoms`` are (predicate-or-type, object)."""
    objs = sorted(set(objects), key=natural_key)
    if domain == "blocksworld":
        return {"block": objs}
    preds = _KIND_PREDICATES[domain]
    kind_of: dict[str, set[str]] = {o: set() for o in objs}
    for pred, obj in kind_atoms:
        k = preds.get(pred)
        if k is not None and obj in kind_of:
            kind_of[obj].add(k)
    kinds: dict[str, list[str]] = {k: [] for k in dict.fromkeys(preds.values())}
    if domain == "visitall" and not any(kind_of.values()):
        kinds["cell"] = objs  # no (place x) atoms and no `place` type: every object is a cell
        return kinds
    bad = {o: sorted(ks) for o, ks in kind_of.items() if len(ks) > 1}
    if bad:
        raise ValueError(f"FSF ({domain}): problem {problem}: objects with conflicting kinds {bad}")
    missing = [o for o, ks in kind_of.items() if not ks]
    if missing:
        raise ValueError(
            f"FSF ({domain}): problem {problem}: cannot tell the kind of objects {missing[:10]}"
            f"{' ...' if len(missing) > 10 else ''}; expected unary atoms or PDDL types among {sorted(preds)}"
        )
    for o in objs:
        kinds[next(iter(kind_of[o]))].append(o)
    return kinds


def _build_layout(domain: str, kinds: dict[str, list[str]], problem: str) -> _Layout:
    T: dict[str, tuple[tuple[int, float], ...]] = {}

    def slots_of(order: Sequence[str]) -> tuple[list[str], list[str], dict[str, int]]:
        objs = [o for k in order for o in kinds[k]]
        labels = [f"{k}:{o}" for k in order for o in kinds[k]]
        return objs, labels, {o: i + 1 for i, o in enumerate(objs)}

    if domain == "blocksworld":
        objs, labels, slot = slots_of(_SLOT_KINDS[domain])
        for x in objs:
            T[format_atom("ontable", (x,))] = ((slot[x], 0.0),)
            T[format_atom("holding", (x,))] = ((slot[x], -1.0),)
            for y in objs:
                if y != x:
                    T[format_atom("on", (x, y))] = ((slot[x], float(slot[y])),)
        return _Layout(domain, kinds, objs, labels, T, state_slot0=0.0, slot0_label="unused")

    if domain == "gripper":
        if not kinds["room"]:
            raise ValueError(f"FSF (gripper): problem {problem}: no rooms ((room x) atoms)")
        objs, labels, slot = slots_of(_SLOT_KINDS[domain])
        room = {r: i + 1 for i, r in enumerate(kinds["room"])}
        for r, ri in room.items():
            T[format_atom("at-robby", (r,))] = ((0, float(ri)),)
        for g in kinds["gripper"]:
            T[format_atom("free", (g,))] = ((slot[g], 0.0),)
        for b in kinds["ball"]:
            for r, ri in room.items():
                T[format_atom("at", (b, r))] = ((slot[b], float(ri)),)
            for g in kinds["gripper"]:
                T[format_atom("carry", (b, g))] = ((slot[b], -float(slot[g])), (slot[g], float(slot[b])))
        return _Layout(domain, kinds, objs, labels, T, slot0_label="robot room")

    if domain == "logistics":
        if not kinds["location"]:
            raise ValueError(f"FSF (logistics): problem {problem}: no locations ((location x) atoms)")
        objs, labels, slot = slots_of(_SLOT_KINDS[domain])
        loc = {l: i + 1 for i, l in enumerate(kinds["location"])}
        vehicles = kinds["truck"] + kinds["airplane"]
        for x in objs:
            for l, li in loc.items():
                T[format_atom("at", (x, l))] = ((slot[x], float(li)),)
            for v in vehicles:
                if v != x:
                    T[format_atom("in", (x, v))] = ((slot[x], -float(slot[v])),)
        return _Layout(domain, kinds, objs, labels, T, state_slot0=0.0, slot0_label="unused")

    if domain == "visitall":
        objs, labels, slot = slots_of(_SLOT_KINDS[domain])
        for c in objs:
            T[format_atom("at-robot", (c,))] = ((0, float(slot[c])),)
            T[format_atom("visited", (c,))] = ((slot[c], 1.0),)
        return _Layout(domain, kinds, objs, labels, T, state_object_default=0.0, slot0_label="robot cell")

    raise AssertionError(domain)  # pragma: no cover - canonical_domain guards this


def _kinds_from_file(domain: str, path: str | os.PathLike) -> tuple[dict[str, list[str]], ProblemText, str]:
    pt = read_problem(path)
    kind_atoms = [(t, o) for o, t in pt.objects.items() if t is not None]
    for a in pt.init:
        pred, args = split_atom(a)
        if len(args) == 1:
            kind_atoms.append((pred, args[0]))
    label = f"{pt.name!r} ({pt.path})"
    objects = pt.objects.keys() if pt.objects else {o for a in pt.init for o in split_atom(a)[1]}
    return _classify(domain, objects, kind_atoms, label), pt, label


def _kinds_from_atoms(domain: str, objects: Iterable[str] | Mapping[str, str | None] | None,
                      atoms: Iterable[str], problem: str) -> dict[str, list[str]]:
    parsed = [split_atom(a) for a in atoms if not a.lstrip().lower().startswith("(not")]
    kind_atoms = [(p, args[0]) for p, args in parsed if len(args) == 1]
    if isinstance(objects, Mapping):
        kind_atoms += [(t.lower(), o.lower()) for o, t in objects.items() if t is not None]
        names = [o.lower() for o in objects]
    elif objects is not None:
        names = [o.lower() for o in objects]
    else:
        names = []
    if not names:
        names = [o for _, args in parsed for o in args]
    return _classify(domain, names, kind_atoms, problem)


def _n_slots(domain: str, kinds: dict[str, list[str]]) -> int:
    return sum(len(kinds[k]) for k in _SLOT_KINDS[domain])


# ------------------------------------------------------------------------------------------------
# Public API
# ------------------------------------------------------------------------------------------------


class BoundFSF:
    """The FSF encoder of one problem: fixed slot mapping and atom table, built once by
    :meth:`FSFEncoder.bind`.

    Attributes:
        domain: canonical domain name. N: number of object slots of the encoding (vector length N+1).
        name: the problem (name and path when bound from a file).
        n_slots: slots this problem uses (``<= N``); slots ``n_slots+1..N`` are :data:`PAD`.
        slot_objects: object of slot ``i`` is ``slot_objects[i - 1]``.
        slot_labels: ``["<slot 0 meaning>", "kind:object", ...]`` (length ``n_slots + 1``).
        kinds: kind -> naturally sorted object names (including value kinds: rooms, locations, cities).
        problem_goal: goal literals of the problem file (``None`` when bound from atoms).
    """

    def __init__(self, domain: str, N: int, layout: _Layout, name: str, problem_goal: tuple[str, ...] | None):
        self.domain, self.N, self.name = domain, N, name
        self._layout = layout
        self._table = dict(layout.table)  # grows with resolved misses (ignored predicates etc.)
        self._relevant = _RELEVANT[domain]
        self.problem_goal = problem_goal
        self.n_slots = layout.n_slots
        self.slot_objects = list(layout.slot_objects)
        self.slot_labels = [layout.slot0_label] + list(layout.slot_labels)
        self.kinds = {k: list(v) for k, v in layout.kinds.items()}
        self.slot_of = {o: i + 1 for i, o in enumerate(self.slot_objects)}
        K = self.n_slots
        base = np.full(N + 1, PAD, dtype=np.float32)
        base[0] = layout.state_slot0
        base[1 : K + 1] = layout.state_object_default
        self._state_base = base
        self._state_required = bool(np.isnan(base).any())
        goal = np.full(N + 1, PAD, dtype=np.float32)
        goal[: K + 1] = DONT_CARE
        self._goal_base = goal

    @property
    def dim(self) -> int:
        """Vector length ``N + 1``."""
        return self.N + 1

    def __repr__(self) -> str:
        return f"BoundFSF({self.domain}, N={self.N}, problem={self.name}, {self._layout.summary()})"

    def _resolve(self, atom: str) -> tuple[tuple[int, float], ...]:
        """Table entry of an atom not found verbatim: normalise it; ignore unused predicates; raise
        for a used predicate over objects that are not in this problem."""
        pred, args = split_atom(atom)
        norm = format_atom(pred, args)
        entry = self._table.get(norm)
        if entry is None:
            if pred in self._relevant:
                raise ValueError(
                    f"FSF ({self.domain}): atom {atom!r} does not fit problem {self.name} "
                    f"(unknown object, wrong kind or arity); objects by kind: {self.kinds}"
                )
            entry = ()
        self._table[atom] = entry
        return entry

    def encode_states(self, states: Sequence[Iterable[str]]) -> np.ndarray:
        """Encode a batch of states.

        Args:
            states: ``M`` states, each an iterable of ground-atom strings (fluent atoms as in a
                trajectory; static atoms may be included and are ignored). pymimir ``State``
                objects are accepted too.

        Returns:
            ``(M, N+1)`` float32 array, row ``m`` = ``phi_FSF(states[m])`` (Appendix F, Table 5).

        Raises:
            TypeError: ``states`` is a single state (a list of strings); use :meth:`encode_state`.
            ValueError: an atom of an FSF predicate names an object that is not in the problem, or a
                state does not determine an object's slot (e.g. a block neither on the table, on a
                block nor held); the message names the state index and the object.
        """
        if isinstance(states, str) or (len(states) and isinstance(states[0], str)):
            raise TypeError("encode_states expects a list of states (lists of atoms); use encode_state for one")
        M = len(states)
        out = np.repeat(self._state_base[None, :], M, axis=0)
        rows: list[int] = []
        cols: list[int] = []
        vals: list[float] = []
        get, resolve = self._table.get, self._resolve
        for r, state in enumerate(states):
            if hasattr(state, "get_atoms"):  # pymimir State
                state = [str(a) for a in state.get_atoms(ignore_static=True)]
            for atom in state:
                entry = get(atom)
                if entry is None:
                    entry = resolve(atom)
                for c, v in entry:
                    rows.append(r)
                    cols.append(c)
                    vals.append(v)
        if rows:
            out[np.asarray(rows), np.asarray(cols)] = np.asarray(vals, dtype=np.float32)
        if self._state_required and M:
            bad = np.isnan(out)
            if bad.any():
                r, c = (int(x) for x in np.argwhere(bad)[0])
                what = self.slot_labels[c] if c else f"slot 0 ({self.slot_labels[0]})"
                raise ValueError(
                    f"FSF ({self.domain}): state {r} of problem {self.name} does not determine {what} "
                    f"(needs one of the atoms {sorted(self._relevant)} for it)"
                )
        return out

    def encode_state(self, atoms: Iterable[str]) -> np.ndarray:
        """One state -> ``(N+1,)`` float32 (see :meth:`encode_states`)."""
        return self.encode_states([list(atoms)])[0]

    def encode_goal(self, goal_atoms: Iterable[str] | None = None) -> np.ndarray:
        """Goal vector in the state layout: the value a goal atom fixes, :data:`DONT_CARE` (-10) for
        every variable (slot 0 included) the goal leaves open, :data:`PAD` (-99) beyond ``n_slots``.

        E.g. blocksworld ``(on a b)`` sets slot(a) = slot(b); gripper ``(at ball1 roomb)`` sets the
        ball's slot to room(roomb); visitall ``(visited c)`` sets slot(c) = 1. Negative literals
        ``(not ...)`` and predicates FSF does not use (``clear``, ``handempty``, ...) leave slots open.

        Args:
            goal_atoms: goal atom strings; ``None`` = the goal of the bound problem file.

        Returns:
            ``(N+1,)`` float32.

        Raises:
            ValueError: two goal atoms give one slot different values (an unsatisfiable goal), an
                atom names an unknown object, or ``None`` is passed for a problem bound from atoms.
        """
        if goal_atoms is None:
            if self.problem_goal is None:
                raise ValueError(f"FSF: problem {self.name} was bound from atoms; pass goal_atoms")
            goal_atoms = self.problem_goal
        out = self._goal_base.copy()
        set_by: dict[int, str] = {}
        for atom in goal_atoms:
            if atom.lstrip().lower().startswith("(not"):
                continue
            entry = self._table.get(atom)
            if entry is None:
                entry = self._resolve(atom)
            for c, v in entry:
                if c in set_by and out[c] != v:
                    raise ValueError(
                        f"FSF ({self.domain}): goal of problem {self.name}: {atom} and {set_by[c]} give "
                        f"slot {c} two values"
                    )
                out[c] = v
                set_by[c] = atom
        return out


class FSFEncoder:
    """FSF encoder of one domain with a fixed number of object slots ``N`` (Appendix F.1).

    Args:
        domain: harness domain name or alias (``blocks``/``blocksworld``, ``gripper``, ``logistics``,
            ``visitall``/``visitall-from-everywhere``, ...).
        N: number of object slots; vectors have length ``N + 1``. Fix it before training with
            :func:`fsf_size` / :func:`fsf_size_for_problemset` (max over all problems of the domain).

    Raises:
        ValueError: unknown domain (lists the supported ones) or ``N < 0``.
    """

    def __init__(self, domain: str, N: int):
        self.domain = canonical_domain(domain)
        if int(N) != N or N < 0:
            raise ValueError(f"FSF: N must be a non-negative integer, got {N!r}")
        self.N = int(N)
        self._bound: dict[Any, BoundFSF] = {}

    @property
    def dim(self) -> int:
        """Vector length ``N + 1``."""
        return self.N + 1

    def __repr__(self) -> str:
        return f"FSFEncoder({self.domain!r}, N={self.N})"

    def bind(self, problem: Any, name: str | None = None) -> BoundFSF:
        """The encoder of one problem (object ordering computed once, cached).

        Args:
            problem: one of
                * a problem file path (``str`` / ``PathLike``): objects, types and kind atoms are
                  read by :func:`read_problem` (no domain file needed; cached per path);
                * ``(objects, atoms)``: object names (or a mapping name -> PDDL type; ``None`` or
                  empty = every object named in ``atoms``) and static atoms such as a trajectory's
                  ``static`` list (kind atoms like ``(ball ball1)``; other atoms are ignored);
                * a pymimir ``Problem`` (objects and static atoms taken from it).
            name: problem name used in error messages (defaults to the file's problem name).

        Returns:
            :class:`BoundFSF`.

        Raises:
            ValueError: the problem has more slots than ``N`` (names the problem and ``N``), an
                object's kind cannot be told, or the file is missing/malformed.
        """
        goal: tuple[str, ...] | None = None
        if isinstance(problem, (str, os.PathLike)):
            kinds, pt, label = _kinds_from_file(self.domain, problem)
            label, goal = name or label, pt.goal
        elif hasattr(problem, "get_objects") and hasattr(problem, "get_initial_atoms"):
            objects = [str(o) for o in problem.get_objects()]
            atoms = [str(a) for a in problem.get_initial_atoms(ignore_fluent=True, ignore_derived=True)]
            label = name or (repr(str(problem.get_name())) if hasattr(problem, "get_name") else "<pymimir problem>")
            kinds = _kinds_from_atoms(self.domain, objects, atoms, label)
        elif isinstance(problem, (tuple, list)) and len(problem) == 2:
            objects, atoms = problem
            label = name or "<problem given as atoms>"
            kinds = _kinds_from_atoms(self.domain, objects, list(atoms), label)
        else:
            raise TypeError(
                "FSF bind: expected a problem file, (objects, static_atoms) or a pymimir Problem; "
                f"got {type(problem).__name__}"
            )
        n = _n_slots(self.domain, kinds)
        if n > self.N:
            summary = " + ".join(f"{len(kinds[k])} {k}" for k in _SLOT_KINDS[self.domain])
            raise ValueError(
                f"FSF ({self.domain}): problem {label} needs {n} object slots ({summary}) but the "
                f"encoding has N={self.N}; FSF cannot represent problems with more objects than N "
                "(state-centric paper, Appendix F.4)"
            )
        key = (label, tuple((k, tuple(v)) for k, v in kinds.items()), goal)
        bound = self._bound.get(key)
        if bound is None:
            if len(self._bound) >= 4096:
                self._bound.clear()
            bound = BoundFSF(self.domain, self.N, _build_layout(self.domain, kinds, label), label, goal)
            self._bound[key] = bound
        return bound

    def bind_trajectory(self, traj: Any, problem_root: str | os.PathLike | None = None) -> BoundFSF:
        """The encoder of a stored trajectory's problem.

        With ``problem_root`` (``data/problems``) the problem file ``problem_root/traj.problem_file``
        is read; without it, the objects are those named in ``traj.static``, ``traj.states[0]`` and
        ``traj.goal`` (pymimir writes an ``(object x)`` atom for every object into ``static``) and
        kinds come from the kind atoms in ``traj.static``. Both give the same slot mapping.
        """
        if canonical_domain(traj.domain) != self.domain:
            raise ValueError(f"FSF: trajectory of domain {traj.domain!r} given to the {self.domain} encoder")
        if problem_root is not None:
            return self.bind(Path(problem_root) / traj.problem_file)
        atoms = list(traj.static) + list(traj.states[0] if traj.states else []) + \
            [g for g in traj.goal if not g.lstrip().lower().startswith("(not")]
        return self.bind((None, atoms), name=f"{traj.problem!r} ({traj.problem_file})")

    def encode_trajectory(self, traj: Any, problem_root: str | os.PathLike | None = None
                          ) -> tuple[np.ndarray, np.ndarray]:
        """``(states (T+1, N+1), goal (N+1,))`` float32 of a :class:`planarena.core.trajectories.Trajectory`.

        Raises:
            ValueError: as :meth:`bind` and :meth:`BoundFSF.encode_states`, or the trajectory is of
                another domain.
        """
        bound = self.bind_trajectory(traj, problem_root)
        return bound.encode_states(traj.states), bound.encode_goal(traj.goal)


def encode_trajectory(traj: Any, N: int, problem_root: str | os.PathLike | None = None
                      ) -> tuple[np.ndarray, np.ndarray]:
    """Convenience: ``FSFEncoder(traj.domain, N).encode_trajectory(traj, problem_root)``."""
    return FSFEncoder(traj.domain, N).encode_trajectory(traj, problem_root)


def fsf_size(domain: str, problem_files: Iterable[str | os.PathLike]) -> int:
    """``N`` for a problem set: the maximum number of FSF object slots over ``problem_files``
    (Appendix F.1, "maximum number of objects across all problems in the domain"; slots are
    blocks / grippers + balls / packages + trucks + airplanes / cells).

    Reads only object names and kinds (cheap reader, cached per file).

    Raises:
        ValueError: unknown domain, no problem files, or a file that cannot be read (names it).
    """
    dom = canonical_domain(domain)
    files = list(problem_files)
    if not files:
        raise ValueError(f"FSF ({dom}): fsf_size needs at least one problem file")
    return max(_n_slots(dom, _kinds_from_file(dom, f)[0]) for f in files)


def fsf_size_for_problemset(problems: Any, domain: str) -> int:
    """``N`` over every problem of ``domain`` (all splits) in a problem set: a
    :class:`planarena.core.problemset.ProblemSet` or its root (``data/problems``, with ``manifest.jsonl``).

    This is how the harness fixes ``N`` before training (test problems contribute their object
    counts only).

    Raises:
        ValueError: the manifest has no problem of ``domain`` (or as :func:`fsf_size`).
        FileNotFoundError: no manifest.
    """
    from planarena.core.problemset import ProblemSet

    ps = problems if isinstance(problems, ProblemSet) else ProblemSet(problems)
    entries = ps.select(domain=domain)
    if not entries:
        raise ValueError(f"FSF: {ps.root}/manifest.jsonl has no problems of domain {domain!r}")
    return fsf_size(domain, [ps.problem_file(e) for e in entries])
