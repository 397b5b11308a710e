"""Method registry.

The built-in methods are the entries of :data:`REGISTRY`; other installed packages add methods
through the entry-point group ``planarena.methods`` (:data:`ENTRY_POINT_GROUP`): a package whose
metadata declares ``my_method = "my_package.module:MyMethod"`` there makes ``method: my_method``
usable in a ``methods.<row>`` params block without any edit to planarena (a built-in name wins over
a plugin of the same name). The ``train`` and ``evaluate`` stages are ``foreach`` over the
``methods`` params dict, so dvc.yaml needs no edit either. A params block may set
``method: <registered name>`` to run a registered class under another name with other settings
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
    "ipc_planner": "planarena.methods.ipc_planner:IPCPlanner",
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


#: entry-point group through which other installed packages register methods
ENTRY_POINT_GROUP = "planarena.methods"


def plugin_methods() -> dict[str, str]:
    """``{name: "module:Class"}`` of the methods installed packages declare in
    :data:`ENTRY_POINT_GROUP` (read from the installed distributions' metadata; nothing is
    imported)."""
    from importlib.metadata import entry_points

    return {ep.name: ep.value for ep in entry_points(group=ENTRY_POINT_GROUP)}


def method_entry(name: str) -> str:
    """``"module:Class"`` of the method registered under ``name``: built in (:data:`REGISTRY`) or
    from an installed package (:func:`plugin_methods`).

    Raises:
        KeyError: unknown name; the message lists the built-in and the installed names.
    """
    if name in REGISTRY:
        return REGISTRY[name]
    plugins = plugin_methods()
    if name in plugins:
        return plugins[name]
    raise KeyError(f"unknown method {name!r}; registered methods: {', '.join(sorted(REGISTRY))}"
                   + (f"; from installed packages ({ENTRY_POINT_GROUP}): {', '.join(sorted(plugins))}"
                      if plugins else f"; none from installed packages (entry-point group {ENTRY_POINT_GROUP})"))


def method_class(name: str) -> type[Method]:
    """The class registered under ``name`` (:func:`method_entry`).

    Raises:
        KeyError: unknown name; the message lists the registered names.
        TypeError: a plugin's entry point names something that is not a :class:`Method` subclass.
    """
    module, _, attr = method_entry(name).partition(":")
    cls = getattr(importlib.import_module(module), attr)
    if not (isinstance(cls, type) and issubclass(cls, Method)):
        raise TypeError(f"method {name!r}: {module}:{attr} is not a subclass of planarena.methods.base.Method")
    return cls


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
