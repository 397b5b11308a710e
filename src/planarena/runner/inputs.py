"""What each pipeline stage reads: the stage table, and the per-stage input files DVC tracks.

DVC reruns a stage when one of its deps changes. Listing ``params.yaml`` sections, a hand-typed
list of modules and whole data folders as deps (what ``dvc.yaml`` did before) reruns far more than
needed: an edit to one method family retrains every family, and a key under ``profiles.paper``
reruns every stage of a default-profile run. Instead, the cheap ``resolve`` and ``resolve_methods``
stages write one small JSON file per stage, ``data/inputs/stages/<stage>.json`` and
``data/inputs/<train|evaluate>/<row>.json`` (one per row of ``methods``), holding exactly what
that stage's results depend on:

- ``params``: the params the stage reads, *resolved in the active profile*
  (:func:`planarena.config.resolve_profile`): a key under an inactive profile is not there;
- ``code``: a hash per module of the stage's import closure inside ``planarena`` (found by walking
  the AST, function-level imports included; comments and formatting do not count), plus the data
  files (``*.yaml``, ``*.csv``) beside those modules, plus the stage script
  (:func:`planarena.core.fingerprint.code_fingerprint`);
- ``data`` (train and evaluate stages only): a hash per data folder the method family declares in
  :attr:`planarena.methods.base.Method.data_deps`.

Each data stage's only DVC deps are its own file (and, for ordering, its upstream outputs), so it
reruns exactly when something it reads changes; the files are rewritten byte-identically otherwise,
and DVC compares content, not times. The ``train`` and ``evaluate`` stages depend on their folder and
run only the rows whose file changed (:func:`planarena.runner.stages.run_train_rows`). ``jobs``
enters no file: results do not depend on it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from planarena.config import Layout, get
from planarena.core import fingerprint
from planarena.core.fingerprint import PACKAGE, external_code, folder_hash
from planarena.core.io import atomic_write_json


@dataclass(frozen=True)
class StageSpec:
    """One pipeline stage: its entry point and the params it reads.

    ``params`` are dotted keys of the resolved params; ``{key}`` in a path is formatted with the
    resolved params (``suites.{suite}`` reads the block of the active suite only).
    """

    entry: str                     # "module:function"
    script: str                    # stages/<name>.py
    params: tuple[str, ...] = ()


#: The pipeline's stages (docs/pipeline.md); ``train`` and ``evaluate`` work row by row (each
#: ``methods`` block), and a row reads its block plus what the method declares (:func:`method_inputs`).
STAGES: dict[str, StageSpec] = {
    "generate": StageSpec("planarena.datasets.suites:run_stage", "stages/generate.py",
                          ("seed", "suite", "suites.{suite}")),
    "plan": StageSpec("planarena.datasets.reference_plans:run_plan_stage", "stages/plan.py", ("planners",)),
    "trajectories": StageSpec("planarena.datasets.reference_plans:run_trajectories_stage",
                              "stages/trajectories.py"),
    "embed_wl": StageSpec("planarena.features.wl:run_stage", "stages/embed_wl.py", ("embed_wl",)),
    "embed_text": StageSpec("planarena.features.text.encoder:run_stage", "stages/embed_text.py",
                            ("embed_text",)),
    "acp_data": StageSpec("planarena.datasets.acp:run_stage", "stages/acp_data.py", ("seed", "acp")),
    "embed_acp": StageSpec("planarena.features.text.acp:run_stage", "stages/embed_acp.py",
                           ("acp.domains", "acp.encoders", "embed_text")),
    "schema_data": StageSpec("planarena.datasets.schema:run_stage", "stages/schema_data.py",
                             ("seed", "schema")),
    "train": StageSpec("planarena.runner.stages:run_train_rows", "stages/train.py"),
    # `evaluation.lockstep_batch` only for lockstep methods (method_inputs); `jobs` for none
    "evaluate": StageSpec("planarena.runner.stages:run_evaluate_rows", "stages/evaluate.py",
                          ("evaluation.splits", "evaluation.seeds", "evaluation.time_limit")),
    # the leaderboard's Info section shows a hash of the whole resolved params
    "report": StageSpec("planarena.report.leaderboard:run_stage", "stages/report.py", ("*",)),
}

#: Entry point of every stage script (``stages/<name>.py``) and of ``planarena stage <name>``.
ENTRIES: dict[str, str] = {
    "resolve": "planarena.runner.inputs:run_resolve_stage",
    "resolve_methods": "planarena.runner.inputs:run_resolve_methods_stage",
    **{name: spec.entry for name, spec in STAGES.items()},
}

#: Stages written by ``resolve`` (they do not need the data) vs ``resolve_methods``.
DATA_STAGES = ("generate", "plan", "trajectories", "embed_wl", "embed_text", "acp_data", "embed_acp", "schema_data",
               "report")


def method_code(stage_module: str, registered: str, script: str | None = None) -> dict:
    """:func:`~planarena.core.fingerprint.code_fingerprint` of a stage module and the module of the method registered as
    ``registered`` (built in or from another package: that package's sources are added as
    ``plugin:<file>`` entries, :func:`external_code`).

    Raises:
        KeyError: ``registered`` is not a registered method.
    """
    from planarena.methods import method_entry

    module = method_entry(registered).partition(":")[0]
    out = fingerprint.code_fingerprint([stage_module, module], script, registry_name=registered)
    if module != PACKAGE and not module.startswith(PACKAGE + "."):
        out.update({f"plugin:{f}": h for f, h in external_code(module)})
    return out


# ------------------------------------------------------------------------------------------------
# Params and data
# ------------------------------------------------------------------------------------------------


def select_params(params: dict, keys: tuple[str, ...]) -> dict:
    """``{key: value}`` for the dotted ``keys`` in the resolved ``params`` (missing: None).
    ``"*"`` selects every param but ``jobs``, ``executor`` and ``profiles`` (where units run never
    changes results)."""
    out: dict[str, Any] = {}
    for key in keys:
        if key == "*":
            out.update({k: v for k, v in params.items() if k not in ("jobs", "executor", "profiles")})
            continue
        key = key.format(**{k: v for k, v in params.items() if isinstance(v, (str, int))})
        out[key] = get(params, key, None)
    return out


def _entry_module(spec: StageSpec) -> str:
    return spec.entry.partition(":")[0]


def stage_inputs(name: str, params: dict) -> dict:
    """The inputs file content of data stage ``name`` (``generate`` ... ``report``)."""
    spec = STAGES[name]
    roots = [_entry_module(spec)]
    plugins: dict[str, str] = {}
    if name == "report":  # the report may read hooks the method classes declare
        from planarena.methods import REGISTRY, plugin_methods

        roots += sorted({entry.partition(":")[0] for entry in REGISTRY.values()})
        plugins = {f"plugin:{f}": h for entry in sorted(set(plugin_methods().values()))
                   for f, h in external_code(entry.partition(":")[0])}
    out = {"stage": name, "params": select_params(params, spec.params),
           "code": {**fingerprint.code_fingerprint(roots, spec.script, registry_name="*"), **plugins}}
    if name == "generate" and params.get("suite") == "dir":
        # a user's own folders: an edited or added problem file reruns the suite (the other external
        # suites are third-party releases, read by path and version)
        raw = get(params, "suites.dir.path", None)
        out["files"] = {str(p): folder_hash(Path(str(p)).expanduser())
                        for p in ([raw] if isinstance(raw, str) else list(raw or []))}
    return out


def method_inputs(stage: str, instance: str, params: dict, layout: Layout) -> dict:
    """The inputs file content of row ``instance`` in stage ``train`` or ``evaluate``: the method's
    params block, the params it declares (:attr:`Method.uses_params`), the seeds (and for
    evaluation the evaluation settings), the code of the runner and of the method's class, and a
    hash of each data folder it declares (:attr:`Method.data_deps`). The train stage of a method
    that does not override :meth:`Method.train` reads only its block and the code.

    Raises:
        KeyError: no such method block, or an unknown registered name (lists the valid ones).
    """
    from planarena.methods import resolve, runs
    from planarena.methods.base import Method

    if not runs(instance, params):  # nothing of the family is read: its edits rerun nothing here
        return {"stage": f"{stage}@{instance}", "run": False}
    cls, config = resolve(instance, params)
    method = cls(instance, config, params, layout)
    registered = config.get("method", instance)
    spec = STAGES[stage]
    learns = stage != "train" or cls.train is not Method.train
    keys = (f"methods.{instance}",) + (("evaluation.seeds", *method.uses_params) + spec.params if learns else ())
    if stage == "evaluate" and cls.lockstep:
        keys += ("evaluation.lockstep_batch",)
    return {
        "stage": f"{stage}@{instance}",
        "params": select_params(params, tuple(dict.fromkeys(keys))),
        "code": method_code(_entry_module(spec), registered, spec.script),
        # a method that learns nothing has nothing to train from
        "data": {d: folder_hash(layout.root / d) for d in method.data_deps} if learns else {},
        **({"files": {str(f): folder_hash(Path(f)) for f in method.input_files}} if method.input_files else {}),
    }


def inputs_file(layout: Layout, stage: str, instance: str | None = None) -> Path:
    """``data/inputs/stages/<stage>.json``, or ``data/inputs/<stage>/<instance>.json`` for a row of
    the ``train`` or ``evaluate`` stage."""
    if instance:
        return layout.root / "inputs" / stage / f"{instance}.json"
    return layout.root / "inputs" / "stages" / f"{stage}.json"


def run_resolve_stage(params: dict, layout: Layout) -> list[Path]:
    """Stage ``resolve``: write the inputs file of every data stage and the report."""
    written = []
    for name in DATA_STAGES:
        path = inputs_file(layout, name)
        atomic_write_json(path, stage_inputs(name, params))
        written.append(path)
    print(f"resolve: {len(written)} stage input files in {layout.root / 'inputs' / 'stages'}")
    return written


def run_resolve_methods_stage(params: dict, layout: Layout) -> list[Path]:
    """Stage ``resolve_methods``: write the train and evaluate inputs file of every block of
    ``methods``. Runs after the data stages (it hashes the data each method declares)."""
    written = []
    for instance in sorted(params.get("methods") or {}):
        for stage in ("train", "evaluate"):
            path = inputs_file(layout, stage, instance)
            atomic_write_json(path, method_inputs(stage, instance, params, layout))
            written.append(path)
    print(f"resolve_methods: {len(written)} row input files in {layout.root / 'inputs'}/{{train,evaluate}}")
    return written
