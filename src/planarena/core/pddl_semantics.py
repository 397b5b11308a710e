"""PDDL plan-execution semantics on the AST of the ``pddl`` package (AI-Planning/pddl).

An independent reading of a task for plan validation (:mod:`planarena.core.validation`): neither
pymimir (the methods' successor generator) nor any method code is used. The semantics are those of
PDDL 2.1 for sequential plans (Fox & Long 2003, "PDDL2.1: An Extension to PDDL for Expressing
Temporal Planning Domains", JAIR 20, sections 4-5):

- a state is a set of ground atoms (closed world) plus the values of the numeric fluents;
- an action applies when its precondition holds in the state (``and or not imply exists forall``,
  equality on objects, numeric comparisons); quantifiers range over the objects of the variable's
  type (problem objects and domain constants; a type includes its subtypes; ``either`` unions);
- its effect is computed wholly in the state before it (``when`` conditions, ``forall``, the values
  of numeric expressions), then the deletes are applied before the adds (an atom both deleted and
  added stays true) and the numeric updates (``increase decrease assign scale-up scale-down``);
- the plan cost is the problem's ``:metric`` expression at the end, or the number of steps when the
  problem has no metric (unit cost).

Names are case-insensitive in PDDL: files are read lower-cased. Atoms are tuples ``("on", "a", "b")``.
Derived predicates (``:derived``) are not supported (the loader rejects them). ``total-time`` in a
``:metric`` is the number of steps. Limits of the ``pddl`` parser (0.4.1): goals are conjunctions of
literals and comparisons (no ``or``, ``forall``, ``exists``), and it merges identical operands of an
``and``, so an effect that repeats the same ``(increase (total-cost) 1)`` counts it once.
"""

from __future__ import annotations

import itertools
import math
import re
from dataclasses import dataclass, field

from pddl.logic.base import And, ExistsCondition, ForallCondition, Imply, Not, Or
from pddl.logic.effects import Forall, When
from pddl.logic.functions import (Assign, Decrease, Divide, GreaterEqualThan, GreaterThan, Increase,
                                  LesserEqualThan, LesserThan, Minus, NumericFunction, NumericValue,
                                  Plus, ScaleDown, ScaleUp, Times)
from pddl.logic.functions import EqualTo as NumEqual
from pddl.logic.predicates import EqualTo, Predicate
from pddl.logic.terms import Variable

Atom = tuple[str, ...]
_COMPARE = {NumEqual: float.__eq__, LesserThan: float.__lt__, LesserEqualThan: float.__le__,
            GreaterThan: float.__gt__, GreaterEqualThan: float.__ge__}
_UPDATE = {Increase: lambda old, v: old + v, Decrease: lambda old, v: old - v, Assign: lambda old, v: v,
           ScaleUp: lambda old, v: old * v, ScaleDown: lambda old, v: old / v}


class Unsupported(ValueError):
    """A construct of the domain or problem that these semantics do not execute (named in the
    message); the validator then reports the plan as not validated, with that reason."""


class Undefined(ValueError):
    """A numeric fluent is read that has no value (PDDL 2.1: the action is then not applicable)."""


@dataclass
class Task:
    """A parsed domain + problem, ready to execute plans.

    ``actions``: action name -> ``pddl.action.Action``; ``objects``: object or constant -> its
    type; ``supertypes``: type -> the set of it and its ancestors (``object`` included);
    ``init``: the initial atoms; ``fluents``: numeric fluent ``(name, *args)`` -> initial value;
    ``goal``: a ``pddl`` formula (None: empty goal); ``metric``: the ``:metric`` expression or None.
    """

    actions: dict
    objects: dict[str, str]
    supertypes: dict[str, frozenset[str]]
    init: frozenset[Atom]
    fluents: dict[Atom, float]
    goal: object
    metric: object
    _typed: dict = field(default_factory=dict)

    # ----------------------------------------------------------------------------- objects, types

    def is_of(self, obj: str, types) -> bool:
        """Whether ``obj`` belongs to one of ``types`` (a set of type names; empty: any object)."""
        return not types or bool(self.supertypes[self.objects[obj]] & types)

    def objects_of(self, types) -> list[str]:
        """The objects (and constants) of one of ``types``, sorted."""
        key = frozenset(types)
        if key not in self._typed:
            self._typed[key] = sorted(o for o in self.objects if self.is_of(o, key))
        return self._typed[key]

    # ------------------------------------------------------------------------------------ formulas

    def holds(self, f, state: set[Atom], fluents: dict[Atom, float], b: dict) -> bool:
        """Whether formula ``f`` holds in (``state``, ``fluents``) under binding ``b`` (variable
        name -> object). Raises :class:`Undefined` for a numeric fluent without a value."""
        if isinstance(f, Predicate):
            return ground(f, b) in state
        if isinstance(f, And):
            return all(self.holds(g, state, fluents, b) for g in f.operands)
        if isinstance(f, Not):
            return not self.holds(f.argument, state, fluents, b)
        if isinstance(f, Or):  # ``()``, an empty precondition or goal, parses as Or(): no condition
            return not f.operands or any(self.holds(g, state, fluents, b) for g in f.operands)
        if isinstance(f, Imply):
            *premises, conclusion = f.operands
            return (not all(self.holds(g, state, fluents, b) for g in premises)
                    or self.holds(conclusion, state, fluents, b))
        if isinstance(f, EqualTo):
            return term(f.left, b) == term(f.right, b)
        if isinstance(f, (ForallCondition, ExistsCondition)):
            test = all if isinstance(f, ForallCondition) else any
            return test(self.holds(f.condition, state, fluents, b2) for b2 in self.bindings(f.variables, b))
        if type(f) in _COMPARE:
            left, right = (self.value(x, fluents, b) for x in f.operands)
            return _COMPARE[type(f)](left, right)
        raise Unsupported(f"condition {f}")

    def bindings(self, variables, b: dict):
        """``b`` extended by every assignment of ``variables`` to objects of their types."""
        variables = sorted(variables, key=lambda v: v.name)
        for objs in itertools.product(*(self.objects_of(v.type_tags) for v in variables)):
            yield {**b, **{v.name: o for v, o in zip(variables, objs)}}

    def value(self, x, fluents: dict[Atom, float], b: dict) -> float:
        """The value of numeric expression ``x``; raises :class:`Undefined` for a fluent without one."""
        if isinstance(x, NumericValue):
            return float(x.value)
        if isinstance(x, NumericFunction):
            key = ground(x, b)
            if key not in fluents:
                raise Undefined(f"numeric fluent {show_atom(key)} has no value")
            return fluents[key]
        args = [self.value(y, fluents, b) for y in x.operands]
        if isinstance(x, Minus):
            return -args[0] if len(args) == 1 else args[0] - sum(args[1:])
        if isinstance(x, Plus):
            return sum(args)
        if isinstance(x, Times):
            return math.prod(args)
        if isinstance(x, Divide):
            return args[0] / args[1]
        raise Unsupported(f"numeric expression {x}")

    # ------------------------------------------------------------------------------------- effects

    def effects(self, e, state, fluents, b, adds: list, dels: list, updates: list) -> None:
        """Collect the ground adds, deletes and numeric updates ``(op, fluent, value)`` of effect
        ``e``, every condition and value read in the state before the action."""
        if e is None or (isinstance(e, Or) and not e.operands):  # ``()``: no effect
            return
        if isinstance(e, Predicate):
            adds.append(ground(e, b))
        elif isinstance(e, Not):
            dels.append(ground(e.argument, b))
        elif isinstance(e, And):
            for g in e.operands:
                self.effects(g, state, fluents, b, adds, dels, updates)
        elif isinstance(e, When):
            if self.holds(e.condition, state, fluents, b):
                self.effects(e.effect, state, fluents, b, adds, dels, updates)
        elif isinstance(e, Forall):
            for b2 in self.bindings(e.variables, b):
                self.effects(e.effect, state, fluents, b2, adds, dels, updates)
        elif type(e) in _UPDATE:
            target, amount = e.operands
            updates.append((_UPDATE[type(e)], ground(target, b), self.value(amount, fluents, b)))
        else:
            raise Unsupported(f"effect {e}")

    def apply(self, action, b: dict, state: set[Atom], fluents: dict[Atom, float]) -> None:
        """Apply ``action`` under binding ``b`` to ``state`` and ``fluents`` in place (deletes
        before adds; updates in effect order). Its precondition is not checked here."""
        adds, dels, updates = [], [], []
        self.effects(action.effect, state, fluents, b, adds, dels, updates)
        state.difference_update(dels)
        state.update(adds)
        for op, key, amount in updates:
            if key not in fluents and op is not _UPDATE[Assign]:
                raise Undefined(f"numeric fluent {show_atom(key)} has no value")
            fluents[key] = op(fluents.get(key, 0.0), amount)


def term(t, b: dict) -> str:
    """An argument's object: the binding of a variable, else the constant's name (the ``pddl``
    package reads a constant inside a numeric fluent, ``(w c1)``, as a variable named ``c1``)."""
    return b.get(t.name, str(t.name)) if isinstance(t, Variable) else str(t.name)


def ground(p, b: dict) -> Atom:
    """``(name, *objects)`` of an atom or numeric fluent ``p`` under binding ``b``."""
    return (str(p.name), *(term(t, b) for t in p.terms))


def show_atom(atom: Atom) -> str:
    """``("on", "a", "b")`` -> ``"(on a b)"``."""
    return "(" + " ".join(atom) + ")"


def show(f, b: dict) -> str:
    """Formula ``f`` as PDDL text with its variables replaced by their objects in ``b``; the same
    text in every process (quantified variables sorted by name, ``either`` types sorted), since it
    goes into records that must not depend on Python's hash seed."""
    if isinstance(f, (ForallCondition, ExistsCondition)):
        word = "forall" if isinstance(f, ForallCondition) else "exists"
        params = " ".join(f"?{v.name}" + (f" - {_types(v.type_tags)}" if v.type_tags else "")
                          for v in sorted(f.variables, key=lambda v: v.name))
        return f"({word} ({params}) {show(f.condition, b)})"
    if isinstance(f, (And, Or, Imply)):
        word = {And: "and", Or: "or", Imply: "imply"}[type(f)]
        return f"({word} {' '.join(show(g, b) for g in f.operands)})"
    if isinstance(f, Not):
        return f"(not {show(f.argument, b)})"
    return re.sub(r"\?[^\s()]+", lambda m: b.get(m.group(0)[1:], m.group(0)), str(f))


def _types(tags) -> str:
    names = sorted(str(t) for t in tags)
    return names[0] if len(names) == 1 else f"(either {' '.join(names)})"


def conjuncts(f) -> list:
    """The top-level conjuncts of ``f`` (``[]`` for None)."""
    return [] if f is None else list(f.operands) if isinstance(f, And) else [f]


# ----------------------------------------------------------------------------------------- loading


_IMPLIED = {":adl": ":typing", ":action-costs": ":numeric-fluents"}


def parse(parser, text: str, path: str):
    """``parser(text)`` (:func:`planarena.core.pddl_parsers.domain_parser` or ``problem_parser``)
    on the lower-cased text.

    Two requirements the pddl package (0.4.1) does not infer are added to a domain's
    ``(:requirements ...)``: ``:typing`` where ``:adl`` is declared (``:adl`` includes it, PDDL 1.2)
    and ``:numeric-fluents`` where ``:action-costs`` is (IPC 2008 action costs allow numeric
    functions such as ``(road-length ?a ?b)`` in the cost increases).

    Raises:
        ValueError: it does not parse (``<path>: the pddl parser could not parse it: <reason>``).
    """
    text = text.lower()
    for declared, implied in _IMPLIED.items():
        if re.search(rf"\(:requirements[^)]*{declared}\b", text) and not re.search(rf"{implied}\b", text):
            text = text.replace("(:requirements", f"(:requirements {implied}", 1)
    try:
        return parser(text)
    except Exception as exc:  # noqa: BLE001 - lark and pddl raise many exception types
        exc = getattr(exc, "orig_exc", exc)  # lark wraps the pddl package's own errors
        lines = [ln for ln in str(exc).strip().splitlines() if ln.strip()]
        raise ValueError(f"{path}: the pddl parser could not parse it: {lines[0] if lines else type(exc).__name__}") \
            from None


def build_task(domain, problem, domain_file: str, problem_file: str) -> Task:
    """A :class:`Task` from parsed ``pddl`` Domain and Problem objects (:func:`parse`).

    Raises:
        ValueError: the problem names another domain, an undeclared object, type or predicate, or
            an atom of the wrong arity; or the domain has derived predicates. The message starts
            with the bad file's path.
    """
    if domain.derived_predicates:
        raise ValueError(f"{domain_file}: derived predicates (:derived) are not supported by the validator")
    if str(problem.domain_name) != str(domain.name):
        raise ValueError(f"{problem_file}: the problem is for domain {str(problem.domain_name)!r}, "
                         f"not {str(domain.name)!r} ({domain_file})")
    parents = {str(t): str(p) if p else "object" for t, p in domain.types.items()}
    supertypes = {"object": frozenset({"object"})}
    for t in {*parents, *parents.values()}:
        chain, x = {t}, t
        while x in parents and parents[x] not in chain:
            x = parents[x]
            chain.add(x)
        supertypes[t] = frozenset(chain | {"object"})
    objects = {}
    for c in [*domain.constants, *problem.objects]:
        typ = str(c.type_tag) if c.type_tag else "object"
        if typ not in supertypes:
            where = domain_file if c in domain.constants else problem_file
            raise ValueError(f"{where}: object {str(c.name)!r} has undeclared type {typ!r}")
        objects[str(c.name)] = typ
    arity = {str(p.name): p.arity for p in domain.predicates}
    arity.update({str(f.name): f.arity for f in domain.functions})
    init, fluents = set(), {}
    for fact in problem.init:
        if isinstance(fact, NumEqual):
            fl, val = fact.operands
            fluents[_checked(ground(fl, {}), arity, objects, problem_file, "the initial state")] = float(val.value)
        elif isinstance(fact, Predicate):
            init.add(_checked(ground(fact, {}), arity, objects, problem_file, "the initial state"))
        # negative literals in :init are false anyway (closed world)
    for f in _atoms_in(problem.goal):
        _checked(ground(f, {}), arity, objects, problem_file, "the goal")
    metric = problem.metric.expression if problem.metric is not None else None
    actions = {str(a.name): a for a in domain.actions}
    return Task(actions, objects, supertypes, frozenset(init), fluents, problem.goal, metric)


def _atoms_in(f):
    """The ground atoms (predicates without variables) in formula ``f``."""
    if isinstance(f, Predicate):
        if not any(isinstance(t, Variable) for t in f.terms):
            yield f
        return
    for sub in [*getattr(f, "operands", ()), *(getattr(f, a) for a in ("argument", "condition") if hasattr(f, a))]:
        yield from _atoms_in(sub)


def _checked(atom: Atom, arity: dict, objects: dict, path: str, where: str) -> Atom:
    """``atom`` after checking its predicate and objects are declared; raises ValueError."""
    if atom[0] not in arity:
        raise ValueError(f"{path}: undefined predicate {atom[0]!r} in {where}: {show_atom(atom)}")
    if len(atom) - 1 != arity[atom[0]]:
        raise ValueError(f"{path}: {atom[0]} takes {arity[atom[0]]} arguments, got {show_atom(atom)} in {where}")
    for obj in atom[1:]:
        if obj not in objects:
            raise ValueError(f"{path}: undefined object {obj!r} in {where}: {show_atom(atom)}")
    return atom
