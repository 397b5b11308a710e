"""STRIPS domains as data, and the normal form of the schema-learning task.

The DIAS paper (Reiter, Gebler, Geffner, Sections 3 and 4.1; docs/papers/dias.md) learns lifted
STRIPS schemas over unary and binary predicates, with object types as unary atoms ``t(o)`` and,
where a domain uses equality, an explicit static ``eq/2`` predicate (its Tables 4 and 8 list
``eq/2``). :func:`normal_form` turns a parsed domain into that form (pymimir already compiles types
into unary predicates; ``=`` becomes ``eq``; the trivially true ``object``/``number`` predicates go)
and :func:`normal_problem_text` writes a problem in it (untyped objects, type and ``eq`` atoms in
the initial state), so that the true domain, a learned domain and their problems all read the same
files and a learned domain plans the same problem files as the true one.

:class:`StripsDomain` writes PDDL (:meth:`StripsDomain.to_pddl`): a learned domain and the true one
go through the same writer. Nothing here imports above ``core``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from pathlib import Path

#: name of the static equality predicate of the normal form (``=`` in the original domain)
EQ = "eq"
#: pymimir predicates that are not part of a state in the normal form (always true or replaced)
_DROPPED = frozenset({"object", "number"})


@dataclass(frozen=True)
class Literal:
    """A lifted or ground literal ``(pred arg ...)`` or ``(not (pred arg ...))``; ``args`` are
    variable names (``?x1``) or object names."""

    predicate: str
    args: tuple[str, ...]
    positive: bool = True

    def pddl(self) -> str:
        atom = f"({' '.join((self.predicate, *self.args))})"
        return atom if self.positive else f"(not {atom})"

    def atom(self) -> "Literal":
        return replace(self, positive=True)


@dataclass(frozen=True)
class Schema:
    """One lifted STRIPS action schema ``<Pre, Add, Del>`` over ``parameters`` (variable names
    with ``?``). ``distinct``: the parameters must be bound to pairwise different objects (the
    injective binding assumption of the DIAS paper, Section 3), written as ``(not (= ?a ?b))``."""

    name: str
    parameters: tuple[str, ...]
    precondition: tuple[Literal, ...] = ()
    add: tuple[Literal, ...] = ()
    delete: tuple[Literal, ...] = ()
    distinct: bool = False

    def pddl(self) -> str:
        pre = [lit.pddl() for lit in self.precondition]
        if self.distinct:
            ps = self.parameters
            pre += [f"(not (= {a} {b}))" for i, a in enumerate(ps) for b in ps[i + 1:]]
        eff = [a.pddl() for a in self.add] + [f"(not {d.atom().pddl()})" for d in self.delete]
        return (
            f"  (:action {self.name}\n"
            f"    :parameters ({' '.join(self.parameters)})\n"
            f"    :precondition (and {' '.join(pre)})\n"
            f"    :effect (and {' '.join(eff)}))"
        )


@dataclass(frozen=True)
class StripsDomain:
    """A STRIPS domain over ``predicates`` (``(name, arity)``) with ``schemas``."""

    name: str
    predicates: tuple[tuple[str, int], ...]
    schemas: tuple[Schema, ...] = field(default_factory=tuple)

    def to_pddl(self) -> str:
        """The domain as PDDL text (``:strips :negative-preconditions :equality``)."""
        preds = " ".join(f"({p} {' '.join(f'?a{i}' for i in range(1, n + 1))})".replace(" )", ")")
                         for p, n in self.predicates)
        body = "\n".join(s.pddl() for s in self.schemas)
        return (f"(define (domain {self.name})\n"
                f"  (:requirements :strips :negative-preconditions :equality)\n"
                f"  (:predicates {preds})\n{body})\n")

    def write(self, path: str | Path) -> Path:
        path = Path(path)
        path.write_text(self.to_pddl())
        return path

    def without_preconditions(self) -> "StripsDomain":
        """The same schemas with every precondition dropped (the schema-learning precision floor:
        every grounding applicable, effects unchanged). The domain name stays: problems name it."""
        return replace(self, schemas=tuple(replace(s, precondition=()) for s in self.schemas))


def _name(obj) -> str:
    return obj.get_name()


def _var(name: str) -> str:
    """pymimir names parameters ``?bm_0_0``; the normal form keeps ``?bm``."""
    return re.sub(r"_\d+_\d+$", "", name)


def _pred(name: str) -> str:
    return EQ if name == "=" else name


def _literal(lit, where: str) -> Literal | None:
    atom = lit.get_atom()
    name = atom.get_predicate().get_name()
    if name in _DROPPED:
        return None
    args = []
    for t in atom.get_terms():
        n = _name(t)
        if not n.startswith("?"):
            raise ValueError(f"{where}: uses the constant {n!r}; the schema-learning task reads domains "
                             f"without constants")
        args.append(_var(n))
    return Literal(_pred(name), tuple(args), bool(lit.get_polarity()))


def normal_form(domain, source: str = "domain") -> StripsDomain:
    """The normal form of a parsed pymimir ``domain`` (see the module docstring).

    Args:
        domain: a ``pymimir.Domain`` (:func:`planarena.core.pddl.parse_domain`).
        source: the file name used in error messages.

    Raises:
        ValueError: the domain is not plain STRIPS over unary and binary predicates (conditional or
            quantified effects, numeric fluents, derived predicates, constants, nullary or ternary
            predicates); one line naming ``source`` and what is wrong.
    """
    uses_equality = any(lit.get_atom().get_predicate().get_name() == "="
                        for a in domain.get_actions() for lit in a.get_precondition().get_literals())
    names = {p.get_name() for p in domain.get_predicates()}
    if uses_equality and EQ in names:
        raise ValueError(f"{source}: uses equality and declares a predicate {EQ!r}; the normal form needs that name")
    preds = []
    for p in domain.get_predicates():
        n = p.get_name()
        if n in _DROPPED or (n == "=" and not uses_equality):  # `=` of an :equality requirement alone
            continue
        if p.get_arity() not in (1, 2):
            raise ValueError(f"{source}: predicate {n}/{p.get_arity()}: the schema-learning task reads only "
                             f"unary and binary predicates (DIAS paper, Section 3)")
        preds.append((_pred(n), p.get_arity()))
    schemas = []
    for a in domain.get_actions():
        where = f"{source}: action {a.get_name()}"
        effects = a.get_conditional_effect()   # none for a schema without effects
        if len(effects) > 1 or any(e.get_condition().get_literals() or e.get_condition().get_parameters()
                                   for e in effects):
            raise ValueError(f"{where}: conditional or quantified effects are outside STRIPS")
        if any(e.get_effect().get_functions() for e in effects):
            raise ValueError(f"{where}: numeric effects are outside STRIPS")
        pre = [lit for lit in (_literal(x, where) for x in a.get_precondition().get_literals()) if lit]
        eff = [lit for lit in (_literal(x, where) for x in (effects[0].get_effect().get_literals() if effects else ()))
               if lit]
        schemas.append(Schema(
            name=a.get_name(),
            parameters=tuple(_var(_name(v)) for v in a.get_parameters()),
            precondition=tuple(pre),
            add=tuple(e for e in eff if e.positive),
            delete=tuple(e.atom() for e in eff if not e.positive),
        ))
    if domain.get_constants():
        raise ValueError(f"{source}: declares constants; the schema-learning task reads domains without constants")
    return StripsDomain(name=domain.get_name(), predicates=tuple(preds), schemas=tuple(schemas))


def ground_atom_text(atom) -> str | None:
    """A pymimir ground atom as normal-form text (``(eq b1 b1)`` for ``(= b1 b1)``); None for the
    dropped ``object``/``number`` atoms."""
    name = atom.get_predicate().get_name()
    if name in _DROPPED:
        return None
    return f"({' '.join((_pred(name), *(_name(t) for t in atom.get_terms())))})"


def normal_problem_text(problem, domain: StripsDomain) -> str:
    """The problem in the normal form of ``domain``: untyped objects, the initial atoms of its
    predicates (type atoms, and ``eq`` atoms when the domain uses equality), the goal literals.

    Args:
        problem: a ``pymimir.Problem`` parsed against the original domain.
        domain: its normal form (:func:`normal_form`).
    """
    return untyped_problem_text(problem, domain.name, {name for name, _ in domain.predicates})


def untyped_problem_text(problem, domain_name: str, predicates: set[str]) -> str:
    """A parsed problem written with untyped objects: each object's types become initial atoms
    ``(t o)`` (pymimir compiles types to unary predicates), only the initial atoms of
    ``predicates`` are kept, and the goal literals follow. The usual compilation of types away
    (e.g. VisitAll's ``- place`` objects as ``(place o)`` facts for a domain that declares no types).

    Args:
        problem: a ``pymimir.Problem``.
        domain_name: the ``(:domain ...)`` the text names.
        predicates: the predicate names (normal-form spelling, :func:`_pred`) kept in the initial state.
    """
    objects = " ".join(_name(o) for o in problem.get_objects())
    init = [t for t in (ground_atom_text(a) for a in problem.get_initial_atoms())
            if t and t[1:].split(" ", 1)[0].rstrip(")") in predicates]
    goal = []
    for lit in problem.get_goal_condition():
        atom = ground_atom_text(lit.get_atom())
        if atom:
            goal.append(atom if lit.get_polarity() else f"(not {atom})")
    return (f"(define (problem {problem.get_name()})\n  (:domain {domain_name})\n"
            f"  (:objects {objects})\n  (:init {' '.join(init)})\n  (:goal (and {' '.join(goal)})))\n")


def vocabulary(domain) -> tuple[frozenset[tuple[str, int]], frozenset[tuple[str, int]]]:
    """``(predicates, actions)`` of a parsed pymimir ``domain`` as ``{(name, arity)}`` sets, its
    types counted as unary predicates (pymimir compiles them so) and ``object`` / ``number`` / ``=``
    left out: two domains with the same vocabulary read the same problem files once types are
    compiled away (:func:`untyped_problem_text`)."""
    preds = frozenset((_pred(p.get_name()), p.get_arity()) for p in domain.get_predicates()
                      if p.get_name() not in _DROPPED and p.get_name() != "=")
    actions = frozenset((a.get_name(), len(a.get_parameters())) for a in domain.get_actions())
    return preds, actions


def without_negative_preconditions(domain_file: str | Path, problem_file: str | Path, out: str | Path) -> tuple[Path, Path]:
    """Copies of a STRIPS domain and problem in which every negative precondition ``(not (p x))``
    (``=`` excepted) is the positive ``(not-p x)`` of a complement predicate that the effects keep
    up to date (the classic compilation, Gazen and Knoblock 1997): ``not-p`` is true in the
    initial state of every object tuple whose ``p`` atom is false, an effect adding ``p`` deletes
    ``not-p`` and one deleting ``p`` adds it. The plans of both pairs are the same action
    sequences.

    Why: Fast Downward's translator turns negative preconditions on atoms of its mutex groups into
    effect conditions and multiplies them out; a learned Blocks-3 domain with its many negative
    preconditions (the DIAS paper's "maximal preconditions", Table 18) took 97 s to translate for
    15 blocks, against under 2 s after this compilation.

    Returns:
        ``(domain, problem)`` paths under ``out``.

    Raises:
        planarena.core.pddl.PDDLError: either file does not parse (names it).
        ValueError: the domain is not plain STRIPS (see :func:`normal_form`).
    """
    import itertools

    from planarena.core.pddl import parse_domain, parse_problem_of

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    domain = parse_domain(domain_file)
    problem = parse_problem_of(domain, problem_file)
    preds = {p.get_name(): p.get_arity() for p in domain.get_predicates() if p.get_name() not in (*_DROPPED, "=")}
    negated: set[str] = set()
    actions = []
    for a in domain.get_actions():
        params = [v.get_name() for v in a.get_parameters()]
        pre, eff = [], []
        for lit in a.get_precondition().get_literals():
            atom = lit.get_atom()
            name = atom.get_predicate().get_name()
            if name in _DROPPED:
                continue
            args = " ".join(t.get_name() for t in atom.get_terms())
            if lit.get_polarity():
                pre.append(f"({name} {args})")
            elif name == "=":
                pre.append(f"(not (= {args}))")
            else:
                negated.add(name)
                pre.append(f"(not-{name} {args})")
        effects = a.get_conditional_effect()   # none for a schema without effects
        if len(effects) > 1 or any(e.get_condition().get_literals() for e in effects):
            raise ValueError(f"{domain_file}: action {a.get_name()}: conditional effects are outside STRIPS")
        for lit in (effects[0].get_effect().get_literals() if effects else ()):
            atom = lit.get_atom()
            name = atom.get_predicate().get_name()
            args = " ".join(t.get_name() for t in atom.get_terms())
            eff.append((name, args, bool(lit.get_polarity())))
        actions.append((a.get_name(), params, pre, eff))
    lines = [f"(define (domain {domain.get_name()})", "  (:requirements :strips :equality)",
             "  (:predicates " + " ".join(
                 f"({p}{''.join(f' ?a{i}' for i in range(n))})" for p, n in
                 [*preds.items(), *((f"not-{p}", preds[p]) for p in sorted(negated))]) + ")"]
    for name, params, pre, eff in actions:
        effects = []
        for p, args, positive in eff:
            effects.append(f"({p} {args})" if positive else f"(not ({p} {args}))")
            if p in negated:
                effects.append(f"(not (not-{p} {args}))" if positive else f"(not-{p} {args})")
        lines.append(f"  (:action {name} :parameters ({' '.join(params)})\n"
                     f"    :precondition (and {' '.join(pre)})\n    :effect (and {' '.join(effects)}))")
    lines.append(")")
    (out / "domain.pddl").write_text("\n".join(lines) + "\n")
    objects = [o.get_name() for o in problem.get_objects()]
    init = {t for t in (f"({' '.join((a.get_predicate().get_name(), *(x.get_name() for x in a.get_terms())))})"
                        for a in problem.get_initial_atoms()) if not t.startswith(("(object ", "(number ", "(= "))}
    complements = [f"(not-{p} {' '.join(args)})" for p in sorted(negated)
                   for args in itertools.product(objects, repeat=preds[p])
                   if f"({' '.join((p, *args))})" not in init]
    goal = []
    for lit in problem.get_goal_condition():
        atom = lit.get_atom()
        text = f"({' '.join((atom.get_predicate().get_name(), *(x.get_name() for x in atom.get_terms())))})"
        goal.append(text if lit.get_polarity() else f"(not {text})")
    (out / "problem.pddl").write_text(
        f"(define (problem {problem.get_name()})\n  (:domain {domain.get_name()})\n  (:objects {' '.join(objects)})\n"
        f"  (:init {' '.join(sorted(init))} {' '.join(complements)})\n  (:goal (and {' '.join(goal)})))\n")
    return out / "domain.pddl", out / "problem.pddl"
