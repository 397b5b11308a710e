"""Successor generation for the searches planarena writes in Python (the width-based lookaheads):
pymimir's advanced API, with applicable actions from a *grounded* generator.

pymimir parses a problem in lifted mode, whose applicable-action generator matches every action
schema against the state anew: 200-480 us a state on IPC 2023 Spanner medium problems (Intel Xeon),
against 0.5 us for the grounded generator on the same states (measured in
``benchmarks/bench_successors.py``). A lookahead expands thousands of states per choice, so it asks
a grounded generator, built once per problem over the problem's own repositories, for the actions,
and the problem's state repository for the successors: the states are the problem's states
(``pymimir.State`` wrappers made only for the states a caller keeps), the actions the same ground
actions the lifted generator gives (a test compares both along walks on every fixture domain).
Grounding failing (an exception from pymimir) falls back to the lifted generator.

Also: an action's add effects (so that a search can read which atoms a successor makes true without
reading the successor's whole atom list), and a fixed order of actions by their text.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import sys
import weakref

import pymimir


class Successors:
    """Applicable actions and successors of one pymimir problem's states, in advanced-API objects.

    Args:
        problem: a ``pymimir.Problem``.
        grounded: ask a grounded applicable-action generator (built here, pymimir's grounding
            printout silenced); False, or grounding raising, uses the problem's own lifted one.

    Attributes:
        grounded: whether the grounded generator is in use.
    """

    def __init__(self, problem, grounded: bool = True):
        self.problem = problem
        self._adv_problem = problem._advanced_problem
        context = problem._search_context
        self._repository = context.get_state_repository()
        self._generator = context.get_applicable_action_generator()
        self.grounded = False
        if grounded:
            try:
                self._context = _grounded_context(self._adv_problem)  # owns the generator
                self._generator = self._context.get_applicable_action_generator()
                self.grounded = True
            except (RuntimeError, ValueError, MemoryError):
                pass
        self._keys: dict[int, str] = {}
        self._adds: dict[int, tuple | None] = {}

    def actions(self, state) -> list:
        """The advanced ground actions applicable in advanced ``state``, ordered by their text
        (``"(name o1 o2)"``): pymimir's action indices depend on what was grounded before, so an
        order by index would make a search's ties depend on history."""
        actions = list(self._generator.generate_applicable_actions(state))
        if len(actions) > 1:
            actions.sort(key=self.key)
        return actions

    def key(self, action) -> str:
        """The plan text of an advanced ground action, ``"(name o1 o2)"`` (memoised by index)."""
        index = action.get_index()
        text = self._keys.get(index)
        if text is None:
            text = self._keys[index] = action.to_string_for_plan(self._adv_problem)
        return text

    def successor(self, state, action):
        """The advanced successor state of advanced ``state`` under ``action`` (the problem's state
        repository: the same object ``pymimir.GroundAction.apply`` wraps)."""
        return self._repository.get_or_create_successor_state(state, action, 0.0)[0]

    def added(self, action) -> tuple[int, ...] | None:
        """The fluent atom indices ``action`` adds, or None when its effects are conditional or an
        atom is both added and deleted (then compare the successor's atoms with the state's).

        Every atom true in a successor and not in its state is one of these (STRIPS semantics), so
        the new atoms of a successor are ``[a for a in added(action) if a not in state_atoms]``."""
        index = action.get_index()
        if index in self._adds:
            return self._adds[index]
        adds: list[int] = []
        deletes: set[int] = set()
        for effect in action.get_conditional_effects():
            cond = effect.get_conjunctive_condition()
            if any(len(list(getter())) for getter in (
                    cond.get_fluent_positive_condition, cond.get_fluent_negative_condition,
                    cond.get_derived_positive_condition, cond.get_derived_negative_condition,
                    cond.get_static_positive_condition, cond.get_static_negative_condition,
                    cond.get_numeric_constraints)):
                self._adds[index] = None
                return None
            conj = effect.get_conjunctive_effect()
            adds.extend(int(a) for a in conj.get_positive_effects())
            deletes.update(int(a) for a in conj.get_negative_effects())
        got = None if deletes.intersection(adds) else tuple(dict.fromkeys(adds))
        self._adds[index] = got
        return got

    def state(self, advanced) -> "pymimir.State":
        """The ``pymimir.State`` wrapper of an advanced state of this problem."""
        return pymimir.State(advanced, self.problem)

    def action(self, advanced) -> "pymimir.GroundAction":
        """The ``pymimir.GroundAction`` wrapper of an advanced ground action of this problem."""
        return pymimir.GroundAction(advanced, self.problem)


_MEMO: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def successors_of(problem) -> Successors:
    """The :class:`Successors` of ``problem`` (grounded), built once per problem object."""
    got = _MEMO.get(problem)
    if got is None:
        got = _MEMO[problem] = Successors(problem)
    return got


def _grounded_context(advanced_problem):
    """A search context with a grounded applicable-action generator over ``advanced_problem``'s
    repositories (pymimir's grounder prints every reachable atom: silenced)."""
    from pymimir.advanced.search import GroundedOptions, SearchContext, SearchContextOptions

    with quiet_stdout():
        return SearchContext.create(advanced_problem, SearchContextOptions(GroundedOptions()))


@contextlib.contextmanager
def quiet_stdout():
    """Send what native code (pymimir's grounder, its FF heuristic) prints to the process's standard
    output to /dev/null while the block runs. The C++ stream writes through C's buffered stdout, so
    that buffer is emptied on both sides of the switch."""
    libc = ctypes.CDLL(None)
    sys.stdout.flush()
    libc.fflush(None)
    saved = os.dup(1)
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, 1)
        yield
    finally:
        libc.fflush(None)
        os.dup2(saved, 1)
        os.close(saved)
        os.close(null)


__all__ = ["Successors", "quiet_stdout", "successors_of"]
