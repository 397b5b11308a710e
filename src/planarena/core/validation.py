"""Independent plan validation: planarena's own PDDL validator on the ``pddl`` package's parser.

Independent validation (docs/concepts.md#tasks): a plan counts as solved only if this validator,
reading the PDDL files (not the method's own simulator, not pymimir), accepts it. The files are
parsed by the ``pddl`` package (AI-Planning/pddl) and plans executed under PDDL 2.1 semantics
(Fox & Long 2003) by :mod:`planarena.core.pddl_semantics`. Plans are sequences of IPC plan-file
lines ``(action obj ...)`` (case-insensitive; ``;`` comments are the caller's to strip).

Each domain file is parsed once and each (domain, problem) pair once per process (cached by path,
modification time and size), so validating many plans of one problem parses it once.

:func:`validate_plan_up` is unified-planning's ``SequentialPlanValidator`` behind the same API: the
cross-check oracle of the tests and ``benchmarks/bench_validate.py`` (about 10x slower at IPC size).
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from pathlib import Path

VALIDATOR_NAME = "planarena PDDL validator (pddl parser)"
ORACLE_NAME = "unified-planning SequentialPlanValidator"


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


def _file_key(path: str) -> tuple[str, int, int]:
    """(path, mtime_ns, size): the cache key of a file, so an edited file is parsed again."""
    try:
        st = os.stat(path)
    except OSError as exc:
        raise ValueError(f"{path}: cannot read the PDDL file: {exc.strerror or exc}") from None
    return path, st.st_mtime_ns, st.st_size


def _text(path: str) -> str:
    try:
        return Path(path).read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path}: cannot read the PDDL file: {exc}") from None


@functools.lru_cache(maxsize=32)
def _domain(key: tuple[str, int, int]):
    from planarena.core.pddl_parsers import domain_parser
    from planarena.core.pddl_semantics import parse

    return parse(domain_parser(), _text(key[0]), key[0])


@functools.lru_cache(maxsize=64)
def _task(domain_key: tuple[str, int, int], problem_key: tuple[str, int, int]):
    """The executable task of a (domain, problem) pair (kept for 64 pairs: a lockstep evaluate stage
    validates a split's problems once per seed, so that each is parsed once per stage process)."""
    from planarena.core.pddl_parsers import problem_parser
    from planarena.core.pddl_semantics import build_task, parse

    problem = parse(problem_parser(), _text(problem_key[0]), problem_key[0])
    return build_task(_domain(domain_key), problem, domain_key[0], problem_key[0])


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'s' * (n != 1)}"


def _unmet_text(unmet: list[str]) -> str:
    return f"{', '.join(unmet)} {'does' if len(unmet) == 1 else 'do'} not hold"


def _bind(task, step: int, text: str):
    """(action, binding) for plan step ``text``, or the reason it names no action of ``task``:
    not an action, unknown action, wrong number of arguments, unknown object or wrong type."""
    t = text.strip().lower()
    toks = (t[1:-1] if t.startswith("(") and t.endswith(")") else t).split()
    if not toks:
        return f"step {step}: {text!r} is not an action (expected '(name arg ...)')"
    name, args = toks[0], toks[1:]
    action = task.actions.get(name)
    if action is None:
        return f"step {step}: {text}: unknown action {name!r} (the domain has {', '.join(sorted(task.actions))})"
    params = action.parameters
    if len(args) != len(params):
        names = " ".join(f"?{p.name}" for p in params)
        return f"step {step}: {text}: {name} takes {_plural(len(params), 'argument')} ({names}), got {len(args)}"
    for p, obj in zip(params, args):
        if obj not in task.objects:
            return f"step {step}: {text}: unknown object {obj!r}"
        if not task.is_of(obj, p.type_tags):
            want = " or ".join(sorted(map(str, p.type_tags)))
            return f"step {step}: {text}: ?{p.name} must be of type {want}, {obj!r} is of type {task.objects[obj]}"
    return action, {p.name: obj for p, obj in zip(params, args)}


def validate_plan(domain_file: str | Path, problem_file: str | Path, actions: list[str]) -> Verdict:
    """Validate a sequential plan (list of ``"(action obj ...)"``) against the PDDL files.

    Returns a :class:`Verdict`; never raises for an invalid plan. Its reason names the first bad
    step (1-based), the action and what is wrong: first the first step that names no action of the
    domain (an unknown action or object, a wrong number of arguments, an argument of the wrong
    type: the plan is checked whole before it is executed, as VAL and unified-planning do), then
    the first step whose precondition conjuncts do not hold; or, when every step applies, the goal
    conjuncts that do not hold at the end (an empty plan for a problem whose initial state is not a
    goal is invalid that way).

    Raises:
        ValueError: the PDDL files cannot be read or parsed, or the problem does not fit the domain
            (the message starts with the bad file's path).
    """
    from planarena.core.pddl_semantics import Unsupported

    task = _task(_file_key(str(domain_file)), _file_key(str(problem_file)))
    steps = [_bind(task, i, text) for i, text in enumerate(actions, 1)]
    for i, bound in enumerate(steps, 1):  # a plan must be well-formed before it is executed (as VAL and UP)
        if isinstance(bound, str):
            return Verdict(False, bound, step=i)
    try:
        return _execute(task, actions, steps)
    except Unsupported as exc:  # never a crashed stage: the plan is not validated, and the reason says why
        return Verdict(False, f"not validated: the validator does not execute this {exc}")


def _execute(task, actions: list[str], steps: list) -> Verdict:
    """Run the bound ``steps`` of a well-formed plan from the initial state, then test the goal
    and compute the cost (:func:`validate_plan`)."""
    from planarena.core.pddl_semantics import Undefined, conjuncts, show

    state, fluents = set(task.init), dict(task.fluents)
    for i, (text, (action, b)) in enumerate(zip(actions, steps), 1):
        pre = action.precondition
        try:
            if pre is not None and not task.holds(pre, state, fluents, b):
                unmet = [show(c, b) for c in conjuncts(pre) if not _safe_holds(task, c, state, fluents, b)]
                word = "precondition" if len(unmet) == 1 else "preconditions"
                return Verdict(False, f"step {i}: {text}: {word} {_unmet_text(unmet)}", step=i)
            task.apply(action, b, state, fluents)
        except (Undefined, ZeroDivisionError) as exc:
            return Verdict(False, f"step {i}: {text}: {exc}", step=i)
    if task.goal is not None and not _safe_holds(task, task.goal, state, fluents, {}):
        unmet = [show(c, {}) for c in conjuncts(task.goal) if not _safe_holds(task, c, state, fluents, {})]
        return Verdict(False, f"goal not reached after {_plural(len(actions), 'step')}: {_unmet_text(unmet)}")
    if task.metric is None:
        return Verdict(True, cost=float(len(actions)))
    fluents.setdefault(("total-time",), float(len(actions)))  # a sequential plan: one time unit a step
    try:
        return Verdict(True, cost=task.value(task.metric, fluents, {}))
    except (Undefined, ZeroDivisionError) as exc:
        return Verdict(False, f"the plan's cost (:metric) is undefined: {exc}")


def _safe_holds(task, f, state, fluents, b) -> bool:
    """``task.holds``, with a numeric fluent without a value (or a division by zero) read as false."""
    from planarena.core.pddl_semantics import Undefined

    try:
        return task.holds(f, state, fluents, b)
    except (Undefined, ZeroDivisionError):
        return False


# ------------------------------------------------------------------------------------------------
# The cross-check oracle: unified-planning 1.3.0 (slow at IPC size: its pyparsing parse and its
# simulator's state handling); same API and reason forms as validate_plan.
# ------------------------------------------------------------------------------------------------


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


def validate_plan_up(domain_file: str | Path, problem_file: str | Path, actions: list[str]) -> Verdict:
    """:func:`validate_plan` by unified-planning's ``SequentialPlanValidator`` (the oracle).

    Same verdicts and reason forms, except: a step whose precondition UP's grounder finds false on
    static atoms is reported without the atoms; a step with an argument of the wrong type is
    reported with UP's plan parser's message.

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
        for i, act in enumerate(actions, 1):  # the first step UP's plan parser rejects on its own
            try:
                reader.parse_plan_string(problem, act + "\n")
            except Exception as step_exc:  # noqa: BLE001
                why = step_exc or type(step_exc).__name__
                return Verdict(False, f"step {i}: {act}: unified-planning: {why}", step=i)
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
