"""Schema-learning protocol (task ``learn_schema``): successor-set precision and recall of a learned
domain against the true one, and planning with what was learned.

DIAS paper (Reiter, Gebler, Geffner; docs/papers/dias.md), Section 5.1: for each test state ``s``
the sets of successor states under the true and the learned domain are compared; over all test
states this gives TP / FP / FN, precision ``TP / (TP + FP)`` (soundness) and recall ``TP / (TP +
FN)`` (completeness); a run is *sound* with precision 1 and *complete* with recall 1 (the N_s / N_c
/ N_sc counts of its tables). Successor states are compared by what they change (atoms added and
deleted), so a successor equal to ``s`` (an action whose effects already hold) is no successor; both
domains' successors come from pymimir, from injective groundings only (the paper's injective-binding
assumption, Section 3: the walk data has no other; pypddl-datasets' Blocks-3 ``move-t-to-b`` lacks
the paper's ``(not (eq ?bm ?bt))`` and would otherwise stack a block on itself).

Beyond the paper, the harness's own check: each learned domain plans the test problems of its domain
with Fast Downward (LAMA-first; negative preconditions compiled into complement predicates first,
:func:`planarena.core.strips.without_negative_preconditions`), and each plan is validated against
the TRUE domain by the harness's validator; these are ``plan`` records (split ``schema-test``) that enter the coverage table. A plan
that the learned domain allows but the true domain does not is rejected and listed, never counted.

A method whose learned model is not a PDDL domain (the paper's MLP-effects ablation, Section 5.4 and
Table 3) returns a :class:`planarena.methods.base.SuccessorModel`: its successor sets are compared in
the same way, and it writes no ``plan`` records (it has no domain to plan with).

Every row is also measured on the *common* states (``schema.common_states``: the first
``per_problem`` states of the first ``problems`` test problems; the record's ``common_states``), and
the precondition-free floor (block ``states: common``) on those only, since it grounds every object
tuple in every state: so the floor's precision compares with each learned row's on the same states.
The floor still plans every test problem (Fast Downward grounds once per problem), so that the
coverage table tests each learned row against it on all of them.

Records (one JSON line each, :class:`planarena.core.records.ResultRecord`): per (domain, seed) one
``learn_schema`` record (``split="schema-test"``, ``problem=<domain>``) with ``extra``: ``precision``,
``recall``, ``sound``, ``complete``, ``tp``, ``fp``, ``fn``, ``test_states`` and the method's own
facts; and one ``plan`` record per test problem.
"""

from __future__ import annotations

import dataclasses
import json
import re
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from planarena.config import SCHEMA_SPLIT, get
from planarena.datasets.schema import configured_domains
from planarena.core.pddl import parse_domain, parse_problem_of, state_from_atoms
from planarena.core.problemset import ProblemSet
from planarena.core.records import ResultRecord
from planarena.core.strips import without_negative_preconditions
from planarena.datasets.planning import PlannerCache, plan_cached
from planarena.methods.base import Attempt, LearnedDomain, SuccessorModel
from planarena.protocols import coverage

if TYPE_CHECKING:
    from planarena.protocols.context import EvalContext

TASK = "learn_schema"
SPLIT = SCHEMA_SPLIT
#: the nullary predicate and action :func:`all_fluent` adds (PDDL names start with a letter)
_NEVER, _DUMMY = "planarena-never", "planarena-all-fluent"


@dataclass
class SuccessorCounts:
    """Successor-set counts over test states (DIAS paper, Section 5.1)."""

    tp: int = 0
    fp: int = 0
    fn: int = 0
    states: int = 0
    timed_out: bool = False
    #: the counts over the common states only (:func:`common_positions`), when asked for
    common: "SuccessorCounts | None" = None

    def add(self, tp: int, fp: int, fn: int) -> None:
        self.tp, self.fp, self.fn, self.states = self.tp + tp, self.fp + fp, self.fn + fn, self.states + 1

    def facts(self) -> dict:
        """``tp``, ``fp``, ``fn``, ``test_states``, ``precision`` and ``recall`` (None when timed
        out), ``sound``, ``complete`` (False when timed out): a record's fields."""
        done = not self.timed_out
        return {"tp": self.tp, "fp": self.fp, "fn": self.fn, "test_states": self.states,
                "precision": round(self.precision, 6) if done else None,
                "recall": round(self.recall, 6) if done else None,
                "sound": self.sound and done, "complete": self.complete and done}

    @property
    def precision(self) -> float:
        """``TP / (TP + FP)``; 0 when the learned domain generates no successor at all."""
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 0.0

    @property
    def recall(self) -> float:
        """``TP / (TP + FN)``; 1 when no test state has a successor (nothing to miss)."""
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 1.0

    @property
    def sound(self) -> bool:
        """No false successor (and at least one successor generated: an empty domain is not sound)."""
        return self.fp == 0 and self.tp > 0

    @property
    def complete(self) -> bool:
        return self.fn == 0


def all_fluent(domain_text: str) -> str:
    """``domain_text`` plus one action that can never apply (its precondition, the nullary
    ``planarena-never``, is never true) but has every predicate as an effect. pymimir then treats
    every predicate as fluent, so a test state's atoms are taken from the state, not from the
    problem's initial state (a learned domain may leave a predicate that the true domain changes
    without effects). The domain's successors are unchanged.

    Raises:
        ValueError: the text has no ``(:predicates`` section.
    """
    m = re.search(r"\(:predicates(.*?)\)\s*\(:action", domain_text, re.S | re.I)
    if not m:
        raise ValueError("domain has no (:predicates ...) section followed by actions")
    preds = re.findall(r"\(\s*([^\s()]+)((?:\s+\?[^\s()]+)*)\s*\)", m.group(1))
    params = sorted({v for _, args in preds for v in args.split()})
    effects = " ".join(f"({name}{args})" for name, args in preds)
    dummy = (f"\n  (:action {_DUMMY} :parameters ({' '.join(params)})\n"
             f"    :precondition (and ({_NEVER})) :effect (and ({_NEVER}) {effects}))\n")
    text = domain_text[: m.start(1)] + f" ({_NEVER})" + domain_text[m.start(1):]
    end = text.rstrip().rfind(")")
    return text[:end] + dummy + text[end:]


def _changes(state, atoms: frozenset[str]) -> set[frozenset[str]]:
    """What each applicable action changes in ``state`` (``+atom`` / ``-atom``); no-ops dropped."""
    out = set()
    for ga in state.generate_applicable_actions(cache_result=False):
        objects = [o.get_name() for o in ga.get_objects()]
        if ga.get_action().get_name() == _DUMMY or len(set(objects)) < len(objects):
            continue  # the injective-binding assumption (Section 3): one object per argument
        effects = ga.get_conditional_effect()
        if not effects:   # a schema without effects changes nothing
            continue
        eff = effects[0].get_effect()
        add = {str(a) for a in eff.get_add_list()}
        change = frozenset({f"+{a}" for a in add if a not in atoms}
                           | {f"-{d}" for d in (str(x) for x in eff.get_delete_list()) if d in atoms and d not in add})
        if change:
            out.add(change)
    return out


def common_positions(test_states: list[tuple[str, frozenset[str]]], problems: int, per_problem: int) -> frozenset[int]:
    """Positions in ``test_states`` of the *common* states: the first ``per_problem`` states (BFS
    order) of each of the first ``problems`` test problems (in the order they appear). Every row
    is measured on them, the precondition-free floor on them only (it grounds every object tuple),
    so that its precision compares with the learned rows' on the same states."""
    rank: dict[str, int] = {}      # problem -> its place in order of appearance
    taken: dict[str, int] = {}
    out = []
    for i, (name, _) in enumerate(test_states):
        rank.setdefault(name, len(rank))
        taken[name] = taken.get(name, 0) + 1
        if rank[name] < problems and taken[name] <= per_problem:
            out.append(i)
    return frozenset(out)


def successor_counts(true_domain: Path, learned_domain: "Path | SuccessorModel", problems: dict[str, Path],
                     test_states: list[tuple[str, frozenset[str]]], time_limit: float,
                     common: frozenset[int] | None = None) -> SuccessorCounts:
    """Compare successor sets of ``learned_domain`` with ``true_domain`` on ``test_states``.

    Args:
        true_domain, learned_domain: PDDL domain files (normal form, same predicates); the learned
            side may instead be a :class:`planarena.methods.base.SuccessorModel` (a method without a
            PDDL domain: its ``changes`` are compared the same way).
        problems: test problem name -> its PDDL file (objects and static atoms of its states).
        test_states: ``(problem name, atoms)`` pairs; atoms as ``"(pred o ...)"`` texts, static
            atoms included.
        time_limit: CPU seconds (this process's) for the whole comparison, so that a loaded
            machine does not change the outcome; past it the counts so far come back with
            ``timed_out`` set (the paper's Table 2 marks such runs with a dash).
        common: positions of ``test_states`` (:func:`common_positions`) whose counts are also
            summed apart, into the result's ``common`` (measured first, so that a comparison
            past its time limit still has them).

    Raises:
        planarena.core.pddl.PDDLError: a domain or problem file does not parse (names the file).
    """
    start = time.process_time()
    out = SuccessorCounts(common=SuccessorCounts() if common is not None else None)
    # the common states first: a comparison that passes its limit still measured them
    order = sorted(range(len(test_states)), key=lambda i: (common is None or i not in common, i))
    with tempfile.TemporaryDirectory(prefix="planarena-schema-") as tmp:
        model = learned_domain if isinstance(learned_domain, SuccessorModel) else None
        copies = {}
        for tag, path in (("true", true_domain), ("learned", None if model else learned_domain)):
            if path is not None:
                copies[tag] = Path(tmp) / f"{tag}.pddl"
                copies[tag].write_text(all_fluent(Path(path).read_text()))
        domains = {tag: parse_domain(p) for tag, p in copies.items()}
        parsed = {}
        for i in order:
            name, state = test_states[i]
            if time.process_time() - start > time_limit:
                out.timed_out = True
                if out.common is not None and out.common.states < len(common):
                    out.common.timed_out = True
                break
            if name not in parsed:
                parsed[name] = {tag: parse_problem_of(d, problems[name]) for tag, d in domains.items()}
            true = _changes(state_from_atoms(parsed[name]["true"], state), state)
            learned = (model.changes(problems[name], state) if model
                       else _changes(state_from_atoms(parsed[name]["learned"], state), state))
            counts = (len(true & learned), len(learned - true), len(true - learned))
            out.add(*counts)
            if out.common is not None and i in common:
                out.common.add(*counts)
    return out


def unbound_parameters(domain_file: Path) -> tuple[str, int]:
    """The action of ``domain_file`` with the most parameters that occur in no positive
    precondition, and their number: each ranges over every object, so a state has up to
    ``objects ** n`` groundings of it (a guard before :func:`successor_counts` and planning,
    which enumerate them).

    Raises:
        planarena.core.pddl.PDDLError: the file does not parse (names it).
    """
    worst = ("", 0)
    domain = parse_domain(domain_file)  # held: its actions are views into it
    for a in domain.get_actions():
        bound = {t.get_name() for lit in a.get_precondition().get_literals() if lit.get_polarity()
                 and lit.get_atom().get_predicate().get_name() not in ("object", "number", "=")
                 for t in lit.get_atom().get_terms()}
        free = sum(1 for v in a.get_parameters() if v.get_name() not in bound)
        worst = max(worst, (a.get_name(), free), key=lambda x: x[1])
    return worst


class SchemaData:
    """A ``data/schema`` folder (:mod:`planarena.datasets.schema`): problems, test states, info."""

    def __init__(self, root: Path):
        self.root = Path(root)
        self.problems = ProblemSet(self.root)

    def info(self, domain: str) -> dict:
        return json.loads((self.root / domain / "info.json").read_text())

    def test_states(self, domain: str, per_problem: int | None = None) -> list[tuple[str, frozenset[str]]]:
        """``(problem, atoms)`` of the domain's test states, static atoms included; with
        ``per_problem`` the first that many (in BFS order) of each test problem."""
        atoms = json.loads((self.root / domain / "atoms.json").read_text())
        out = []
        taken: dict[str, int] = {}
        for line in (self.root / domain / "test_states.jsonl").read_text().splitlines():
            row = json.loads(line)
            taken[row["problem"]] = taken.get(row["problem"], 0) + 1
            if per_problem is not None and taken[row["problem"]] > per_problem:
                continue
            texts, static = atoms[row["problem"]]["atoms"], atoms[row["problem"]]["static"]
            out.append((row["problem"], frozenset(texts[i] for i in [*static, *row["s"]])))
        return out

    def test_problems(self, domain: str) -> dict[str, Path]:
        return {e.problem: self.problems.problem_file(e) for e in self.problems.select(domain, SPLIT)}


def _too_permissive(domain_file: Path, entries, limit: float) -> str | None:
    """Why the learned domain is not measured (nor planned with): an action whose unbound
    parameters give more than ``limit`` groundings per state on the largest test problem; else None."""
    action, free = unbound_parameters(domain_file)
    objects = max((e.objects for e in entries), default=0)
    if free and objects ** free > limit:
        return (f"not measured: action {action} has {free} parameters in no positive precondition, up to "
                f"{objects}^{free} groundings per state (> schema.max_free_groundings = {limit:g})")
    return None


@dataclass
class _Settings:
    """What :func:`run` reads from params once per stage (units: seconds, groundings)."""

    eval_limit: float
    plan_limit: float
    planner: dict
    max_groundings: float
    per_problem: int | None
    cache: PlannerCache
    common: tuple[int, int] = (1, 50)   # schema.common_states: (problems, per_problem)


def _measure(learned: LearnedDomain, true_domain: Path, tests: dict[str, Path], entries, states,
             cfg: _Settings) -> tuple[str, LearnedDomain, dict]:
    """Successor-set comparison of one learned domain: ``(outcome, learned, extra)``.

    ``learned`` comes back with outcome ``timeout`` when it is too permissive to measure or the
    comparison passed ``schema.eval_time_limit`` (then it is not planned with either), or ``error``
    when pymimir cannot read it; ``extra`` holds the record's precision / recall facts. ``states`` is
    a zero-argument callable giving the test states (read only when a comparison runs)."""
    outcome, extra = learned.outcome, {}
    if learned.outcome != "solved":
        return outcome, learned, extra
    def unreadable(exc: Exception) -> tuple[str, LearnedDomain, dict]:  # an outcome, not a crash
        return "error", dataclasses.replace(learned, outcome="error", failure_reason=f"{type(exc).__name__}: {exc}"), extra

    side = learned.successors if learned.path is None and learned.successors is not None else learned.path
    grounding = side.grounding_domain if isinstance(side, SuccessorModel) else side
    try:
        too_many = _too_permissive(grounding, entries, cfg.max_groundings)
    except Exception as exc:
        return unreadable(exc)
    if too_many:
        extra.update(precision=None, recall=None, sound=False, complete=False, test_states=0)
        return "timeout", dataclasses.replace(learned, outcome="timeout", failure_reason=too_many), extra
    test_states = states()  # the harness's own data: a read error here is a crash, not the method's
    try:
        c = successor_counts(true_domain, side, tests, test_states, cfg.eval_limit,
                             common=common_positions(test_states, *cfg.common))
    except Exception as exc:
        return unreadable(exc)
    if c.timed_out:  # a domain the comparison could not finish is not planned with either
        learned = dataclasses.replace(learned, outcome="timeout", failure_reason=(
            "not planned: the successor comparison passed schema.eval_time_limit"))
    extra.update(c.facts(), common_states=c.common.facts())
    return ("timeout" if c.timed_out else "solved"), learned, extra


def _plan_with(learned: LearnedDomain, problem_file: Path, cfg: _Settings) -> Attempt:
    """One test problem planned with the learned domain (LAMA-first after compiling negative
    preconditions away); a domain that was not measured, failed or cannot be read gives the attempt
    its outcome and reason."""
    if learned.outcome == "timeout":   # too permissive to measure: not planned with (recorded)
        return Attempt("unsolved", failure_reason=learned.failure_reason)
    if learned.outcome != "solved":    # error / diverged: the attempt says the same
        return Attempt(learned.outcome, failure_reason=learned.failure_reason or "no learned domain")
    try:
        with tempfile.TemporaryDirectory(prefix="planarena-plan-") as tmp:
            d, p = without_negative_preconditions(learned.path, problem_file, tmp)
            r = plan_cached("lama_first", d, p, cfg.plan_limit, int(cfg.planner["memory_limit_mb"]), cfg.cache,
                            block=cfg.planner)
        return Attempt(r.outcome, plan=r.plan if r.outcome == "solved" else None, failure_reason=r.failure_reason,
                       wall_time=r.wall_time, extra={"planner": "lama_first on the learned domain", "cached": r.cached})
    except Exception as exc:  # a learned file the planning path cannot read: an outcome
        return Attempt("error", failure_reason=f"{type(exc).__name__}: {exc}")


def run(ctx: "EvalContext") -> int:
    """Measure every (domain, seed) not yet recorded: one ``learn_schema`` record and one ``plan``
    record per test problem. Each domain is one unit of the executor
    (:func:`planarena.core.executor.run_units`: the domains run side by side on the stage's workers,
    its test states read once per unit) and its records come back in domain order, so the records
    file is the same for any ``jobs``; every limit here is CPU time (``schema.eval_time_limit``,
    Fast Downward's own), so that running side by side changes no outcome. Returns the number of
    records written."""
    from planarena.core.executor import run_units

    method = ctx.method
    data = SchemaData(method.layout.schema)
    plan_ctx = dataclasses.replace(ctx, problems=data.problems)
    # a method may measure on the first k test problems (smallest first) and the first m states of
    # each (the precondition-free floor: every grounding applies, tens of thousands per state on the
    # largest test problems, and Fast Downward grounds them all)
    common = get(method.params, "schema.common_states", None) or {}
    common = (int(common.get("problems", 1)), int(common.get("per_problem", 50)))
    only_common = method.config.get("states") == "common"   # the floor: the common states only
    cfg = _Settings(eval_limit=float(get(method.params, "schema.eval_time_limit")),
                    plan_limit=float(get(method.params, "schema.plan_time_limit")),
                    planner=get(method.params, "planners.lama_first"),
                    max_groundings=float(get(method.params, "schema.max_free_groundings")),
                    per_problem=common[1] if only_common else method.config.get("max_test_states"),
                    cache=PlannerCache(method.layout.cache / "fd"), common=common)
    # the floor measures successor sets on the common problems only, but plans every test problem
    # like the learned rows (planning grounds once per problem; the comparison grounds per state),
    # so that the coverage table's paired floor test runs on all of them
    max_problems = method.config.get("max_test_problems")
    measured = common[0] if only_common else max_problems
    failed = ctx.train_info.get("status", "ok") != "ok"
    # a resumed run: the learn_schema records already written decide whether a domain is planned with
    kept = {(r["domain"], r["seed"]): r for r in ctx.kept if (r.get("extra") or {}).get("task") == TASK}
    units = []   # (domain, {seed: failure reason of a kept timeout record or None}) with work left
    for domain in configured_domains(method.params, method.config, data.problems.domains):
        entries = data.problems.select(domain, SPLIT)[:max_problems]
        left = {seed: (kept[(domain, seed)]["failure_reason"]
                       if kept.get((domain, seed), {}).get("outcome") == "timeout" else None)
                for seed in ctx.seeds
                if (TASK, domain, SPLIT, domain, seed) not in ctx.done
                or (method.plans_with_learned_domain
                    and any(("plan", domain, SPLIT, e.problem, seed) not in ctx.done for e in entries))}
        if left:
            units.append((domain, left))

    def measure_domain(unit: tuple[str, dict]) -> list[dict]:
        """One domain's records, every seed: its learn_schema record, then its plan records."""
        domain, left = unit
        true_domain = data.problems.domain_file(domain)
        entries = data.problems.select(domain, SPLIT)[:max_problems]
        measured_entries = entries[:measured]
        tests = {e.problem: data.problems.problem_file(e) for e in measured_entries}
        cached: list = []

        def states():  # read once per domain, when first needed
            if not cached:
                cached.append([s for s in data.test_states(domain, cfg.per_problem) if s[0] in tests])
            return cached[0]

        out: list[dict] = []
        for seed, kept_timeout in left.items():
            start = time.perf_counter()
            key = (TASK, domain, SPLIT, domain, seed)
            learned = (LearnedDomain("error", failure_reason=f"training failed: {ctx.train_info.get('reason')}")
                       if failed else method.learned_domain(domain, seed))
            if key in ctx.done and kept_timeout is not None:
                learned = dataclasses.replace(learned, outcome="timeout", failure_reason=kept_timeout)
            if key not in ctx.done:
                outcome, learned, extra = _measure(learned, true_domain, tests, measured_entries, states, cfg)
                out.append(ResultRecord(
                    method=method.name, family=method.family, domain=domain, split=SPLIT, problem=domain,
                    seed=seed, outcome=outcome, wall_time=round(time.perf_counter() - start, 4),
                    failure_reason=learned.failure_reason
                    or ("successor comparison past schema.eval_time_limit" if outcome == "timeout" else None),
                    config_hash=ctx.fingerprint, extra={**ctx.record_facts(domain, seed), "task": TASK, **learned.extra, **extra}).to_dict())
            if not method.plans_with_learned_domain:
                continue   # a successor model without a PDDL domain (MLP effects): nothing to plan with
            for entry in entries:
                if ("plan", domain, SPLIT, entry.problem, seed) in ctx.done:
                    continue
                t0 = time.perf_counter()
                res = _plan_with(learned, data.problems.problem_file(entry), cfg)
                out.append(coverage.record(plan_ctx, entry, seed, res, time.perf_counter() - t0).to_dict())
        return out

    def lost(unit: tuple[str, dict], reason: str) -> list[dict]:
        """A domain whose worker kept dying (executor retries exhausted): an ``error``
        learn_schema record per seed with the reason (an outcome, not a crashed stage), except for
        a seed whose learn_schema record was already kept (only its plans were missing)."""
        domain, left = unit
        return [ResultRecord(method=method.name, family=method.family, domain=domain, split=SPLIT, problem=domain,
                             seed=seed, outcome="error", wall_time=0.0, failure_reason=reason,
                             config_hash=ctx.fingerprint, extra={"task": TASK}).to_dict() for seed in left
                if (TASK, domain, SPLIT, domain, seed) not in ctx.done]

    n = 0
    for recs in run_units(measure_domain, units, desc=f"evaluate {method.name} (schema)", on_failure=lost,
                          jobs=ctx.jobs, parallel=method.parallel, device=method.unit_device()):
        for rec in recs:
            ctx.writer.write(rec)
            n += 1
    return n


__all__ = ["SPLIT", "TASK", "SchemaData", "SuccessorCounts", "all_fluent", "common_positions", "run", "successor_counts"]
