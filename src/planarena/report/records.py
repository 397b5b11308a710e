"""What the report reads, and the record helpers every section shares.

Inputs (docs/pipeline.md; all written by earlier stages):

* ``data/results/*.jsonl``: :class:`planarena.core.records.ResultRecord` lines, one per attempt.
* ``data/plans/records.jsonl``: one line per problem from the planning stage (reference plans).
* ``data/problems/manifest.jsonl``: :class:`planarena.core.problemset.ProblemEntry` lines (instance
  counts per domain and split), and the ``schema-test`` entries of ``data/schema/manifest.jsonl``
  (the problems planned with learned domains) when that file exists.

Result files are append-only, so the sections read :func:`latest_records` (the last line of each
attempt) and classify a record by :func:`record_task` and :func:`record_protocol`.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from planarena.config import SCHEMA_SPLIT, SPLITS, Layout
from planarena.core.io import read_jsonl
from planarena.core.problemset import ProblemEntry, ProblemSet
from planarena.core.records import ResultRecord, iter_records
from planarena.methods.base import ReportTraits
from planarena.protocols.pool import PROTOCOLS
from planarena.report.metrics import RANK_KEY

#: Display order of split names: the SATr splits, then the IPC 2023 Learning Track test splits
#: (docs/concepts.md#problems-suites-and-splits); any other split sorts after these, alphabetically.
SPLIT_ORDER: tuple[str, ...] = SPLITS + ("test-easy", "test-medium", "test-hard", SCHEMA_SPLIT)


@dataclass
class ReportInputs:
    """Everything the report reads, already parsed.

    ``records`` are all result records in file order (superseded duplicates included; see
    :func:`latest_records`); ``plan_records`` the planning stage's per-problem dicts;
    ``manifest`` the problem entries; ``domains``/``splits`` optional names declared in params
    (so that a domain or split with zero problems still gets a "no instances" row);
    ``traits`` what each configured method declares for the report
    (:meth:`planarena.methods.base.Method.report_traits`, by method name; a method without an
    entry is a plain model); ``acp_dir`` the transition datasets' folder (``data/acp``) whose
    counts the candidate-pool subsection lists, or ``None``.
    """

    records: list[ResultRecord]
    plan_records: list[dict]
    manifest: list[ProblemEntry]
    domains: tuple[str, ...] = ()
    splits: tuple[str, ...] = ()
    traits: Mapping[str, ReportTraits] = field(default_factory=dict)
    acp_dir: Path | None = None
    #: seeds every bootstrap and Monte-Carlo test of the report (params ``seed``)
    seed: int = 0
    #: time limit in force per method, seconds (T_max of the IPC agile score;
    #: :func:`planarena.report.sections.quality.time_limits` of params)
    time_limits: Mapping[str, float] = field(default_factory=dict)


def load_inputs(
    layout: Layout,
    domains: Sequence[str] = (),
    splits: Sequence[str] = (),
    traits: Mapping[str, ReportTraits] | None = None,
) -> ReportInputs:
    """Read results, planning-stage records and the manifest from ``layout``.

    Raises:
        FileNotFoundError: ``data/problems/manifest.jsonl`` is missing (names the stage to run).
        ValueError: a results or plans line other than the last is not JSON (names file:line).
    """
    problems = ProblemSet(layout.problems)
    files = sorted(Path(layout.results).glob("*.jsonl")) if Path(layout.results).is_dir() else []
    return ReportInputs(
        records=list(iter_records(files)),
        plan_records=read_jsonl(Path(layout.plans) / "records.jsonl"),
        manifest=list(problems.entries) + [ProblemEntry(**row) for row in read_jsonl(Path(layout.schema) / "manifest.jsonl")
                                           if row.get("split") == SCHEMA_SPLIT],
        domains=tuple(domains),
        splits=tuple(splits),
        traits=dict(traits or {}),
        acp_dir=Path(layout.acp),
    )


def declared_names(node: Any, key: str) -> tuple[str, ...]:
    """Names declared under ``node[key]`` when it is a list of names or a mapping keyed by name;
    ``()`` for anything else."""
    value = node.get(key) if isinstance(node, Mapping) else None
    if isinstance(value, Mapping):
        return tuple(str(k) for k in value)
    if isinstance(value, (list, tuple)):
        return tuple(str(v) for v in value if isinstance(v, (str, int)))
    return ()


def declared_domains(params: Mapping) -> tuple[str, ...]:
    """Domains of the selected suite: ``suites.<suite>.domains`` (list, or mapping keyed by name).

    So that a domain that produced zero problems still appears, as "no instances".
    """
    suite = params.get("suite")
    suites = params.get("suites")
    if isinstance(suite, str) and isinstance(suites, Mapping):
        return declared_names(suites.get(suite), "domains")
    return ()


def declared_splits(params: Mapping) -> tuple[str, ...]:
    """Splits methods are asked to run on (``evaluation.splits``); an empty one is reported."""
    return declared_names(params.get("evaluation"), "splits")


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
    :data:`planarena.protocols.pool.PROTOCOLS` (it has its own subsection of Hit@k)."""
    extra = rec.extra or {}
    return extra.get("task") == "rank_successors" and extra.get("protocol") in PROTOCOLS


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
