"""planarena's own methods under the IPC 2023 Learning Track contract (``planarena learn`` /
``planarena plan``), so that a planarena method can be entered in an IPC-style evaluation.

- ``planarena learn DK DOMAIN TASK1 ... TASKN --method ROW``: ``DK`` becomes a folder holding a small
  planarena workspace: the tasks as the train split of a one-domain ``dir`` suite, the data stages
  the row's method reads (:attr:`planarena.methods.base.Method.data_deps`: reference plans and
  trajectories, WL features, ...), the trained model, and ``planarena-dk.json`` (the row, its
  resolved params and the domain's name).
- ``planarena plan DK DOMAIN TASK PLAN``: loads that model and solves ``TASK`` once (its CPU-time
  limit: ``--time-limit``, default the params' ``evaluation.time_limit``), writing ``PLAN`` when the
  method claims a plan.

The row is a ``methods.<row>`` block of the params file, or a registered method name run with an
empty block. Both commands print one line per stage they run.
"""

from __future__ import annotations

import copy
import importlib
import json
import re
import shutil
from pathlib import Path

from planarena.config import ConfigError, Layout, load_params
from planarena.core.io import atomic_write_json
from planarena.core.pddl import count_objects, read_pddl_file
from planarena.core.problemset import ProblemEntry
from planarena.datasets.folders import folder_name
from planarena.runner.inputs import STAGES

#: the data stages that write each data folder a method may declare, in pipeline order
STAGES_OF = {
    "problems": ("generate",),
    "trajectories": ("plan", "trajectories"),
    "embeddings/wl": ("embed_wl",),
    "embeddings/text": ("embed_text",),
    "acp": ("acp_data",),
    "embeddings/acp": ("acp_data", "embed_acp"),
    "schema": ("schema_data",),
}
DK_FILE = "planarena-dk.json"


def _domain_name(domain_file: Path) -> str:
    """The domain's PDDL name, as a folder name (``(domain blocks-world)`` -> ``blocks-world``)."""
    m = re.search(r"\(\s*domain\s+([^\s()]+)", read_pddl_file(domain_file, "domain"), re.IGNORECASE)
    return folder_name(m.group(1) if m else "domain")


def _row(params: dict, row: str) -> dict:
    blocks = params.get("methods") or {}
    if row in blocks:
        return {k: v for k, v in (blocks[row] or {}).items() if k != "run"}
    from planarena.methods import method_entry

    method_entry(row)  # a registered name (KeyError listing them otherwise)
    return {}


def learn(dk: Path, domain_file: Path, tasks: list[Path], row: str, params_file: Path = Path("params.yaml"),
          say=print) -> Path:
    """Learn ``row`` from ``tasks`` (given smallest first, as the track does) into the folder ``dk``
    (replaced if it exists); returns ``dk``.

    Raises:
        ConfigError: no tasks, ``dk`` is a file, or bad params. KeyError: unknown row or method.
        PDDLError: a malformed domain or task (one line naming it).
    """
    from planarena.runner.stages import build_method, run_train_stage

    if not tasks:
        raise ConfigError("learn: give at least one training task (learn DK DOMAIN TASK...)")
    dk = Path(dk)
    if dk.exists() and not dk.is_dir():
        raise ConfigError(f"{dk}: exists and is not a folder; planarena writes its domain knowledge as a folder")
    params = load_params(params_file)
    block = _row(params, row)
    name = _domain_name(Path(domain_file))
    if dk.exists():
        shutil.rmtree(dk)
    train = dk / "suite" / name / "train"
    train.mkdir(parents=True)
    shutil.copyfile(domain_file, dk / "suite" / name / "domain.pddl")
    for i, task in enumerate(tasks):
        shutil.copyfile(task, train / f"{i:04d}-{Path(task).name.removesuffix('.gz').removesuffix('.pddl')}.pddl")
    params = copy.deepcopy(params)
    params["suite"] = "dir"
    params.setdefault("suites", {})["dir"] = {"path": str((dk / "suite").resolve())}
    params["methods"] = {row: block}
    layout = Layout(root=dk / "data")
    method = build_method(row, params, layout)
    stages = ["generate"] + [s for d in method.data_deps for s in STAGES_OF.get(d, ())]
    for stage in dict.fromkeys(stages):
        say(f"learn: stage {stage}")
        module, _, fn = STAGES[stage].entry.partition(":")
        getattr(importlib.import_module(module), fn)(params, layout)
    say(f"learn: train {row}")
    info = run_train_stage(params, layout, row)
    atomic_write_json(dk / DK_FILE, {"row": row, "domain": name, "params": params, "train_status": info.get("status")})
    return dk


def plan(dk: Path, domain_file: Path, task_file: Path, plan_file: Path, time_limit: float | None = None):
    """Solve ``task_file`` with the model learned into ``dk`` (:func:`learn`); write ``plan_file``
    (one action per line, then ``; cost = N``) when the method claims a plan. Returns the
    :class:`planarena.methods.base.Attempt` (the track validates the plan itself; so does the
    harness when it runs the row).

    Raises:
        ConfigError: ``dk`` is not a folder written by ``planarena learn``.
        PDDLError: a malformed task (one line naming it).
    """
    from planarena.methods.base import Attempt, PlanningTask
    from planarena.runner.stages import build_method

    meta_file = Path(dk) / DK_FILE
    if not meta_file.is_file():
        raise ConfigError(f"{dk}: no {DK_FILE}; DK must be a folder written by `planarena learn`")
    meta = json.loads(meta_file.read_text())
    params, row, name = meta["params"], meta["row"], meta["domain"]
    layout = Layout(root=Path(dk) / "data")
    method = build_method(row, params, layout)
    model_dir = layout.models / row
    info = json.loads((model_dir / "train.json").read_text()) if (model_dir / "train.json").exists() else {}
    if info.get("status", "ok") != "ok":
        return Attempt("error", None, f"training failed: {info.get('reason')}")
    method.load(model_dir)
    text = read_pddl_file(task_file, "problem")
    objects = count_objects(text)
    entry = ProblemEntry(domain=name, split="test", problem=Path(task_file).name.removesuffix(".pddl"),
                         path=str(task_file), size_param="objects", size=objects, objects=objects, seed=None,
                         origin=str(task_file))
    limit = float(time_limit if time_limit is not None else params["evaluation"]["time_limit"])
    task = PlanningTask(entry, Path(domain_file), Path(task_file), limit)
    seed = method.seeds()[0]
    try:
        attempt = method.solve_batch([task], seed)[0] if method.lockstep else method.solve(task, seed)
    except Exception as exc:  # an ordinary failure of the method is an outcome
        attempt = Attempt("error", None, f"{type(exc).__name__}: {exc}")
    if attempt.outcome == "solved" and attempt.plan is not None:
        Path(plan_file).write_text("".join(f"{a}\n" for a in attempt.plan) + f"; cost = {len(attempt.plan)} (unit cost)\n")
    return attempt


__all__ = ["DK_FILE", "STAGES_OF", "learn", "plan"]
