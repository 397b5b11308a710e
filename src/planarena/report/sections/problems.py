"""Section "Problems" (first, as in Downward Lab: errors before numbers).

Unexplained errors and diverged runs, plans the independent validator rejected, the planning
stage's outcomes, empty splits, and data issues that would silently skew numbers (stale records,
incomplete seeds, superseded lines, mixed configurations).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

import pandas as pd

from planarena.config import SCHEMA_SPLIT
from planarena.core.records import ResultRecord
from planarena.report.markdown import examples, md_table, md_text
from planarena.report.records import is_pool_record, latest_records, record_task, split_sort_key

PLAN_STAGE_COLUMNS = (
    "Domain",
    "Split",
    "instances",
    "solved+validated",
    "rejected",
    "unsolved",
    "timeout",
    "memout",
    "error",
    "missing",
)


def _rejection_reason(reason: Any, validated_by: Any = "", has_validator_field: bool = True) -> str:
    if reason:
        return str(reason)
    if has_validator_field and not validated_by:
        return "(not validated: no validator verdict recorded)"
    return "(validator gave no reason)"


def failed_runs_table(records: Iterable[ResultRecord]) -> pd.DataFrame:
    """Records with outcome ``error`` or ``diverged``, grouped by method, cell and reason.

    Columns: Method, Domain, Split, Outcome, Attempts, Failure reason, Examples (all text).
    """
    groups: dict[tuple, list[str]] = defaultdict(list)
    for r in latest_records(records):
        if r.outcome in ("error", "diverged"):
            reason = r.failure_reason or "(no failure reason recorded)"
            groups[(r.method, r.domain, r.split, r.outcome, reason)].append(
                f"{r.problem} (seed {r.seed})"
            )
    rows = [
        {
            "Method": m,
            "Domain": d,
            "Split": s,
            "Outcome": o,
            "Attempts": str(len(ex)),
            "Failure reason": md_text(reason),
            "Examples": md_text(examples(ex), 10_000),
        }
        for (m, d, s, o, reason), ex in sorted(
            groups.items(),
            key=lambda kv: (kv[0][0], kv[0][1], split_sort_key(kv[0][2]), *kv[0][3:]),
        )
    ]
    return pd.DataFrame(
        rows,
        columns=["Method", "Domain", "Split", "Outcome", "Attempts", "Failure reason", "Examples"],
    )


def rejected_plans_table(
    records: Iterable[ResultRecord], plan_records: Iterable[Mapping] = ()
) -> pd.DataFrame:
    """Plans with outcome ``solved`` that the validator did not accept, with the validator's reason.

    Covers method results of the ``plan`` task (other tasks produce no plan to validate) and the
    planning stage's reference plans (source ``plan stage (<planner>)``). None of them counts as
    solved anywhere in the report. Columns: Source, Domain, Split, Plans, Validator reason,
    Examples.
    """
    groups: dict[tuple, list[str]] = defaultdict(list)
    for r in latest_records(records):
        if record_task(r) == "plan" and r.outcome == "solved" and not r.validated:
            reason = _rejection_reason(r.validator_reason, r.validated_by)
            groups[(r.method, r.domain, r.split, reason)].append(f"{r.problem} (seed {r.seed})")
    for p in plan_records:
        if p.get("outcome") == "solved" and not p.get("validated"):
            source = f"plan stage ({p.get('planner') or 'unknown planner'})"
            reason = _rejection_reason(p.get("validator_reason"), has_validator_field=False)
            groups[(source, p.get("domain"), p.get("split"), reason)].append(str(p.get("problem")))
    rows = [
        {
            "Source": src,
            "Domain": d,
            "Split": s,
            "Plans": str(len(ex)),
            "Validator reason": md_text(reason),
            "Examples": md_text(examples(ex), 10_000),
        }
        for (src, d, s, reason), ex in sorted(
            groups.items(),
            key=lambda kv: (kv[0][0], str(kv[0][1]), split_sort_key(str(kv[0][2])), kv[0][3]),
        )
    ]
    return pd.DataFrame(
        rows, columns=["Source", "Domain", "Split", "Plans", "Validator reason", "Examples"]
    )


def plan_stage_summary(
    plan_records: Iterable[Mapping], index: Mapping[tuple[str, str], frozenset[str]]
) -> pd.DataFrame:
    """Planning-stage outcomes per (domain, split) (columns :data:`PLAN_STAGE_COLUMNS`).

    ``missing``: manifest instances without a planning record. Empty splits are left out (they
    are listed once under "Empty splits").
    """
    counts: dict[tuple, Counter] = defaultdict(Counter)
    seen: dict[tuple, set] = defaultdict(set)
    for p in plan_records:
        key = (p.get("domain"), p.get("split"))
        if p.get("problem") not in index.get(key, ()):
            continue
        seen[key].add(p.get("problem"))
        outcome = p.get("outcome")
        if outcome == "solved":
            counts[key]["solved+validated" if p.get("validated") else "rejected"] += 1
        elif outcome in ("unsolved", "timeout", "memout", "error"):
            counts[key][outcome] += 1
        else:
            counts[key]["error"] += 1
    rows = []
    for (d, s), problems in index.items():
        if not problems:
            continue
        c = counts[(d, s)]
        row = {"Domain": d, "Split": s, "instances": len(problems)}
        row.update({k: c[k] for k in PLAN_STAGE_COLUMNS[3:9]})
        row["missing"] = len(problems) - len(seen[(d, s)])
        rows.append(row)
    return pd.DataFrame(rows, columns=list(PLAN_STAGE_COLUMNS))


def plan_stage_failures(plan_records: Iterable[Mapping]) -> pd.DataFrame:
    """Failure reasons of planner attempts (``attempts[*].failure_reason``) of unsolved problems.

    Columns: Domain, Split, Planner, Outcome, Problems, Reason, Examples.
    """
    groups: dict[tuple, list[str]] = defaultdict(list)
    for p in plan_records:
        if p.get("outcome") in ("solved", None):
            continue
        for a in p.get("attempts") or []:
            if a.get("outcome") in ("error", "memout", "timeout") or a.get("failure_reason"):
                reason = a.get("failure_reason") or f"({a.get('outcome')}, no reason recorded)"
                key = (
                    str(p.get("domain")),
                    str(p.get("split")),
                    str(a.get("config")),
                    str(a.get("outcome")),
                    reason,
                )
                groups[key].append(str(p.get("problem")))
    rows = [
        {
            "Domain": d,
            "Split": s,
            "Planner": cfg,
            "Outcome": o,
            "Problems": str(len(ex)),
            "Reason": md_text(reason),
            "Examples": md_text(examples(ex), 10_000),
        }
        for (d, s, cfg, o, reason), ex in sorted(
            groups.items(), key=lambda kv: (kv[0][0], split_sort_key(kv[0][1]), *kv[0][2:])
        )
    ]
    return pd.DataFrame(
        rows, columns=["Domain", "Split", "Planner", "Outcome", "Problems", "Reason", "Examples"]
    )


def unknown_problem_notes(
    records: Sequence[ResultRecord],
    plan_records: Sequence[Mapping],
    index: Mapping[tuple[str, str], frozenset[str]],
) -> list[str]:
    """Records of problems the manifest does not have (stale results of another problem set), one
    markdown sentence per (method, domain, split) and one for the planning stage.

    Candidate-pool records (:func:`planarena.report.records.is_pool_record`) are not about
    manifest problems (their ``split`` is the protocol's, e.g. ``same domain``, and their
    ``problem`` the encoder), nor are schema-learning (``learn_schema``) records (their ``problem``
    is the domain), so they are never listed here.
    """
    notes: list[str] = []
    stale: dict[tuple, list[str]] = defaultdict(list)
    for r in latest_records(records):
        # a schema-learning record is about a domain (its ``problem`` is the domain's name, by the
        # protocol's contract), not a manifest problem
        if is_pool_record(r) or record_task(r) == "learn_schema":
            continue
        if r.problem not in index.get((r.domain, r.split), ()):
            stale[(r.method, r.domain, r.split)].append(f"{r.problem} (seed {r.seed})")
    for (m, d, s), ex in sorted(
        stale.items(), key=lambda kv: (kv[0][0], kv[0][1], split_sort_key(kv[0][2]))
    ):
        notes.append(
            f"`{m}` has {len(ex)} record(s) in `{d}/{s}` for problems not in the manifest "
            f"(ignored): {md_text(examples(ex), 10_000)}"
        )
    stale_plans = sorted(
        f"{p.get('domain')}/{p.get('split')}/{p.get('problem')}"
        for p in plan_records
        if p.get("problem") not in index.get((p.get("domain"), p.get("split")), ())
    )
    if stale_plans:
        notes.append(
            f"planning stage has {len(stale_plans)} record(s) for problems not in the manifest "
            f"(ignored): {md_text(examples(stale_plans), 10_000)}"
        )
    return notes


def consistency_notes(
    records: Sequence[ResultRecord],
    plan_records: Sequence[Mapping],
    index: Mapping[tuple[str, str], frozenset[str]],
    reference: Iterable[str] = (),
) -> tuple[list[str], list[str]]:
    """Data issues (one markdown sentence each), as ``(problems, expected)``.

    Problems (they would silently skew numbers): a learned or planner row with records for only part
    of a split (missing records count as unsolved), records of one method from several
    configurations. Expected (listed on the detail page only): incomplete seeds of ``reference``
    rows (floors and ceilings may be measured on part of a split by configuration) and superseded
    lines (a resumed or repeated run writes an attempt again; the last line counts). Records of
    unknown problems are :func:`unknown_problem_notes`."""
    reference = set(reference)
    notes: list[str] = []
    expected: list[str] = []
    latest = latest_records(records)
    attempted: dict[tuple, set[str]] = defaultdict(set)
    for r in latest:
        if record_task(r) == "plan" and r.problem in index.get((r.domain, r.split), ()):
            attempted[(r.method, r.domain, r.split, r.seed)].add(r.problem)
    for (m, d, s, seed), probs in sorted(
        attempted.items(), key=lambda kv: (kv[0][0], kv[0][1], split_sort_key(kv[0][2]), kv[0][3])
    ):
        n = len(index[(d, s)])
        if len(probs) < n:
            (expected if m in reference else notes).append(
                f"`{m}` seed {seed} has records for {len(probs)} of {n} instances of `{d}/{s}`; "
                "the missing ones count as unsolved"
            )
    superseded = len(records) - len(latest)
    if superseded:
        expected.append(
            f"{superseded} superseded record(s) (same method, task, protocol, problem and seed "
            "written again) ignored; the last line of each attempt is used"
        )
    hashes: dict[str, set[str]] = defaultdict(set)
    for r in latest:
        hashes[r.method].add(r.config_hash or "(none)")
    for m in sorted(hashes):
        if len(hashes[m]) > 1:
            notes.append(
                f"`{m}`: the records in use come from {len(hashes[m])} configurations "
                f"(config_hash {', '.join(sorted(hashes[m]))})"
            )
    return notes, expected


@dataclass
class Problems:
    """The tables of the Problems section (see :func:`analyse`)."""

    failed: pd.DataFrame
    rejected: pd.DataFrame
    plan_summary: pd.DataFrame
    plan_failures: pd.DataFrame
    consistency: list[str]
    index: Mapping[tuple[str, str], frozenset[str]]
    n_plan_records: int
    unknown: list[str] = field(default_factory=list)
    #: data notes that are expected outcomes (detail page only): see :func:`consistency_notes`
    expected: list[str] = field(default_factory=list)
    #: floor rows, whose plans the validator is expected to reject now and then
    floors: frozenset[str] = frozenset()
    #: splits the planning stage does not plan (the schema-learning test problems)
    unplanned_splits: frozenset[str] = frozenset()

    def expected_rejections(self) -> pd.Series:
        """Rows of :attr:`rejected` that are measured outcomes, not problems: a floor's plans, and
        plans found in a *learned* domain (split ``schema-test``): the true domain's validator
        rejecting them is how an unsound learned schema shows, and the schema table counts it."""
        return self.rejected["Source"].isin(self.floors) | (self.rejected["Split"] == SCHEMA_SPLIT)

    def rejected_in_box(self) -> pd.DataFrame:
        """Rejected plans that need a reader's attention (every row but :meth:`expected_rejections`)."""
        return self.rejected[~self.expected_rejections()]

    def plan_stage_problems(self) -> pd.DataFrame:
        """Planning-stage cells with an error, a rejected reference plan or missing records (its
        timeouts and unsolved problems are expected outcomes, counted on the detail page)."""
        cells = self.plan_summary[~self.plan_summary["Split"].isin(self.unplanned_splits)]
        return cells[cells[["rejected", "error", "missing"]].sum(axis=1) > 0]

    def empty_splits(self) -> list[tuple[str, str]]:
        """(domain, split) pairs of the index without instances (declared in params, in the
        manifest or in a record of a manifest problem's task, but empty)."""
        return [(d, s) for (d, s), probs in self.index.items() if not probs]


def analyse(
    records: Sequence[ResultRecord],
    plan_records: Sequence[Mapping],
    index: Mapping[tuple[str, str], frozenset[str]],
    roles: Mapping[str, str] | None = None,
    unplanned_splits: Iterable[str] = (),
) -> Problems:
    """Every table of the section, from all records (superseded lines included), the planning
    stage's records and the instance index (:func:`planarena.report.records.instance_index`,
    built without candidate-pool records: their protocol splits are not problem-set splits).

    ``roles``: method -> :attr:`ReportTraits.role` (floors' rejected plans and reference rows'
    partial records are expected outcomes, not problems); ``unplanned_splits``: splits the planning
    stage does not plan (no reference plan is expected there)."""
    roles = roles or {}
    consistency, expected = consistency_notes(
        records, plan_records, index, [m for m, r in roles.items() if r in ("floor", "ceiling")])
    return Problems(
        failed=failed_runs_table(records),
        rejected=rejected_plans_table(records, plan_records),
        plan_summary=plan_stage_summary(plan_records, index),
        plan_failures=plan_stage_failures(plan_records),
        consistency=consistency,
        index=index,
        n_plan_records=len(plan_records),
        unknown=unknown_problem_notes(records, plan_records, index),
        expected=expected,
        floors=frozenset(m for m, r in roles.items() if r == "floor"),
        unplanned_splits=frozenset(unplanned_splits),
    )


#: Bullets of the front page's problems box before "… N more".
BOX_LINES = 12


def box_lines(p: Problems, detail_link: str = "detail/problems.md") -> list[str]:
    """The front page's problems box: one bullet per problem that needs a reader's attention
    (Downward Lab's "unexplained errors"), most serious first: error and diverged attempts, plans
    the validator rejected (of any row but a floor), records of problems not in the manifest,
    planning-stage errors, rejected reference plans or missing planning records, then data issues
    (missing records of a learned or planner row, mixed configurations). At most :data:`BOX_LINES`
    of them and a line pointing to ``detail_link`` for the rest; ``["None."]`` when there is
    nothing to report. Expected outcomes (a floor's rejected plans, planner timeouts, empty
    splits, superseded lines, reference rows measured on part of a split) are counted on the
    detail page only."""
    out: list[str] = []
    for r in p.failed.to_dict("records"):
        out.append(f"{r['Attempts']} `{r['Outcome']}` attempt(s) of `{r['Method']}` in `{r['Domain']}/{r['Split']}`: "
                   f"{md_text(r['Failure reason'], 120)}")
    for r in p.rejected_in_box().to_dict("records"):
        source = r["Source"] if r["Source"].startswith("plan stage") else f"`{r['Source']}`"
        out.append(f"{r['Plans']} plan(s) of {source} in `{r['Domain']}/{r['Split']}` rejected by the "
                   f"validator: {md_text(r['Validator reason'], 120)}")
    out += p.unknown
    if p.n_plan_records:
        bad = p.plan_stage_problems()
        if not bad.empty:
            cells = ", ".join(f"`{r['Domain']}/{r['Split']}`" for r in bad.to_dict("records"))
            out.append(f"planning stage: errors, rejected reference plans or missing records in {cells}")
    out += p.consistency
    if not out:
        return ["None."]
    lines = [f"- {line}" for line in out[:BOX_LINES]]
    if len(out) > BOX_LINES:
        lines.append(f"- … and {len(out) - BOX_LINES} more: [{detail_link}]({detail_link})")
    return lines


def render(p: Problems) -> list[str]:
    """Markdown lines of the section (the detail page; the front page has :func:`box_lines`)."""
    out = ["## Problems", ""]
    out += ["### Errors and diverged runs", ""]
    out.append(
        md_table(p.failed)
        if not p.failed.empty
        else "None: no record has outcome `error` or `diverged`."
    )
    out += ["", "### Plans rejected by the validator", ""]
    if p.rejected.empty:
        out.append("None: every plan reported as solved was accepted by the validator.")
    else:
        out.append(
            "These plans reported `solved` but the independent validator did not accept them; "
            "they count as unsolved everywhere."
        )
        out += ["", md_table(p.rejected)]
    out += ["", "### Records of problems not in the manifest", ""]
    out += [f"- {n}" for n in p.unknown] or [
        "None (candidate-pool records name their protocol's split and encoder, not a manifest "
        "problem, and are not checked here)."
    ]
    out += ["", "### Planning stage (reference plans, `data/plans/records.jsonl`)", ""]
    if p.n_plan_records == 0:
        out.append("No planning-stage records found.")
    else:
        bad = ["rejected", "unsolved", "timeout", "memout", "error", "missing"]
        planned = p.plan_summary[~p.plan_summary["Split"].isin(p.unplanned_splits)]
        issues = planned[planned[bad].sum(axis=1) > 0]
        total = int(planned["instances"].sum())
        solved = int(planned["solved+validated"].sum())
        out.append(f"{solved} of {total} instances have a validated reference plan"
                   + (f" (splits the planning stage does not plan: {', '.join(f'`{s}`' for s in sorted(p.unplanned_splits))})"
                      if p.unplanned_splits else "") + ".")
        if not issues.empty:
            out += [
                "",
                "Domains and splits with unsolved, failed or missing planning runs:",
                "",
                md_table(issues),
            ]
        if not p.plan_failures.empty:
            out += [
                "",
                "Planner attempt failures of problems without a plan:",
                "",
                md_table(p.plan_failures),
            ]
    out += ["", "### Empty splits", ""]
    empty = [f"- `{d}/{s}`: no instances" for d, s in p.empty_splits()]
    out += empty or ["None: every domain has instances in every split."]
    out += ["", "### Result data consistency", ""]
    out += [f"- {n}" for n in p.consistency] or ["No missing records and no mixed configurations."]
    out += ["", "### Expected outcomes (not problems)", ""]
    floors = p.rejected[p.rejected["Source"].isin(p.floors)]
    expected = [f"{int(floors['Plans'].astype(int).sum())} plan(s) of floor rows rejected by the validator "
                "(a floor exists to show that; listed above)"] if not floors.empty else []
    learned = p.rejected[(p.rejected["Split"] == SCHEMA_SPLIT) & ~p.rejected["Source"].isin(p.floors)]
    if not learned.empty:
        expected.append(f"{int(learned['Plans'].astype(int).sum())} plan(s) found in learned domains "
                        f"(`{SCHEMA_SPLIT}`) rejected by the true domain's validator: the learned schemas "
                        "are unsound there (the schema table counts it; listed above)")
    expected += p.expected
    out += [f"- {n}" for n in expected] or ["None."]
    return out
