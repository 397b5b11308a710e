"""Independent plan validation with unified-planning's ``SequentialPlanValidator``.

Independent validation (docs/concepts.md#tasks): a plan counts as solved only if this validator,
reading the PDDL files (not the method's own simulator, not pymimir), accepts it. The parsed UP
problem is cached per (domain file, problem file), so validating many plans of one problem parses it
once.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

VALIDATOR_NAME = "unified-planning SequentialPlanValidator"


@dataclass(frozen=True)
class Verdict:
    """Validator verdict.

    ``valid``; ``reason`` says why not (one line: ``step <i>: <action>: ...`` with the unmet
    precondition, or ``goal not reached after <n> steps: ...`` with the unmet goal atoms);
    ``step`` is the 1-based step of the first bad action (None when valid or when the goal is not
    reached); ``cost`` is the plan's cost when valid (the problem's metric, e.g. total-cost, or
    the number of steps under unit cost).
    """

    valid: bool
    reason: str | None = None
    step: int | None = None
    cost: float | None = None


@functools.lru_cache(maxsize=1)
def _env():
    import unified_planning.shortcuts as up

    env = up.get_environment()
    env.credits_stream = None  # no banner per engine
    env.error_used_name = False
    return env


@functools.lru_cache(maxsize=128)
def _parsed(domain_file: str, problem_file: str):
    from unified_planning.io import PDDLReader

    reader = PDDLReader(environment=_env())
    try:
        problem = reader.parse_problem(domain_file, problem_file)
    except Exception as exc:  # UP raises many exception types for malformed PDDL
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ValueError(f"{problem_file}: unified-planning could not parse it: {reason}") from exc
    return reader, problem


@functools.lru_cache(maxsize=1)
def _validator():
    from unified_planning.engines import SequentialPlanValidator

    return SequentialPlanValidator(environment=_env())


@functools.lru_cache(maxsize=8)
def _simulator(domain_file: str, problem_file: str):
    from unified_planning.engines import UPSequentialSimulator

    return UPSequentialSimulator(_parsed(domain_file, problem_file)[1], error_on_failed_checks=False)


def _pddl(node) -> str:
    """A UP expression as PDDL text (``(on a b)``, ``(not (clear a))``; else UP's own form)."""
    if node.is_fluent_exp():
        return "(" + " ".join([node.fluent().name, *(str(a) for a in node.args)]) + ")"
    if node.is_not():
        return f"(not {_pddl(node.arg(0))})"
    return str(node)


def _atoms_of(nodes) -> list:
    """Conjunctions flattened into their conjuncts."""
    out = []
    for n in nodes:
        out.extend(_atoms_of(n.args) if n.is_and() else [n])
    return out


def _unmet(problem, state, nodes) -> list[str]:
    """The conjuncts of ``nodes`` that do not hold in ``state`` (all of them if UP cannot tell)."""
    from unified_planning.model.walkers import StateEvaluator

    evaluator = StateEvaluator(problem)
    out = []
    for atom in _atoms_of(nodes):
        try:
            holds = evaluator.evaluate(atom, state).bool_constant_value()
        except Exception:  # noqa: BLE001 - UP evaluators raise several types; report the atom then
            holds = False
        if not holds:
            out.append(_pddl(atom))
    return out


def _step_error(problem, step: int, text: str) -> str | None:
    """Why plan step ``step`` (1-based) cannot name an action of ``problem``: unknown action, wrong
    number of arguments or unknown object; None when it names one."""
    from planarena.core.pddl import PDDLError, split_atom

    try:
        name, args = split_atom(text)
    except PDDLError:
        return f"step {step}: {text!r} is not an action (expected '(name arg ...)')"
    if not problem.has_action(name):
        known = ", ".join(sorted(a.name for a in problem.actions))
        return f"step {step}: {text}: unknown action {name!r} (the domain has {known})"
    params = problem.action(name).parameters
    if len(args) != len(params):
        names = " ".join(f"?{p.name}" for p in params)
        return (f"step {step}: {text}: {name} takes {len(params)} argument{'s' * (len(params) != 1)} "
                f"({names}), got {len(args)}")
    for obj in args:
        if not problem.has_object(obj):
            return f"step {step}: {text}: unknown object {obj!r}"
    return None


def validate_plan(domain_file: str | Path, problem_file: str | Path, actions: list[str]) -> Verdict:
    """Validate a sequential plan (list of ``"(action obj ...)"``) against the PDDL files.

    Returns a :class:`Verdict`; never raises for an invalid plan. Its reason names the first bad
    step (1-based), the action and what is wrong: an unknown action or object, a wrong number of
    arguments, or the precondition atoms that do not hold; or, when every step applies, the goal
    atoms that do not hold at the end (an empty plan for a problem whose initial state is not a
    goal is invalid that way).

    Raises:
        ValueError: the PDDL files themselves cannot be parsed by unified-planning (names the file).
    """
    domain_file, problem_file = str(domain_file), str(problem_file)
    reader, problem = _parsed(domain_file, problem_file)
    for i, act in enumerate(actions, 1):
        error = _step_error(problem, i, act)
        if error:
            return Verdict(False, error, step=i)
    try:
        plan = reader.parse_plan_string(problem, "\n".join(actions) + "\n")
    except Exception as exc:  # noqa: BLE001 - UP's plan parser raises several types
        return Verdict(False, f"plan does not parse against the problem: {exc or type(exc).__name__}")
    result = _validator().validate(problem, plan)
    if result.status.name == "VALID":
        metrics = list((result.metric_evaluations or {}).values())
        return Verdict(True, None, cost=float(metrics[0]) if metrics else float(len(actions)))
    return _explain(domain_file, problem_file, actions, plan, result)


def _explain(domain_file: str, problem_file: str, actions: list[str], plan, result) -> Verdict:
    """Name the failing step and its unmet precondition, or the unmet goal atoms (UP's simulator)."""
    simulator = _simulator(domain_file, problem_file)
    problem = _parsed(domain_file, problem_file)[1]
    state = simulator.get_initial_state()
    from unified_planning.exceptions import UPInvalidActionError

    for i, ai in enumerate(plan.actions, 1):
        try:
            unsat, _ = simulator.get_unsatisfied_conditions(state, ai)
        except UPInvalidActionError:  # UP's grounder found a precondition on static atoms false
            return Verdict(False, f"step {i}: {actions[i - 1]}: a precondition on static atoms does not "
                                  f"hold (unified-planning: not a valid grounding)", step=i)
        if unsat:
            unmet = _unmet(problem, state, unsat) or [_pddl(u) for u in unsat]
            word = "precondition" if len(unmet) == 1 else "preconditions"
            return Verdict(False, f"step {i}: {actions[i - 1]}: {word} {', '.join(unmet)} "
                                  f"{'does' if len(unmet) == 1 else 'do'} not hold", step=i)
        state = simulator.apply(state, ai)
    unsat = simulator.get_unsatisfied_goals(state)
    if unsat:
        unmet = _unmet(problem, state, unsat) or [_pddl(u) for u in unsat]
        return Verdict(False, f"goal not reached after {len(actions)} step{'s' * (len(actions) != 1)}: "
                              f"{', '.join(unmet)} {'does' if len(unmet) == 1 else 'do'} not hold")
    messages = "; ".join(m.message for m in (result.log_messages or []))
    reason = result.reason.name if result.reason is not None else "INVALID"
    return Verdict(False, f"{reason}: {messages}" if messages else reason)
