"""The ``train`` and ``evaluate`` stages: one DVC stage each, over every row (block of ``methods``).

Each stage walks the rows of the resolved params (:func:`run_train_rows`, :func:`run_evaluate_rows`)
and works only on the rows that run in the active profile and whose inputs changed: a row is *up to
date* when its inputs (what ``resolve_methods`` writes to ``data/inputs/<stage>/<row>.json``: the
params it reads, its code, its data) equal the copy stored beside its outputs at the end of its
last complete run. That is the test DVC applied when each row was a stage of its own
(``train@<row>``), made in a loop instead: DVC's bookkeeping cost about 4 s per stage whatever the
stage did (it rewrites the whole ``dvc.lock`` after each), and 10 of the 24 minutes of a 2-core
smoke run went to the ~180 stages of rows that did not run (docs/pipeline.md#rows-in-one-stage).

Training writes ``data/models/<method>/``; ``train.json`` holds the training facts that decide the
results (status, model sizes, ...) and nothing that varies between identical runs: wall times go
to the untracked log ``data/logs/train/<method>.json`` (the cost table reads them from there
through the records).

Evaluation writes ``data/results/<method>.jsonl``, one :class:`ResultRecord` per attempt, appending
and fsyncing each line. It is resumable: records already written *with the same config
fingerprint* are kept and skipped; records made under another configuration are dropped first.
Which protocols produce the records is decided by the tasks the method declares
(:data:`PROTOCOLS`), not by the method's name: ``plan`` -> coverage; ``rank_successors`` -> the
method's ``successor_protocols`` (``successor_set``, ``pool``).
"""

from __future__ import annotations

import gc
import hashlib
import json
import shutil
import time
import traceback
from pathlib import Path
from typing import Callable

from planarena.config import DeclaredLayout, Layout, get
from planarena.core.io import (
    JsonlWriter,
    atomic_write_json,
    read_json_or_empty,
    read_jsonl,
    stable_hash,
    without_times,
    write_jsonl,
)
from planarena.methods import Method, resolve
from planarena.protocols import coverage, pool, schema, successor_set
# what a protocol receives; defined with the protocols, re-exported here
from planarena.protocols.context import EvalContext  # noqa: F401

#: task -> protocol name -> the protocol's ``run(ctx) -> records written``. A method enters a
#: protocol by declaring the task (and, for ``rank_successors``, the protocol in
#: ``successor_protocols``).
PROTOCOLS: dict[str, dict[str, Callable[["EvalContext"], int]]] = {
    "plan": {"coverage": coverage.run},
    "rank_successors": {"successor_set": successor_set.run, "pool": pool.run},
    "learn_schema": {"schema": schema.run},
}


def protocols_of(method: Method) -> list[tuple[str, Callable[["EvalContext"], int]]]:
    """``(name, run)`` of every protocol the method's declared tasks select, in a fixed order.

    Raises:
        ValueError: the method declares a task or successor protocol the harness does not have.
    """
    out = []
    for task in sorted(method.tasks):
        if task not in PROTOCOLS:
            raise ValueError(f"method {method.name}: no protocol for task {task!r} yet; "
                             f"tasks with protocols: {sorted(PROTOCOLS)}")
        names = method.successor_protocols if task == "rank_successors" else tuple(PROTOCOLS[task])
        for name in names:
            if name not in PROTOCOLS[task]:
                raise ValueError(f"method {method.name}: unknown {task} protocol {name!r}; "
                                 f"valid: {sorted(PROTOCOLS[task])}")
            out.append((name, PROTOCOLS[task][name]))
    return out


def build_method(instance: str, params: dict, layout: Layout) -> Method:
    """Instantiate ``methods.<instance>`` with a :class:`DeclaredLayout` limited to the folders its
    class declares in ``data_deps`` (raises KeyError listing valid names if unknown)."""
    cls, config = resolve(instance, params)
    deps = frozenset(cls(instance, config, params, layout).data_deps)
    method = cls(instance, config, params, DeclaredLayout(root=layout.root, allowed=deps, owner=f"method {instance}"))
    method.jobs = int(params.get("jobs", 0) or 0)
    return method


#: training facts about how a model was obtained, not what it is (a copy from the shared model
#: cache): they go to the train log with the wall times, so train.json (and every record's
#: fingerprint) is the same whether a model was trained or copied
LOG_ONLY = ("from_cache",)


def run_train_stage(params: dict, layout: Layout, instance: str) -> dict:
    """Train one method; write ``data/models/<instance>/train.json`` (training facts, no times)
    and the wall times to :func:`train_log_file`.

    A training run that raises is recorded in ``train.json`` with ``status: failed`` and the
    exception; the evaluate stage then records every attempt as ``error`` with that reason.
    """
    method = build_method(instance, params, layout)
    model_dir = layout.models / instance
    model_dir.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    try:
        info = {"status": "ok", **(method.train(model_dir) or {})}
    except Exception as exc:  # a diverged or broken training run is an outcome, not a crash
        info = {"status": "failed", "reason": f"{type(exc).__name__}: {exc}"}
        traceback.print_exc()
    seconds = info.pop("train_time_s", round(time.perf_counter() - start, 3))
    timings = {"train_time_s": seconds, **{k: v for k, v in info.items() if k.endswith("_s") or k in LOG_ONLY}}
    info = {k: v for k, v in without_times(info).items() if k not in LOG_ONLY}
    atomic_write_json(model_dir / "train.json", info)
    atomic_write_json(layout.train_log(instance), timings)
    print(f"train {instance}: {info['status']} in {seconds} s")
    return {**info, **timings}


def _manifest_digest(layout: Layout) -> str:
    path = layout.root / "problems" / "manifest.jsonl"
    return hashlib.sha256(path.read_bytes()).hexdigest()[:12] if path.exists() else "no-manifest"


def config_fingerprint(method: Method, params: dict, layout: Layout) -> str:
    """Fingerprint of everything that changes this method's results: its params block, the params
    keys it declares in ``uses_params``, the evaluation settings (``lockstep_batch`` for a lockstep
    method only: a batched forward pass's floats depend on the batch, and an untrained R-GNN's
    near-tied Q-values then choose another action), the problem manifest, its trained model's
    ``train.json`` and the code that evaluates it (the import closure of this runner and of the
    method's class, as the ``evaluate@`` stage's inputs hash it: a protocol or family edit must not
    leave records of the old code in place, while a killed run of the same code resumes)."""
    from planarena.runner.inputs import method_code

    registered = method.config.get("method", method.name)
    train_json = layout.models / method.name / "train.json"
    parts = {
        "code": method_code(__name__, registered),
        "method": method.config,
        "uses": {k: get(params, k, None) for k in method.uses_params},
        # how attempts are spread over processes does not change them; how they are batched can
        "evaluation": {k: v for k, v in get(params, "evaluation").items()
                       if k != "jobs" and (k != "lockstep_batch" or method.lockstep)},
        "manifest": _manifest_digest(layout),
        # training facts minus timings: retraining to the same model keeps the records
        "model": {k: v for k, v in json.loads(train_json.read_text()).items() if not k.endswith("_s")}
        if train_json.exists() else None,
    }
    if method.input_files:  # an outside planner's programs
        from planarena.core.fingerprint import folder_hash

        parts["files"] = {str(f): folder_hash(Path(f)) for f in method.input_files}
    return stable_hash(parts)


def _task(row: dict) -> str:
    return (row.get("extra") or {}).get("task", "plan")


def run_evaluate_stage(params: dict, layout: Layout, instance: str) -> Path:
    """Evaluate one method with every protocol its tasks select, each seed (resumable)."""
    method = build_method(instance, params, layout)
    protocols = protocols_of(method)
    needs_suite = any(name in ("coverage", "successor_set") for name, _ in protocols)
    model_dir = layout.models / instance
    train_info = json.loads((model_dir / "train.json").read_text()) if (model_dir / "train.json").exists() else {}
    if train_info.get("status", "ok") == "ok":
        method.load(model_dir)
    fingerprint = config_fingerprint(method, params, layout)
    timings = read_json_or_empty(layout.train_log(instance))
    # training facts the report's cost table shows (only for methods that learned something)
    train_facts = {k: v for k, v in {**train_info, **timings}.items()
                   if k in ("train_time_s", "parameters", "tree_nodes", "features_reduced")
                   and train_info.get("trained", True)}
    out = layout.results / f"{instance}.jsonl"

    # keep only records of this configuration (atomically), then append
    old = read_jsonl(out)
    kept = [r for r in old if r.get("config_hash") == fingerprint]
    if len(kept) != len(old):
        write_jsonl(out, kept)
    print(f"evaluate {instance}: {len(kept)} records kept")
    with JsonlWriter(out) as writer:
        ctx = EvalContext(
            method=method, settings=get(params, "evaluation"), seeds=method.seeds(),
            problems=method.ps if needs_suite else None,
            fingerprint=fingerprint, train_info=train_info, train_facts=train_facts, kept=kept,
            writer=writer, jobs=method.jobs,
            unit_times=timings.get("unit_times_s") if isinstance(timings.get("unit_times_s"), dict) else {},
            done={(_task(r), r["domain"], r["split"], r["problem"], r["seed"]) for r in kept},
        )
        if needs_suite:
            _record_not_applicable(ctx)
        for _, run in protocols:
            run(ctx)
    return out


#: the task of the records that say a method does not run on a domain of the suite
NOT_APPLICABLE = "not_applicable"


def _record_not_applicable(ctx: EvalContext) -> int:
    """One record per suite domain the method does not run on (:attr:`Method.dropped_domains`):
    outcome and task ``not_applicable``, split and problem ``*``, the reason in ``failure_reason``
    (the report lists them; no coverage or Hit@k counts them)."""
    from planarena.core.records import ResultRecord

    method, n = ctx.method, 0
    for domain, reason in sorted(method.dropped_domains.items()):
        if (NOT_APPLICABLE, domain, "*", "*", ctx.seeds[0]) in ctx.done:
            continue
        ctx.writer.write(ResultRecord(
            method=method.name, family=method.family, domain=domain, split="*", problem="*", seed=ctx.seeds[0],
            outcome="not_applicable", failure_reason=reason, config_hash=ctx.fingerprint,
            extra={"task": NOT_APPLICABLE, "tasks": sorted(method.tasks)},
        ).to_dict())
        n += 1
    return n


# ------------------------------------------------------------------------------------------------
# The stages: every row, each when it runs and its inputs changed
# ------------------------------------------------------------------------------------------------

#: the copy of a row's train inputs file in its model folder, written when its training completed
TRAIN_STAMP = "inputs.json"


def evaluate_stamp(layout: Layout, row: str) -> Path:
    """``data/results/<row>.inputs.json``: the row's evaluate inputs file and the hash of its model
    folder when its last evaluation completed (beside ``<row>.jsonl``; no reader globs it)."""
    return Path(layout.results) / f"{row}.inputs.json"


def _stage_rows(stage: str, params: dict, layout: Layout, rows: tuple[str, ...]) -> list[tuple[str, dict]]:
    """``(row, inputs)`` for the named rows (all of ``methods`` when none), in params order. The
    inputs are computed here (:func:`planarena.runner.inputs.method_inputs`, what ``resolve_methods``
    wrote to ``data/inputs/<stage>/<row>.json`` in a ``dvc repro``), so a hand run of
    ``planarena stage`` after an edit to ``params.yaml`` sees the edit.

    Raises:
        KeyError: a named row is not a block of ``methods`` (the message names the nearest one).
    """
    from planarena.paramkeys import suggestion
    from planarena.runner.inputs import method_inputs

    blocks = params.get("methods") or {}
    for row in rows:
        if row not in blocks:
            near = suggestion(row, blocks)
            raise KeyError(f"no methods block {row!r}" + (f"; did you mean `{near}`?" if near else "")
                           + " (`planarena rows` lists them)")
    return [(row, method_inputs(stage, row, params, layout)) for row in rows or tuple(blocks)]


def _run_rows(stage: str, status: dict[str, str], todo: list[tuple[str, dict]],
              run_row: Callable[[str, dict], None]) -> dict[str, str]:
    """Print the stage's plan (rows to run, up to date, off), then ``run_row(row, stamp)`` for each
    row of ``todo`` in order, each announced as ``<stage>@<row>: running (i/n)`` (the name of a
    row's share of a stage in logs and in docs/cost.md; benchmarks time the rows from these lines).
    Returns ``status`` with every row of ``todo`` marked done."""
    names = [r for r, _ in todo]
    print(f"{stage}: {len(todo)} rows to run ({', '.join(names) or 'none'}), "
          f"{sum(s == 'up to date' for s in status.values())} up to date, "
          f"{sum(s == 'off' for s in status.values())} off in this profile "
          f"(-S methods.<row>.run=true or -S profile=full runs them)", flush=True)
    done = "trained" if stage == "train" else "evaluated"
    for i, (row, stamp) in enumerate(todo, 1):
        print(f"{stage}@{row}: running ({i}/{len(todo)})", flush=True)
        run_row(row, stamp)
        status[row] = done
        gc.collect()
    return status


def run_train_rows(params: dict, layout: Layout, *rows: str, force: bool = False) -> dict[str, str]:
    """Stage ``train``: train every row that runs and whose train inputs changed since its model
    was written (:data:`TRAIN_STAMP`); ``rows`` limits it to those, ``force`` retrains them even
    when up to date. A row whose inputs changed loses its stale model folder first (DVC's cache
    keeps the committed one). A training run that raises is an outcome (``train.json`` ``status:
    failed``, :func:`run_train_stage`), not a crash of the stage.

    Returns: ``{row: "trained" | "up to date" | "off"}``.

    Raises:
        KeyError: a named row is not a block of ``methods``.
    """
    status, todo = {}, []
    for row, inputs in _stage_rows("train", params, layout, rows):
        stamp = Path(layout.models) / row / TRAIN_STAMP
        if inputs.get("run") is False:
            status[row] = "off"
        elif not force and (stamp.parent / "train.json").exists() and read_json_or_empty(stamp) == inputs:
            status[row] = "up to date"
        else:
            todo.append((row, inputs))

    def train(row: str, inputs: dict) -> None:
        model_dir = Path(layout.models) / row
        if model_dir.exists():
            shutil.rmtree(model_dir)
        run_train_stage(params, layout, row)
        atomic_write_json(model_dir / TRAIN_STAMP, inputs)

    return _run_rows("train", status, todo, train)


def run_evaluate_rows(params: dict, layout: Layout, *rows: str, force: bool = False) -> dict[str, str]:
    """Stage ``evaluate``: evaluate every row that runs and whose evaluate inputs or model folder
    changed since its last complete evaluation (:func:`evaluate_stamp`); ``rows`` limits it to
    those, ``force`` evaluates them even when up to date. Each row's evaluation resumes (records
    of the same config fingerprint are kept, :func:`run_evaluate_stage`); an off row's records file
    is left as it is (the report reads only rows that run).

    Returns: ``{row: "evaluated" | "up to date" | "off"}``.

    Raises:
        KeyError: a named row is not a block of ``methods``.
    """
    from planarena.core.fingerprint import folder_hash

    status, todo = {}, []
    for row, inputs in _stage_rows("evaluate", params, layout, rows):
        if inputs.get("run") is False:
            status[row] = "off"
            continue
        want = {"inputs": inputs, "model": folder_hash(Path(layout.models) / row)}
        if (not force and (Path(layout.results) / f"{row}.jsonl").exists()
                and read_json_or_empty(evaluate_stamp(layout, row)) == want):
            status[row] = "up to date"
        else:
            todo.append((row, want))

    def evaluate(row: str, want: dict) -> None:
        evaluate_stamp(layout, row).unlink(missing_ok=True)   # a killed evaluation leaves none
        run_evaluate_stage(params, layout, row)
        atomic_write_json(evaluate_stamp(layout, row), want)

    return _run_rows("evaluate", status, todo, evaluate)
