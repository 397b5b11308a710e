"""The ``train`` and ``evaluate`` stages, one instance per method (``foreach`` over ``methods``).

Evaluation writes ``data/results/<method>.jsonl``, one :class:`ResultRecord` per (problem, seed),
appending and fsyncing each line. It is resumable: records already written *with the same config
fingerprint* are skipped; records made under another configuration are dropped first. A method that
raises is recorded as outcome ``error`` with the exception text, never a crashed stage.
"""

from __future__ import annotations

import hashlib
import json
import time
import traceback
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from tqdm import tqdm

from planarena.config import Layout, get, n_jobs
from planarena.core.io import JsonlWriter, read_jsonl, stable_hash, write_jsonl
from planarena.core.problemset import ProblemEntry, ProblemSet
from planarena.core.records import ResultRecord
from planarena.core.validation import VALIDATOR_NAME, validate_plan
from planarena.methods import Attempt, Method, PlanningTask, resolve


def build_method(instance: str, params: dict, layout: Layout) -> Method:
    """Instantiate ``methods.<instance>`` (raises KeyError listing valid names if unknown)."""
    cls, config = resolve(instance, params)
    return cls(instance, config, params, layout)


def run_train_stage(params: dict, layout: Layout, instance: str) -> dict:
    """Train one method and write ``data/models/<instance>/train.json`` (training facts + seconds).

    A training run that raises is recorded in ``train.json`` with ``status: failed`` and the
    traceback; the evaluate stage then records every attempt as ``error`` with that reason.
    """
    method = build_method(instance, params, layout)
    model_dir = layout.models / instance
    model_dir.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    try:
        info = {"status": "ok", **(method.train(model_dir) or {})}
    except Exception as exc:  # a diverged or broken training run is an outcome, not a crash
        info = {"status": "failed", "reason": f"{type(exc).__name__}: {exc}", "traceback": traceback.format_exc()}
    info["train_time_s"] = info.get("train_time_s", round(time.perf_counter() - start, 3))
    (model_dir / "train.json").write_text(json.dumps(info, indent=2, sort_keys=True) + "\n")
    print(f"train {instance}: {info['status']} in {info['train_time_s']} s")
    return info


def _manifest_digest(layout: Layout) -> str:
    path = layout.problems / "manifest.jsonl"
    return hashlib.sha256(path.read_bytes()).hexdigest()[:12] if path.exists() else "no-manifest"


def config_fingerprint(method: Method, params: dict, layout: Layout) -> str:
    """Fingerprint of everything that changes this method's results: its params block, the params
    keys it declares in ``uses_params``, the evaluation settings, the problem manifest and its
    trained model's ``train.json``."""
    train_json = layout.models / method.name / "train.json"
    parts = {
        "method": method.config,
        "uses": {k: get(params, k, None) for k in method.uses_params},
        "evaluation": {k: v for k, v in get(params, "evaluation").items() if k != "jobs"},
        "manifest": _manifest_digest(layout),
        # training facts minus timings: retraining to the same model keeps the records
        "model": {k: v for k, v in json.loads(train_json.read_text()).items() if not k.endswith("_s")}
        if train_json.exists() else None,
    }
    return stable_hash(parts)


def _seeds(method: Method, params: dict) -> list[int]:
    seeds = [int(s) for s in (method.config.get("seeds") or get(params, "evaluation.seeds"))]
    return seeds if method.stochastic else seeds[:1]


def run_evaluate_stage(params: dict, layout: Layout, instance: str) -> Path:
    """Evaluate one method on every problem of ``evaluation.splits`` for each seed (resumable)."""
    method = build_method(instance, params, layout)
    # the suite's problems are needed for planning and the successor-set protocol only (a
    # pool-only method such as EmbedPlan reads data/acp)
    needs_suite = "plan" in method.tasks or (
        "rank_successors" in method.tasks and "successor_set" in method.successor_protocols)
    ps = ProblemSet(layout.problems) if needs_suite else None
    model_dir = layout.models / instance
    train_info = json.loads((model_dir / "train.json").read_text()) if (model_dir / "train.json").exists() else {}
    if train_info.get("status", "ok") == "ok":
        method.load(model_dir)
    fingerprint = config_fingerprint(method, params, layout)
    # training facts the report's cost table shows (only for methods that learned something)
    train_facts = {k: train_info[k] for k in ("train_time_s", "parameters", "tree_nodes")
                   if k in train_info and train_info.get("trained", True)}
    out = layout.results / f"{instance}.jsonl"

    # keep only records of this configuration (atomically), then append
    old = read_jsonl(out)
    kept = [r for r in old if r.get("config_hash") == fingerprint]
    if len(kept) != len(old):
        write_jsonl(out, kept)
    done = {(_task(r), r["domain"], r["split"], r["problem"], r["seed"]) for r in kept}

    splits = method.config.get("splits") or get(params, "evaluation.splits")
    time_limit = float(method.config.get("time_limit", get(params, "evaluation.time_limit")))
    todo: list[tuple[ProblemEntry, int]] = [
        (e, seed)
        for e in (ps.entries if ps else [])
        if e.split in splits and "plan" in method.tasks
        for seed in _seeds(method, params)
        if ("plan", e.domain, e.split, e.problem, seed) not in done
    ]
    print(f"evaluate {instance}: {len(done)} records kept, {len(todo)} plan attempts to run")

    def attempt(item: tuple[ProblemEntry, int]) -> tuple[Attempt, float]:
        entry, seed = item
        if train_info.get("status", "ok") != "ok":
            return Attempt("error", failure_reason=f"training failed: {train_info.get('reason')}"), 0.0
        task = PlanningTask(entry, ps.domain_file(entry.domain), ps.problem_file(entry), time_limit)
        start = time.perf_counter()
        try:
            res = method.solve(task, seed)
        except Exception as exc:
            res = Attempt("error", failure_reason=f"{type(exc).__name__}: {exc}")
        return res, time.perf_counter() - start

    with JsonlWriter(out) as writer:
        if method.parallel:
            pool = ThreadPoolExecutor(max_workers=n_jobs(params))
            results = pool.map(attempt, todo)
        else:
            pool, results = None, map(attempt, todo)
        for (entry, seed), (res, elapsed) in tqdm(zip(todo, results), total=len(todo), desc=f"evaluate {instance}"):
            writer.write(_record(method, ps, entry, seed, res, elapsed, fingerprint, train_facts).to_dict())
        if pool:
            pool.shutdown()
        if "rank_successors" in method.tasks and "successor_set" in method.successor_protocols:
            _rank_successors(method, params, layout, ps, done, fingerprint, train_facts, writer)
        if "rank_successors" in method.tasks and "pool" in method.successor_protocols:
            done_pool = {((r.get("extra") or {}).get("protocol"), r["domain"], r["split"], r["problem"], r["seed"])
                         for r in kept if _task(r) == "rank_successors"}
            n = 0
            for rec in tqdm(method.pool_records(done_pool, fingerprint, train_facts), desc=f"pool Hit@k {instance}"):
                writer.write(rec)
                n += 1
            print(f"evaluate {instance}: {n} pool Hit@k records written")
    return out


def _task(row: dict) -> str:
    return (row.get("extra") or {}).get("task", "plan")


def _rank_successors(method: Method, params: dict, layout: Layout, ps: ProblemSet, done: set,
                     fingerprint: str, train_facts: dict, writer: JsonlWriter) -> None:
    """Successor-ranking protocol (Hit@k, teacher forcing) on the reference trajectories of
    ``methods.<name>.rank_splits`` (default: every evaluation split but train); one record per
    (trajectory, seed), ``extra.task = rank_successors``, ``extra.protocol = successor_set``."""
    from planarena.core.trajectories import load_trajectories

    splits = method.config.get("rank_splits") or [s for s in get(params, "evaluation.splits") if s != "train"]
    todo = [
        (traj, seed)
        for domain in ps.domains
        for split in splits
        for traj in load_trajectories(layout.trajectories, domain, split)
        for seed in _seeds(method, params)
        if ("rank_successors", domain, split, traj.problem, seed) not in done
    ]
    entries = {e.key: e for e in ps.entries}
    for traj, seed in tqdm(todo, desc=f"rank successors {method.name}"):
        start = time.perf_counter()
        try:
            hits, outcome, reason = method.rank(traj, seed), "solved", None
        except Exception as exc:
            hits, outcome, reason = {}, "error", f"{type(exc).__name__}: {exc}"
        e = entries.get((traj.domain, traj.split, traj.problem))
        writer.write(ResultRecord(
            method=method.name, family=method.family, domain=traj.domain, split=traj.split,
            problem=traj.problem, seed=seed, outcome=outcome, failure_reason=reason,
            wall_time=round(time.perf_counter() - start, 4), size=e.size if e else None,
            objects=e.objects if e else None, config_hash=fingerprint,
            extra={"task": "rank_successors", "protocol": "successor_set", "reference_plan": traj.plan_source,
                   **train_facts, **hits},
        ).to_dict())


def _record(method: Method, ps: ProblemSet, entry: ProblemEntry, seed: int, res: Attempt,
            elapsed: float, fingerprint: str, train_facts: dict) -> ResultRecord:
    validated, reason, by = False, None, None
    if res.outcome == "solved" and res.plan is not None:
        verdict = validate_plan(ps.domain_file(entry.domain), ps.problem_file(entry), res.plan)
        validated, reason, by = verdict.valid, verdict.reason, VALIDATOR_NAME
    return ResultRecord(
        method=method.name,
        family=method.family,
        domain=entry.domain,
        split=entry.split,
        problem=entry.problem,
        seed=seed,
        outcome=res.outcome,
        plan_length=len(res.plan) if res.plan is not None else None,
        # a planner's reported cost when it gives one, else unit cost (every built-in domain is unit-cost)
        plan_cost=float(res.extra.get("cost") or len(res.plan)) if res.plan is not None else None,
        validated=validated,
        validated_by=by,
        validator_reason=reason,
        wall_time=round(res.wall_time if res.wall_time is not None else elapsed, 4),
        peak_memory_mb=res.peak_memory_mb,
        failure_reason=res.failure_reason,
        size=entry.size,
        objects=entry.objects,
        config_hash=fingerprint,
        plan=res.plan,
        extra={"task": "plan", "tasks": sorted(method.tasks), **train_facts, **res.extra},
    )
