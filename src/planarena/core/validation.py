"""Independent plan validation with unified-planning's ``SequentialPlanValidator``.

DESIGN.md, "Independent validation": a plan counts as solved only if this validator, reading the
PDDL files (not the method's own simulator, not pymimir), accepts it. The parsed UP problem is cached
per (domain file, problem file), so validating many plans of one problem parses it once.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

VALIDATOR_NAME = "unified-planning SequentialPlanValidator"


@dataclass(frozen=True)
class Verdict:
    """Validator verdict: ``valid``; ``reason`` is the validator's reason and message when invalid."""

    valid: bool
    reason: str | None = None


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
        raise ValueError(f"{problem_file}: unified-planning could not parse it: {exc}") from exc
    return reader, problem


@functools.lru_cache(maxsize=1)
def _validator():
    from unified_planning.engines import SequentialPlanValidator

    return SequentialPlanValidator(environment=_env())


def validate_plan(domain_file: str | Path, problem_file: str | Path, actions: list[str]) -> Verdict:
    """Validate a sequential plan (list of ``"(action obj ...)"``) against the PDDL files.

    Returns a :class:`Verdict`; never raises for an invalid plan. A plan whose text cannot even be
    mapped to the problem (unknown action or object) is invalid with that reason.

    Raises:
        ValueError: the PDDL files themselves cannot be parsed by unified-planning (names the file).
    """
    reader, problem = _parsed(str(domain_file), str(problem_file))
    text = "\n".join(actions) + "\n"
    try:
        plan = reader.parse_plan_string(problem, text)
    except Exception as exc:
        return Verdict(False, f"plan does not parse against the problem: {exc}")
    result = _validator().validate(problem, plan)
    if result.status.name == "VALID":
        return Verdict(True, None)
    messages = "; ".join(m.message for m in (result.log_messages or []))
    reason = result.reason.name if result.reason is not None else "INVALID"
    return Verdict(False, f"{reason}: {messages}" if messages else reason)
