"""Which result records count, and how they are keyed: the record helpers every reader shares (the
report, the claims, :mod:`planarena.results.matrices`).

Result files are append-only, so a reader takes :func:`latest_records` (the last line of each
attempt) and classifies a record by :func:`record_task` and :func:`record_protocol`.
:func:`instance_index` is the universe of problems per (domain, split) that the matrices are laid
out over. Moved here from :mod:`planarena.report.records`, which re-exports every name.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from typing import Iterable, Mapping, Sequence

from planarena.config import SCHEMA_SPLIT, SPLITS
from planarena.core.problemset import ProblemEntry
from planarena.core.records import POOL_PROTOCOLS, ResultRecord

#: Display order of split names: the SATr splits, then the IPC 2023 Learning Track test splits
#: (docs/concepts.md#problems-suites-and-splits); any other split sorts after these, alphabetically.
SPLIT_ORDER: tuple[str, ...] = SPLITS + ("test-easy", "test-medium", "test-hard", SCHEMA_SPLIT)

#: Successor-ranking metric keys found in records' ``extra`` (``hit@5``, ``acc@10``).
RANK_KEY = re.compile(r"^(hit|acc)@(\d+)$", re.IGNORECASE)


def entries(manifest: Iterable[ProblemEntry | Mapping]) -> list[ProblemEntry]:
    """Manifest rows as :class:`ProblemEntry` (dicts are converted)."""
    return [e if isinstance(e, ProblemEntry) else ProblemEntry(**e) for e in manifest]


def split_sort_key(split: str) -> tuple[int, str]:
    """Sort key putting splits in :data:`SPLIT_ORDER`, unknown splits last (alphabetically)."""
    try:
        return (SPLIT_ORDER.index(split), "")
    except ValueError:
        return (len(SPLIT_ORDER), split)


def record_task(rec: ResultRecord) -> str:
    """The task of a record: plan, rank_successors or learn_schema (docs/concepts.md#tasks).

    In order: ``extra["task"]`` when set; ``rank_successors`` when ``extra`` holds ``hit@k`` or
    ``acc@k`` values; ``plan`` when the method's declared ``extra["tasks"]`` (written by
    :mod:`planarena.runner.stages`) include it or are absent; else the first declared task.
    """
    extra = rec.extra or {}
    task = extra.get("task")
    if isinstance(task, str) and task:
        return task
    if any(RANK_KEY.match(str(k)) for k in extra):
        return "rank_successors"
    tasks = extra.get("tasks")
    if isinstance(tasks, (list, tuple)) and tasks and "plan" not in tasks:
        return str(sorted(tasks)[0])
    return "plan"


def record_protocol(rec: ResultRecord) -> str:
    """The record's evaluation protocol (``extra["protocol"]``, e.g. ``successor_set``) as text;
    ``""`` when it has none. Non-text values are rendered as sorted JSON so they compare stably."""
    value = (rec.extra or {}).get("protocol")
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, sort_keys=True, default=str)


def is_pool_record(rec: ResultRecord) -> bool:
    """A candidate-pool Hit@k record: ``task: rank_successors`` and a protocol of
    :data:`planarena.core.records.POOL_PROTOCOLS` (it has its own subsection of Hit@k)."""
    extra = rec.extra or {}
    return extra.get("task") == "rank_successors" and extra.get("protocol") in POOL_PROTOCOLS


def attempt_key(rec: ResultRecord) -> tuple[str, str, str, str, str, str, int]:
    """Identity of an attempt: (method, task, protocol, domain, split, problem, seed).

    Task (:func:`record_task`) and protocol are part of it because one results file holds both
    the plan records and the successor-ranking records of the same method, problem and seed.
    """
    return (
        rec.method,
        record_task(rec),
        record_protocol(rec),
        rec.domain,
        rec.split,
        rec.problem,
        rec.seed,
    )


def _record_sort_key(r: ResultRecord) -> tuple:
    return (
        r.method,
        r.domain,
        split_sort_key(r.split),
        r.problem,
        r.seed,
        record_task(r),
        record_protocol(r),
    )


def latest_records(records: Iterable[ResultRecord]) -> list[ResultRecord]:
    """The last record per attempt (:func:`attempt_key`), sorted.

    Result files are append-only (``records.JsonlWriter``), so a later line for the same attempt
    supersedes an earlier one (e.g. a rerun with another configuration). Records of another task
    or protocol (a ``rank_successors`` record next to the ``plan`` record of the same method,
    problem and seed) are different attempts and never supersede each other.
    """
    last: dict[tuple, ResultRecord] = {}
    for r in records:
        last[attempt_key(r)] = r
    return sorted(last.values(), key=_record_sort_key)


def plan_records_of(records: Iterable[ResultRecord]) -> list[ResultRecord]:
    """The latest records (:func:`latest_records`) of the ``plan`` task."""
    return [r for r in latest_records(records) if record_task(r) == "plan"]


def method_order(records: Iterable[ResultRecord]) -> list[str]:
    """Method names sorted by (family, method): methods of one paper stay together."""
    family: dict[str, str] = {}
    for r in records:
        family.setdefault(r.method, r.family or "")
    return sorted(family, key=lambda m: (family[m], m))


def instance_index(
    manifest: Iterable[ProblemEntry | Mapping],
    records: Iterable[ResultRecord] = (),
    domains: Sequence[str] = (),
    splits: Sequence[str] = (),
) -> dict[tuple[str, str], frozenset[str]]:
    """Problems per (domain, split), over every domain and split known from any input.

    The universe of domains (splits) is the union of those in params, the manifest and the
    records; every combination is present, with an empty set when it has no instances.
    """
    problems: dict[tuple[str, str], set[str]] = defaultdict(set)
    for e in entries(manifest):
        problems[(e.domain, e.split)].add(e.problem)
    records = list(records)
    all_domains = set(domains) | {d for d, _ in problems} | {r.domain for r in records}
    all_splits = set(splits) | {s for _, s in problems} | {r.split for r in records}
    return {
        (d, s): frozenset(problems.get((d, s), ()))
        for d in sorted(all_domains)
        for s in sorted(all_splits, key=split_sort_key)
    }


__all__ = ["RANK_KEY", "SPLIT_ORDER", "attempt_key", "entries", "instance_index", "is_pool_record", "latest_records",
           "method_order", "plan_records_of", "record_protocol", "record_task", "split_sort_key"]
