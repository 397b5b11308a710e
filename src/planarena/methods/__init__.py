"""Method registry (DESIGN.md, "Method registry").

Adding a method = one module under ``planarena/methods/``, one line in :data:`REGISTRY`, and one
params block ``methods.<name>`` in ``params.yaml`` (the ``train`` and ``evaluate`` stages are
``foreach`` over that params dict, so dvc.yaml needs no edit). A params block may set
``method: <registry name>`` to run a registered class under another name with other settings
(e.g. several configurations of one model).
"""

from __future__ import annotations

import importlib

from planarena.methods.base import TASKS, Attempt, LearnedDomain, Method, PlanningTask

#: name -> "module:Class" (imported lazily, so a method's heavy dependencies load only when used)
REGISTRY: dict[str, str] = {
    "fd_astar_lmcut": "planarena.methods.classical:FastDownwardAStarLMCut",
    "fd_lama": "planarena.methods.classical:FastDownwardLAMA",
    "fast_downward": "planarena.methods.classical:FastDownward",
    "random_walk": "planarena.methods.random_walk:RandomWalk",
    "state_centric": "planarena.methods.state_centric.method:StateCentric",
    "embedplan": "planarena.methods.embedplan.method:EmbedPlan",
    "satr": "planarena.methods.transformers.method:SATr",
    "rgnn_policy": "planarena.methods.rgnn_policies.method:RGNNPolicy",
    "wl_goose": "planarena.methods.wl_goose.method:WLGoose",
    "schema_true_domain": "planarena.methods.dias.references:TrueDomain",
    "schema_no_preconditions": "planarena.methods.dias.references:NoPreconditions",
    "dias": "planarena.methods.dias.method:Dias",
}


def method_class(name: str) -> type[Method]:
    """The class registered under ``name``.

    Raises:
        KeyError: unknown name; the message lists the registered names.
    """
    if name not in REGISTRY:
        raise KeyError(f"unknown method {name!r}; registered methods: {', '.join(sorted(REGISTRY))}")
    module, _, cls = REGISTRY[name].partition(":")
    return getattr(importlib.import_module(module), cls)


def resolve(instance: str, params: dict) -> tuple[type[Method], dict]:
    """Class and config block of the method instance ``methods.<instance>`` in ``params``.

    Raises:
        KeyError: no such params block (lists the configured ones) or unknown registry name.
    """
    config = {k: v for k, v in _block(instance, params).items() if k != "run"}
    return method_class(config.get("method", instance)), config


def _block(instance: str, params: dict) -> dict:
    """The params block ``methods.<instance>`` (a KeyError listing the configured ones if absent)."""
    blocks = params.get("methods") or {}
    if instance not in blocks:
        raise KeyError(f"params: no block `methods.{instance}`; configured: {', '.join(sorted(blocks))}")
    return dict(blocks[instance] or {})


def runs(instance: str, params: dict) -> bool:
    """Whether the row ``methods.<instance>`` runs in the selected profile: its block's ``run``
    (default true), overridden by a true ``run_all`` (the ``full`` and ``paper`` profiles run every
    row). A row that does not run keeps its DVC stages, which do nothing (the stage script returns
    before loading the family), and is absent from the report: ``-S methods.<instance>.run=true``
    turns it on alone.

    Raises:
        KeyError: no such block (lists the configured ones).
    """
    return bool(params.get("run_all")) or _block(instance, params).get("run", True) is not False


def running(params: dict) -> dict:
    """A copy of ``params`` whose ``methods`` holds only the rows that run (:func:`runs`)."""
    out = dict(params)
    out["methods"] = {m: b for m, b in (params.get("methods") or {}).items() if runs(m, params)}
    return out


__all__ = ["REGISTRY", "TASKS", "Attempt", "LearnedDomain", "Method", "PlanningTask", "method_class", "resolve",
           "running", "runs"]
