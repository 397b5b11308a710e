"""PDDL access through pymimir: parsing with clear errors, cached grounding, plan replay.

pymimir (Drexler et al., "Mimir: A Generalized Planning Framework") parses, grounds lazily and
generates successors. Every parsed problem is cached per (domain file, problem file) so that no
stage re-parses or re-grounds a problem inside a loop.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

import pymimir


class PDDLError(ValueError):
    """A PDDL file does not parse, or a plan does not apply. The message starts with the file path."""


@functools.lru_cache(maxsize=64)
def load_domain(domain_file: str) -> "pymimir.Domain":
    """Parse a domain file (cached by path).

    Raises:
        PDDLError: the file is missing or malformed (message names the file and the parser's reason).
    """
    if not Path(domain_file).exists():
        raise PDDLError(f"{domain_file}: domain file not found")
    try:
        return pymimir.Domain(str(domain_file))
    except RuntimeError as exc:
        raise PDDLError(f"{domain_file}: malformed domain: {str(exc).strip()}") from exc


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


def atoms_of(state: "pymimir.State") -> list[str]:
    """Sorted fluent and derived ground atoms of a state, as ``"(pred o1 o2)"`` strings."""
    return sorted(str(a) for a in state.get_atoms(ignore_static=True))


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
