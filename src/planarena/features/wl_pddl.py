"""The PDDL side of the WL embedder (:mod:`planarena.features.wl`): a domain parsed once, each
problem file parsed once, atom strings and pymimir states turned into wlplan ``State`` objects with
the problem's static atoms added (the ILG paper's state is the full set of true atoms; see the
"States and static atoms" section of :mod:`planarena.features.wl`)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

import pddl
import pddl.logic.base
import pddl.logic.effects
import pddl.logic.predicates
from wlplan.planning import Atom, Problem, State, to_wlplan_domain, to_wlplan_problem

from planarena.core.pddl import atom_indices, atom_text
from planarena.core.pddl_parsers import domain_parser, problem_parser


class WLEmbeddingError(ValueError):
    """Input the WL stage cannot embed (bad PDDL, unknown predicate, missing train split).

    The message names the offending file (and domain where there is one).
    """


def _effect_predicates(node, out: set[str]) -> None:
    """Names of the predicates that an action effect (tree of pddl objects) adds or deletes."""
    if isinstance(node, pddl.logic.predicates.Predicate):
        out.add(node.name)
    elif isinstance(node, pddl.logic.base.Not):
        _effect_predicates(node.argument, out)
    elif isinstance(node, (pddl.logic.effects.When, pddl.logic.effects.Forall)):
        _effect_predicates(node.effect, out)
    elif hasattr(node, "operands"):  # And, OneOf
        for child in node.operands:
            _effect_predicates(child, out)
    # numeric effects (increase, ...) change functions, not predicates


@dataclass
class _ParsedProblem:
    """A problem file parsed once: the wlplan Problem (objects, goal) and its static atoms."""

    path: Path
    problem: Problem
    statics: list[Atom]
    static_keys: frozenset[str]
    objects: frozenset[str]
    #: wlplan atoms of pymimir atom indices (fluent, derived) filled as states are embedded, and
    #: the indices whose atom is already static (None in the maps; normally none)
    by_index: tuple[dict, dict, list] = (None, None, None)  # type: ignore[assignment]
    #: the pymimir problem those indices belong to (indices are per parsed pymimir problem: the
    #: same file parsed again, e.g. after ``load_problem``'s cache evicted it, numbers them anew)
    index_owner: object = None


class PDDLCache:
    """Parses a domain once and each problem file once, and builds wlplan ``State`` objects.

    Atom strings (``"(on b1 b2)"``, as pymimir prints them) are converted to wlplan ``Atom`` objects
    once and cached, so embedding many states that share atoms costs little Python work.

    Raises (on construction):
        FileNotFoundError: the domain file does not exist.
        WLEmbeddingError: the domain file is not PDDL that ``pddl`` (wlplan's parser) accepts.
    """

    def __init__(self, domain_file: str | os.PathLike):
        self.domain_file = Path(domain_file)
        if not self.domain_file.exists():
            raise FileNotFoundError(f"{self.domain_file}: domain file not found")
        try:
            self.pddl_domain = domain_parser()(self.domain_file.read_text())
            self.domain = to_wlplan_domain(self.pddl_domain)
        except Exception as exc:  # lark / pddl errors have many types
            raise WLEmbeddingError(f"{self.domain_file}: cannot parse PDDL domain: {exc}") from exc
        self.predicates = {p.name: p for p in self.domain.predicates}
        fluent: set[str] = set()
        for action in self.pddl_domain.actions:
            _effect_predicates(action.effect, fluent)
        #: Predicates that no action adds or deletes; their initial atoms are the static atoms.
        self.static_predicates = frozenset(set(self.predicates) - fluent)
        self._atoms: dict[str, Atom] = {}
        self._problems: dict[str, _ParsedProblem] = {}

    # atoms ---------------------------------------------------------------------------------------
    def atom(self, text: str, where: str = "") -> Atom:
        """The wlplan ``Atom`` for ``"(pred o1 o2)"`` (cached).

        Raises:
            WLEmbeddingError: malformed text, unknown predicate or wrong arity (names ``where``).
        """
        cached = self._atoms.get(text)
        if cached is not None:
            return cached
        body = text.strip()
        if not (body.startswith("(") and body.endswith(")")):
            raise WLEmbeddingError(f"{where or self.domain_file}: malformed atom {text!r}")
        parts = body[1:-1].split()
        if not parts:
            raise WLEmbeddingError(f"{where or self.domain_file}: empty atom {text!r}")
        predicate = self.predicates.get(parts[0])
        if predicate is None:
            raise WLEmbeddingError(
                f"{where or self.domain_file}: atom {text!r} uses predicate {parts[0]!r}, which "
                f"{self.domain_file} does not declare (known: {sorted(self.predicates)})"
            )
        if predicate.arity != len(parts) - 1:
            raise WLEmbeddingError(
                f"{where or self.domain_file}: atom {text!r} has {len(parts) - 1} arguments, "
                f"predicate {parts[0]!r} takes {predicate.arity}"
            )
        atom = Atom(predicate, parts[1:])
        self._atoms[text] = atom
        return atom

    # problems ------------------------------------------------------------------------------------
    def problem(self, problem_file: str | os.PathLike) -> _ParsedProblem:
        """The parsed problem (cached by resolved path).

        Raises:
            FileNotFoundError: the problem file does not exist.
            WLEmbeddingError: the file is not a PDDL problem of this domain.
        """
        hit = self._problems.get(str(problem_file))  # the name a caller uses: no file-system work
        if hit is not None:
            return hit
        path = Path(problem_file)
        key = str(path.resolve())
        hit = self._problems.get(key)
        if hit is not None:
            self._problems[str(problem_file)] = hit
            return hit
        if not path.exists():
            raise FileNotFoundError(f"{path}: problem file not found")
        try:
            pddl_problem = problem_parser()(path.read_text())
            problem = to_wlplan_problem(self.pddl_domain, pddl_problem)
        except Exception as exc:
            raise WLEmbeddingError(
                f"{path}: cannot parse PDDL problem (domain {self.domain_file}): {exc}"
            ) from exc
        statics: list[Atom] = []
        keys: set[str] = set()
        for init_atom in sorted(pddl_problem.init, key=repr):
            if isinstance(init_atom, pddl.logic.predicates.Predicate) and (
                init_atom.name in self.static_predicates
            ):
                text = "(" + " ".join([init_atom.name, *(t.name for t in init_atom.terms)]) + ")"
                if text not in keys:
                    keys.add(text)
                    statics.append(self.atom(text, where=str(path)))
        parsed = _ParsedProblem(
            path=path,
            problem=problem,
            statics=statics,
            static_keys=frozenset(keys),
            objects=frozenset(problem.objects) | frozenset(problem.constant_objects),
            by_index=({}, {}, []),
        )
        self._problems[key] = self._problems[str(problem_file)] = parsed
        return parsed

    def with_goal(self, parsed: _ParsedProblem, goal_of: _ParsedProblem) -> _ParsedProblem:
        """``parsed`` (objects, static atoms) with the goal of ``goal_of`` (cached per pair): the
        problem a state of ``parsed`` is embedded in when it competes as a candidate successor for
        a query of ``goal_of`` (every pool candidate carries the query's goal:
        docs/concepts.md#held-out-means-unseen). Objects are the union of both problems' objects, so
        the goal's atoms always fit."""
        if parsed.path == goal_of.path:
            return parsed
        key = f"{parsed.path.resolve()}\0goal:{goal_of.path.resolve()}"
        hit = self._problems.get(key)
        if hit is not None:
            return hit
        objects = sorted(set(parsed.problem.objects) | set(goal_of.problem.objects))
        problem = Problem(self.domain, objects, list(goal_of.problem.positive_goals),
                          list(goal_of.problem.negative_goals))
        out = _ParsedProblem(path=parsed.path, problem=problem, statics=parsed.statics,
                             static_keys=parsed.static_keys, objects=parsed.objects | goal_of.objects,
                             by_index=({}, {}, []))
        self._problems[key] = out
        return out

    def state(self, parsed: _ParsedProblem, atoms: Iterable[str], where: str = "") -> State:
        """wlplan ``State`` of the given fluent atoms plus the problem's static atoms.

        An atom that is already static is not added twice.
        """
        extra = [self.atom(a, where) for a in atoms if a not in parsed.static_keys]
        return State(parsed.statics + extra)

    def mimir_state(self, parsed: _ParsedProblem, problem, state) -> State:
        """wlplan ``State`` of a pymimir ``state`` of ``problem`` (the file ``parsed`` was read
        from): fluent and derived atoms by pymimir index (each index converted to a wlplan atom
        once per problem), plus the problem's static atoms. The same state as :meth:`state` of
        :func:`planarena.core.pddl.atoms_of` (atoms in another order; WL is order-invariant)."""
        if parsed.index_owner is not problem:  # another parse of the file: its indices differ
            parsed.by_index, parsed.index_owner = ({}, {}, []), problem
        fluent, derived, static_hits = parsed.by_index
        adv = state._advanced_state  # the index vectors, read without copies (atom_indices)
        try:
            out = parsed.statics + [fluent[i] for i in adv.get_fluent_atoms()] + [
                derived[i] for i in adv.get_derived_atoms()]
        except KeyError:  # an index met for the first time: its atom, once per problem
            for kind, indices in enumerate(atom_indices(state)):
                cache = parsed.by_index[kind]
                for i in indices:
                    if i not in cache:
                        text = atom_text(problem, i, derived=bool(kind))
                        if text in parsed.static_keys:
                            cache[i] = None
                            static_hits.append(i)
                        else:
                            cache[i] = self.atom(text, str(parsed.path))
            return self.mimir_state(parsed, problem, state)
        if static_hits and any(a is None for a in out):
            out = [a for a in out if a is not None]  # fluent indices whose text is static
        return State(out)

    def goal_state(self, parsed: _ParsedProblem) -> State:
        """The state made of the positive goal atoms (plus statics): its ILG is ``G_{g,g}``."""
        return State(parsed.statics + list(parsed.problem.positive_goals))
