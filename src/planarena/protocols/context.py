"""What a protocol receives: :class:`EvalContext`, built once per evaluate stage by
:func:`planarena.runner.stages.run_evaluate_stage` and handed to each protocol's ``run(ctx)``.

Defined here, below the runner, so that the protocols name it without importing the runner
(tests/test_layers.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from planarena.core.io import JsonlWriter
from planarena.core.problemset import ProblemSet
from planarena.methods.base import Method


@dataclass
class EvalContext:
    """What a protocol needs to produce one method's records (built once per evaluate stage)."""

    method: Method
    settings: dict                  # the ``evaluation`` params (splits, seeds, time_limit)
    seeds: list[int]                # the method's seeds (the first only if it is deterministic)
    problems: ProblemSet | None     # the suite's problems (None for a pool-only method)
    fingerprint: str
    train_info: dict                # train.json
    train_facts: dict               # what the cost table shows (copied into every record)
    kept: list[dict]                # records kept from an earlier run (same fingerprint)
    writer: JsonlWriter
    jobs: int = 0
    done: set = field(default_factory=set)
    #: training wall seconds per unit, ``{"<domain>/seed<seed>": s}`` (the train log's
    #: ``unit_times_s``): a record's ``train_time_s`` is its own model's, not the stage's total
    unit_times: dict = field(default_factory=dict)

    def record_facts(self, domain: str, seed: int) -> dict:
        """:attr:`train_facts` for a record of (``domain``, ``seed``): ``train_time_s`` is the time
        of the model that (domain, seed) decodes with when the train log names it per unit."""
        unit = self.unit_times.get(f"{domain}/seed{seed}")
        if isinstance(unit, (int, float)) and not isinstance(unit, bool) and "train_time_s" in self.train_facts:
            return {**self.train_facts, "train_time_s": float(unit)}
        return self.train_facts

    def __getstate__(self) -> dict:
        """What a worker of the executor receives (protocols' unit functions close over the
        context): everything but the records writer (an open file of the stage process) and the
        kept records (only the stage process reads them)."""
        return {**self.__dict__, "writer": None, "kept": []}


__all__ = ["EvalContext"]
