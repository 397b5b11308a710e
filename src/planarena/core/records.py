"""Result records and crash-safe JSON-lines files.

A *result record* is one JSON object per attempt of a method on one (problem, seed)
(docs/extending.md#adding-a-method). Every metric of every report is computed from these
records. Files are append-only JSON lines, flushed and fsynced per record, so a stage killed
halfway loses at most the line it was writing; a truncated last line is dropped on read.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field
from typing import Iterable, Iterator

from planarena.core.io import read_jsonl

#: Outcomes of one attempt. Only ``solved`` with ``validated=True`` counts for coverage.
#: ``not_applicable``: the method does not run on the record's domain (one record per domain, task
#: ``not_applicable``, the reason in ``failure_reason``; :meth:`planarena.methods.base.Method.not_applicable`).
OUTCOMES = ("solved", "unsolved", "timeout", "memout", "error", "diverged", "not_applicable")

#: Why an attempt that did not solve its problem stopped (the record's ``extra["stop"]``, written by
#: the harness; :func:`stop_of` classifies records written before it was): ``budget``: a cap or limit
#: the harness or the row set ended it (CPU time, memory, steps, choices, horizon, tokens,
#: expansions, the model's positions), so a larger budget might have solved it; ``dead end``: no
#: applicable or unvisited successor left; ``exhausted``: a complete search ran out of states (no
#: plan exists within its space); ``cycle``: a deterministic policy came back to a state on its
#: path; ``early stop``: a decoder emitted its end token before the goal; ``invalid action``: it
#: proposed a malformed or inapplicable action; ``rejected plan``: it returned a plan the validator
#: rejected; ``error``: the run itself failed (``error``, ``diverged``); ``other``: anything else
#: (e.g. not measured).
STOPS = ("budget", "dead end", "exhausted", "cycle", "early stop", "invalid action", "rejected plan", "error",
         "other")

#: a decoder's structured failure code (``extra["failure"]``, the transformers' decoding) -> stop
_STOP_CODES = {"token_cap": "budget", "positions": "budget", "dead_end": "dead end", "cycle": "cycle",
               "eos_before_goal": "early stop", "malformed": "invalid action", "inapplicable": "invalid action"}

#: (stop, reason fragments) for unsolved attempts without a code, first match wins (lower-cased reason text)
_STOP_REASONS = (
    ("budget", ("choice limit", "within horizon", "max_expansions", "token cap", "time limit", "time_limit",
                "learned positions", "step limit", "max_steps", "expansion limit")),
    ("dead end", ("dead end",)),
    ("exhausted", ("exhausted", "unsolvable")),
    ("cycle", ("cycle",)),
    ("early stop", ("<eos>",)),
    ("invalid action", ("malformed action", "inapplicable action")),
)


def stop_of(outcome: str, failure_reason: str | None = None, extra: dict | None = None) -> str | None:
    """Why an attempt stopped without a plan (one of :data:`STOPS`), or None for ``solved`` and
    ``not_applicable``. An explicit ``extra["stop"]`` wins; ``timeout`` and ``memout`` are budget
    stops; ``error`` and ``diverged`` are errors; an ``unsolved`` attempt is read from its decoder's
    failure code (``extra["failure"]``) when it has one, else from its reason text."""
    if outcome in ("solved", "not_applicable"):
        return None
    if extra and extra.get("stop") in STOPS:
        return extra["stop"]
    if outcome in ("timeout", "memout"):
        return "budget"
    if outcome in ("error", "diverged"):
        return "error"
    if extra and extra.get("failure") in _STOP_CODES:
        return _STOP_CODES[extra["failure"]]
    reason = (failure_reason or "").lower()
    for stop, fragments in _STOP_REASONS:
        if any(f in reason for f in fragments):
            return stop
    return "other"


#: The candidate-pool protocols of EmbedPlan (Appendix A): the ``extra["protocol"]`` of a pool
#: record (``task: rank_successors``). Declared here, with the record, so that both the protocols
#: that write such records (:data:`planarena.protocols.pool.PROTOCOLS`) and the layers that read
#: them (:mod:`planarena.results`) name them without importing each other.
POOL_PROTOCOLS = ("interpolation", "plan_variant", "extrapolation", "multi_domain", "cross_domain",
                  "leave_one_out")


@dataclass
class ResultRecord:
    """One attempt of ``method`` on ``problem`` with ``seed``.

    Fields: ``wall_time`` in seconds; ``peak_memory_mb`` in MiB or ``None`` if unknown;
    ``plan`` is the list of ground actions as ``"(name obj ...)"``; ``validated`` is the verdict of
    the independent validator named in ``validated_by``
    (:data:`planarena.core.validation.VALIDATOR_NAME`; records written before 2026-11-26 name
    unified-planning's SequentialPlanValidator); ``config_hash`` fingerprints the method params and
    inputs, so that a resumed run only skips records made with the same configuration.
    """

    method: str
    family: str
    domain: str
    split: str
    problem: str
    seed: int
    outcome: str
    plan_length: int | None = None
    plan_cost: float | None = None
    validated: bool = False
    validated_by: str | None = None
    validator_reason: str | None = None
    wall_time: float = 0.0
    peak_memory_mb: float | None = None
    failure_reason: str | None = None
    size: int | None = None
    objects: int | None = None
    config_hash: str = ""
    plan: list[str] | None = None
    extra: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.outcome not in OUTCOMES:
            raise ValueError(f"outcome {self.outcome!r} is not one of {OUTCOMES}")

    @property
    def key(self) -> tuple[str, str, str, int]:
        """Identity of the attempt for resuming: (domain, split, problem, seed)."""
        return (self.domain, self.split, self.problem, self.seed)

    @property
    def stop(self) -> str | None:
        """Why the attempt stopped without a plan (:func:`stop_of`); None when solved."""
        if self.outcome == "solved" and not self.validated:
            return "rejected plan"
        return stop_of(self.outcome, self.failure_reason, self.extra)

    @property
    def counts_as_solved(self) -> bool:
        """Coverage rule (docs/concepts.md#coverage-and-plan-quality): solved *and* accepted by the
        independent validator."""
        return self.outcome == "solved" and self.validated

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "ResultRecord":
        known = {f for f in cls.__dataclass_fields__}
        return cls(**{k: v for k, v in d.items() if k in known})


def iter_records(paths: Iterable[str | os.PathLike]) -> Iterator[ResultRecord]:
    """Yield the :class:`ResultRecord` of every line of every file."""
    for p in paths:
        for row in read_jsonl(p):
            yield ResultRecord.from_dict(row)
