"""What the report reads, and the record helpers every section shares.

Inputs (docs/pipeline.md; all written by earlier stages):

* ``data/results/*.jsonl``: :class:`planarena.core.records.ResultRecord` lines, one per attempt.
* ``data/plans/records.jsonl``: one line per problem from the planning stage (reference plans).
* ``data/problems/manifest.jsonl``: :class:`planarena.core.problemset.ProblemEntry` lines (instance
  counts per domain and split), and the ``schema-test`` entries of ``data/schema/manifest.jsonl``
  (the problems planned with learned domains) when that file exists.

Result files are append-only, so the sections read :func:`latest_records` (the last line of each
attempt) and classify a record by :func:`record_task` and :func:`record_protocol`. Those record
helpers (and :func:`instance_index`, :func:`split_sort_key`, ...) live in
:mod:`planarena.results.records`, below the report and the claims; this module re-exports them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

from planarena.config import SCHEMA_SPLIT, Layout
from planarena.core.io import read_jsonl
from planarena.core.problemset import ProblemEntry, ProblemSet
from planarena.core.records import ResultRecord, iter_records
from planarena.methods.base import ReportTraits
# the record helpers live in the results layer (planarena.results.records); re-exported here
from planarena.results.records import (  # noqa: F401
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
    #: the problems' folder (``data/problems``): the horizon ceiling reads each held-out problem's
    #: PDDL for a plan-length lower bound (None: optimal plan lengths only)
    problems_root: Path | None = None


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
        problems_root=Path(layout.problems),
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
