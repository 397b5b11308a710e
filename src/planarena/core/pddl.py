"""The one PDDL layer: pymimir parsing with clear errors, cached grounding, plan replay, atoms as text.

pymimir (Drexler et al., "Mimir: A Generalized Planning Framework") parses, grounds lazily and
generates successors. Every parsed problem is cached per (domain file, problem file) so that no
stage re-parses or re-grounds a problem inside a loop.

Two readers work on the text alone, where pymimir cannot serve: :func:`read_problem_text` reads the
objects, initial atoms and goal literals of a problem file without its domain file (the FSF encoding
binds a problem by its file alone) and :func:`count_objects` counts the declared objects of a
problem text for the manifest. Atom and action strings are normalised and split by
:func:`normalise_action` and :func:`split_atom`.
"""

from __future__ import annotations

import functools
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pymimir


class PDDLError(ValueError):
    """A PDDL file does not parse, or a plan does not apply. The message starts with the file path."""


def parse_domain(domain_file: str | Path) -> "pymimir.Domain":
    """Parse a domain file, uncached (for files that may be rewritten in place; else :func:`load_domain`).

    Raises:
        PDDLError: the file is missing or malformed (message names the file and the parser's reason).
    """
    if not Path(domain_file).exists():
        raise PDDLError(f"{domain_file}: domain file not found")
    try:
        return pymimir.Domain(str(domain_file))
    except RuntimeError as exc:
        raise PDDLError(f"{domain_file}: malformed domain: {str(exc).strip()}") from exc


@functools.lru_cache(maxsize=64)
def load_domain(domain_file: str) -> "pymimir.Domain":
    """Parse a domain file (cached by path; :func:`parse_domain` once per path).

    Raises:
        PDDLError: the file is missing or malformed (message names the file and the parser's reason).
    """
    return parse_domain(domain_file)


@functools.lru_cache(maxsize=256)
def load_problem(domain_file: str, problem_file: str) -> "pymimir.Problem":
    """Parse a problem against its domain (cached by both paths; grounding is lazy in pymimir).

    Raises:
        PDDLError: either file is missing or malformed (message names the file).
    """
    return parse_problem_of(load_domain(str(domain_file)), problem_file)


def parse_problem_of(domain: "pymimir.Domain", problem_file: str | Path) -> "pymimir.Problem":
    """Parse a problem file against an already parsed domain (uncached).

    Raises:
        PDDLError: the file is missing or malformed (message names the file).
    """
    if not Path(problem_file).exists():
        raise PDDLError(f"{problem_file}: problem file not found")
    try:
        return pymimir.Problem(domain, str(problem_file))
    except RuntimeError as exc:
        raise PDDLError(f"{problem_file}: malformed problem: {str(exc).strip()}") from exc


def parse_check(domain_file: str | Path, problem_file: str | Path) -> None:
    """Parse both files and raise :class:`PDDLError` naming the bad one; returns nothing on success."""
    load_problem(str(domain_file), str(problem_file))


_OBJECTS_RE = re.compile(r"\(:objects(.*?)\)", re.IGNORECASE | re.DOTALL)


def count_objects(problem_text: str) -> int:
    """Number of objects declared in ``(:objects ...)`` (type annotations ``- t`` not counted)."""
    m = _OBJECTS_RE.search(problem_text)
    if not m:
        return 0
    body = re.sub(r";[^\n]*", " ", m.group(1))
    tokens = body.split()
    n, skip = 0, False
    for tok in tokens:
        if skip:
            skip = False
            continue
        if tok == "-":
            skip = True
            continue
        n += 1
    return n


# ------------------------------------------------------------------------------------------------
# Problem text without its domain: objects, init atoms, conjunctive goal (no grounding)
# ------------------------------------------------------------------------------------------------


def format_atom(name: str, args: tuple[str, ...] | list[str]) -> str:
    """``("on", ("a", "b"))`` -> ``"(on a b)"`` (the text form of atoms and actions; no case change)."""
    return "(" + " ".join((name, *args)) + ")"


_TOKEN = re.compile(r"\(|\)|[^\s()]+")


@dataclass(frozen=True)
class ProblemText:
    """What FSF needs from a problem file.

    ``objects`` maps each declared object to its PDDL type (``None`` if untyped); ``init`` holds the
    positive initial atoms; ``goal`` the goal literals of a conjunctive goal (positive atoms as
    ``"(p a b)"``, negative ones as ``"(not (p a b))"``). All names are lower case.
    """

    path: str
    name: str
    objects: dict[str, str | None]
    init: tuple[str, ...]
    goal: tuple[str, ...]


def _sexp(text: str, path: str) -> list:
    text = re.sub(r";[^\n]*", " ", text).lower()
    stack: list[list] = [[]]
    for tok in _TOKEN.findall(text):
        if tok == "(":
            stack.append([])
        elif tok == ")":
            if len(stack) == 1:
                raise PDDLError(f"{path}: unbalanced ')' in PDDL problem")
            inner = stack.pop()
            stack[-1].append(inner)
        else:
            stack[-1].append(tok)
    if len(stack) != 1:
        raise PDDLError(f"{path}: unbalanced '(' in PDDL problem")
    return stack[0]


def _typed_list(items: list, path: str) -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    pending: list[str] = []
    i = 0
    while i < len(items):
        tok = items[i]
        if tok == "-":
            if i + 1 >= len(items):
                raise PDDLError(f"{path}: ':objects' ends with '-' and no type")
            typ = items[i + 1]
            typ = typ if isinstance(typ, str) else " ".join(t for t in typ if isinstance(t, str))
            for o in pending:
                out[o] = typ
            pending = []
            i += 2
            continue
        if not isinstance(tok, str):
            raise PDDLError(f"{path}: unexpected list in ':objects'")
        pending.append(tok)
        i += 1
    for o in pending:
        out[o] = None
    return out


def _goal_literals(node: Any, path: str, out: list[str]) -> None:
    if not isinstance(node, list) or not node:
        raise PDDLError(f"{path}: malformed goal {node!r}")
    head = node[0]
    if head == "and":
        for child in node[1:]:
            _goal_literals(child, path, out)
    elif head == "not":
        inner = node[1] if len(node) == 2 and isinstance(node[1], list) else None
        if inner is None or not all(isinstance(t, str) for t in inner):
            raise PDDLError(f"{path}: FSF supports conjunctive goals of literals only; got (not ...) over a formula")
        out.append(f"(not {format_atom(inner[0], inner[1:])})")
    elif isinstance(head, str) and all(isinstance(t, str) for t in node):
        out.append(format_atom(head, node[1:]))
    else:
        raise PDDLError(f"{path}: FSF supports conjunctive goals of literals only; found {head!r}")


@functools.lru_cache(maxsize=4096)
def _read_problem_cached(path: str, _mtime_ns: int, _size: int) -> ProblemText:
    tree = _sexp(Path(path).read_text(), path)
    define = next((x for x in tree if isinstance(x, list) and x and x[0] == "define"), None)
    if define is None:
        raise PDDLError(f"{path}: no (define (problem ...)) in file")
    name, objects, init, goal = Path(path).stem, {}, [], []
    for part in define[1:]:
        if not isinstance(part, list) or not part:
            continue
        head = part[0]
        if head == "problem" and len(part) > 1 and isinstance(part[1], str):
            name = part[1]
        elif head == ":objects":
            objects.update(_typed_list(part[1:], path))
        elif head == ":init":
            for a in part[1:]:
                if isinstance(a, list) and a and a[0] not in ("not", "=") and all(isinstance(t, str) for t in a):
                    init.append(format_atom(a[0], a[1:]))
        elif head == ":goal" and len(part) > 1:
            _goal_literals(part[1], path, goal)
    return ProblemText(path=path, name=name, objects=objects, init=tuple(init), goal=tuple(goal))


def read_problem_text(path: str | os.PathLike) -> ProblemText:
    """Objects (with types), initial atoms and goal literals of a PDDL problem file.

    A small s-expression reader (no domain file, no grounding; used by the FSF encoding,
    :mod:`planarena.features.fsf`); cached per (path, mtime, size). ``:constants`` of the domain are
    not read (none of the FSF domains has any). Initial atoms are the positive ground atoms of
    ``:init`` in file order (``=`` fluent assignments skipped); goal literals are in file order.

    Raises:
        PDDLError: (a ``ValueError``) the file is missing or malformed, or its goal is not a
            conjunction of literals (the message starts with the path).
    """
    p = str(path)
    try:
        st = os.stat(p)
    except FileNotFoundError:
        raise PDDLError(f"{p}: problem file not found") from None
    return _read_problem_cached(p, st.st_mtime_ns, st.st_size)


def atoms_of(state: "pymimir.State") -> list[str]:
    """Sorted fluent and derived ground atoms of a state, as ``"(pred o1 o2)"`` strings."""
    return sorted(str(a) for a in state.get_atoms(ignore_static=True))


def atom_indices(state: "pymimir.State") -> tuple[list[int], list[int]]:
    """The state's ``(fluent, derived)`` ground atoms as indices into the problem's pymimir
    repositories: no strings, about 2 us a state against 15 us for :func:`atoms_of`. Turn an
    index into text once with :func:`atom_text`.

    Reads the wrapper's underlying state (pymimir 0.13 exposes the index lists only there).
    """
    adv = state._advanced_state
    return list(adv.get_fluent_atoms()), list(adv.get_derived_atoms())


def atom_text(problem: "pymimir.Problem", index: int, derived: bool = False) -> str:
    """``"(pred o1 o2)"`` of a fluent (or derived) atom index of :func:`atom_indices` (the text
    :func:`atoms_of` gives)."""
    repos = problem._advanced_problem.get_repositories()
    get = repos.get_derived_ground_atoms_from_indices if derived else repos.get_fluent_ground_atoms_from_indices
    return str(pymimir.GroundAtom(get([int(index)])[0]))


def static_atoms(problem: "pymimir.Problem") -> list[str]:
    """Sorted static ground atoms of a problem."""
    return sorted(str(a) for a in problem.get_initial_atoms(ignore_fluent=True, ignore_derived=True))


def goal_atoms(problem: "pymimir.Problem") -> list[str]:
    """Sorted positive goal atoms (negative goal literals are rendered as ``(not (p ...))``)."""
    out = []
    for lit in problem.get_goal_condition().get_literals():
        atom = str(lit.get_atom())
        out.append(atom if lit.get_polarity() else f"(not {atom})")
    return sorted(out)


def normalise_action(text: str) -> str:
    """``"(Pick-Up B1)"`` / ``"pick-up b1"`` -> ``"(pick-up b1)"`` (lower case, one space)."""
    t = text.strip().lower()
    if t.startswith("(") and t.endswith(")"):
        t = t[1:-1]
    return "(" + " ".join(t.split()) + ")"


def split_atom(text: str) -> tuple[str, tuple[str, ...]]:
    """``"(On A B)"`` / ``"on a b"`` -> ``("on", ("a", "b"))``: name and arguments, lower case
    (the tokens of :func:`normalise_action`).

    Raises:
        PDDLError: the string has no name (empty or ``"()"``).
    """
    toks = normalise_action(text)[1:-1].split()
    if not toks:
        raise PDDLError(f"empty atom {text!r}: no predicate or action name")
    return toks[0], tuple(toks[1:])


def read_plan_file(path: str | Path) -> list[str]:
    """Actions of a plan file (one ``(action args)`` per line; ``;`` comments ignored)."""
    actions = []
    for line in Path(path).read_text().splitlines():
        line = line.split(";", 1)[0].strip()
        if line:
            actions.append(normalise_action(line))
    return actions


def replay(problem: "pymimir.Problem", actions: list[str], source: str = "plan"):
    """Apply ``actions`` from the initial state and return (states, ground_actions).

    ``states`` has ``len(actions) + 1`` pymimir states. Matching is by the printed ground action.

    Raises:
        PDDLError: an action is not applicable in the state reached (names ``source``, the step and
            the action).
    """
    state = problem.get_initial_state()
    states = [state]
    ground = []
    for t, act in enumerate(actions):
        wanted = normalise_action(act)
        match = None
        for ga in state.generate_applicable_actions():
            if str(ga) == wanted:
                match = ga
                break
        if match is None:
            raise PDDLError(f"{source}: step {t}: action {wanted} is not applicable")
        state = match.apply(state)
        states.append(state)
        ground.append(match)
    return states, ground
