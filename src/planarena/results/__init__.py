"""The results layer: result records -> the matrices every statistic is computed on.

One implementation, read by the report (:mod:`planarena.report`) and the claims
(:mod:`planarena.claims`): :mod:`planarena.results.records` (which records count and how they are
keyed: :func:`latest_records`, :func:`plan_records_of`, :func:`instance_index`, ...) and
:mod:`planarena.results.matrices` (:class:`SolvedMatrices`, :class:`HitMatrices`). The unit of every
matrix is the problem, with the seeds nested in it (:data:`UNIT`).

Layering (tests/test_layers.py): this package imports only :mod:`planarena.core`,
:mod:`planarena.config` and :mod:`planarena.stats`; never the report, the claims, the methods or
the runner.
"""

from planarena.results.matrices import (
    SUCCESSOR_SET,
    UNIT,
    HitMatrices,
    HitMeasurements,
    Measurements,
    Problem,
    ProblemMatrix,
    SolvedMatrices,
    rank_records,
    unit_matrix,
    unit_scores,
)
from planarena.results.records import (
    RANK_KEY,
    SPLIT_ORDER,
    attempt_key,
    entries,
    instance_index,
    is_pool_record,
    latest_records,
    method_order,
    plan_records_of,
    record_protocol,
    record_task,
    split_sort_key,
)

__all__ = ["HitMatrices", "HitMeasurements", "Measurements", "Problem", "ProblemMatrix", "RANK_KEY", "SPLIT_ORDER",
           "SUCCESSOR_SET", "SolvedMatrices", "UNIT", "attempt_key", "entries", "instance_index", "is_pool_record",
           "latest_records", "method_order", "plan_records_of", "rank_records", "record_protocol", "record_task",
           "split_sort_key", "unit_matrix", "unit_scores"]
