"""A cheap, sound lower bound on the length of any plan of a PDDL problem, from the PDDL alone.

Every goal atom that is false in the initial state must be added by some action of the plan, and one
ground action adds at most as many of them as its schema has add effects over the goal's predicates.
So with ``u`` goal atoms false initially and ``k`` the most add effects over the predicates of those
atoms in any one schema, every plan has at least ``ceil(u / k)`` steps. In VisitAll (``move`` adds
one ``visited`` atom) this is the number of goal cells not visited yet.

The bound is given up (``None``) where it would not be sound or the PDDL cannot be read:

* conditional (``when``) or universally quantified (``forall``) effects, or any other effect that
  is not an atom, a negated atom or a numeric update (one action could add many goal atoms);
* derived predicates (``:derived``: a goal atom could become true without being added);
* a goal that is not a conjunction of positive atoms (negative literals, ``or``, quantifiers,
  equality, numeric comparisons);
* a file that does not parse, or is missing;
* unsatisfied goal atoms that no schema adds (the problem is unsolvable; no finite statement).

Numeric updates such as ``(increase (total-cost) 1)`` are allowed: they add no atom, and the bound
counts steps, not cost. The domain is read once per file with the ``pddl`` package
(:mod:`planarena.core.pddl_parsers`, :func:`planarena.core.pddl_semantics.parse`), the problem with
the s-expression reader :func:`planarena.core.pddl.read_problem_text`; bounds are cached per
(domain file, problem file), keyed by path, modification time and size. Nothing here imports above
``core``.
"""

from __future__ import annotations

import functools
import math
import os
from pathlib import Path

from planarena.core.pddl import PDDLError, read_problem_text, split_atom


def _stat_key(path: str | os.PathLike) -> tuple[str, int, int] | None:
    p = str(path)
    try:
        st = os.stat(p)
    except OSError:
        return None
    return p, st.st_mtime_ns, st.st_size


def _effect_adds(effect, out: list[str]) -> bool:
    """Append the predicate of every add effect of ``effect`` to ``out``; False when the effect
    holds a construct the bound is not sound for (``when``, ``forall``, anything unknown)."""
    from pddl.logic.base import And, Not, Or
    from pddl.logic.functions import Assign, Decrease, Increase, ScaleDown, ScaleUp
    from pddl.logic.predicates import Predicate

    if effect is None or (isinstance(effect, Or) and not effect.operands):  # ``()``: no effect
        return True
    if isinstance(effect, And):
        return all(_effect_adds(e, out) for e in effect.operands)
    if isinstance(effect, Predicate):
        out.append(str(effect.name).lower())
        return True
    if isinstance(effect, Not):
        return isinstance(effect.argument, Predicate)
    if isinstance(effect, (Increase, Decrease, Assign, ScaleUp, ScaleDown)):
        return True
    return False  # When, Forall, or a construct this bound does not know


@functools.lru_cache(maxsize=256)
def _schema_adds(path: str, _mtime_ns: int, _size: int) -> tuple[tuple[str, ...], ...] | None:
    """Per action schema of the domain file, the predicates of its add effects (one entry per
    add effect); ``None`` when the bound is not sound for the domain or it does not parse."""
    from planarena.core.pddl_parsers import domain_parser
    from planarena.core.pddl_semantics import parse

    try:
        domain = parse(domain_parser(), Path(path).read_text(encoding="utf-8"), path)
    except (OSError, ValueError, UnicodeDecodeError):
        return None
    if domain.derived_predicates:
        return None
    schemas = []
    for action in domain.actions:
        adds: list[str] = []
        if not _effect_adds(action.effect, adds):
            return None
        schemas.append(tuple(adds))
    return tuple(schemas)


@functools.lru_cache(maxsize=65536)
def _bound(domain_key: tuple[str, int, int], problem_key: tuple[str, int, int]) -> int | None:
    schemas = _schema_adds(*domain_key)
    if schemas is None:
        return None
    try:
        problem = read_problem_text(problem_key[0])
    except (PDDLError, OSError, UnicodeDecodeError):
        return None
    init = set(problem.init)
    unsatisfied = set()
    for literal in problem.goal:
        if literal.startswith("(not "):
            return None
        if split_atom(literal)[0] == "=":
            return None
        if literal not in init:
            unsatisfied.add(literal)
    if not unsatisfied:
        return 0
    predicates = {split_atom(a)[0] for a in unsatisfied}
    most = max((sum(p in predicates for p in adds) for adds in schemas), default=0)
    if most == 0:
        return None
    return math.ceil(len(unsatisfied) / most)


def plan_length_lower_bound(domain_file: str | os.PathLike, problem_file: str | os.PathLike) -> int | None:
    """A sound lower bound on the number of steps of any plan of ``problem_file``, or ``None``.

    ``ceil(u / k)``: ``u`` the goal atoms false in the initial state, ``k`` the largest number of
    add effects over their predicates in any one action schema of ``domain_file`` (one ground
    action adds at most ``k`` of them). 0 when the goal holds initially. ``None`` where the bound
    would not be sound or cannot be computed (see the module docstring: conditional or quantified
    effects, derived predicates, a goal other than a conjunction of atoms, unreadable files, goal
    atoms no action adds). Never raises; cached per (domain file, problem file, their
    modification times and sizes).
    """
    domain_key, problem_key = _stat_key(domain_file), _stat_key(problem_file)
    if domain_key is None or problem_key is None:
        return None
    return _bound(domain_key, problem_key)
