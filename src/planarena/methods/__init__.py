"""Method registry.

The built-in methods are the entries of :data:`REGISTRY`; other installed packages add methods
through the entry-point group ``planarena.methods`` (:data:`ENTRY_POINT_GROUP`): a package whose
metadata declares ``my_method = "my_package.module:MyMethod"`` there makes ``method: my_method``
usable in a ``methods.<row>`` params block without any edit to planarena (a built-in name wins over
a plugin of the same name). The ``train`` and ``evaluate`` stages walk the ``methods``
params dict, so dvc.yaml needs no edit either. A params block may set
``method: <registered name>`` to run a registered class under another name with other settings
(e.g. several configurations of one model).
"""

from __future__ import annotations

import importlib

from planarena.methods.base import TASKS, TWIN_KEYS, Attempt, LearnedDomain, Method, PlanningTask

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


# ------------------------------------------------------------------------------------------------
# Untrained twins (docs/concepts.md#untrained-twins)
# ------------------------------------------------------------------------------------------------



def twin_name(row: str, value) -> str:
    """The name of the twin ``value`` of the learned row ``row`` (:meth:`Method.twin_variants`):
    ``<row>_untrained`` for ``True``, ``<row>_<value>`` for a string (``<row>_uniform``)."""
    return f"{row}_untrained" if value is True else f"{row}_{value}"


def _same_value(a, b) -> bool:
    """Two ``untrained`` values are the same floor (``True`` is not ``1``; strings ignore case)."""
    if isinstance(a, str) and isinstance(b, str):
        return a.strip().lower() == b.strip().lower()
    return a is b or (not isinstance(a, str) and not isinstance(b, str) and bool(a) and bool(b))


def _learned_rows(blocks: dict, params: dict) -> dict[str, tuple]:
    """``{row: twin values}`` of the configured rows that learn: a block that is no twin itself,
    whose class declares twin values (:meth:`Method.twin_variants`) and, under the base class's
    default, presents itself as a ``"model"`` with a training budget. A block whose class cannot be
    imported or whose traits raise is skipped here: the stages that use it report the error."""
    out: dict[str, tuple] = {}
    for name, block in blocks.items():
        config = {k: v for k, v in block.items() if k != "run"}
        if config.get("untrained") or config.get("twin_of"):
            continue
        try:
            cls = method_class(config.get("method", name))
            values = tuple(cls.twin_variants(config))
            if values and getattr(cls.twin_variants, "__func__", None) is Method.twin_variants.__func__:
                traits = cls.report_traits(config, params)
                if traits.role != "model" or traits.budget is None:
                    values = ()
        except Exception:  # noqa: BLE001 - an unknown or broken block fails where it is used
            continue
        if values:
            out[name] = values
    return out


def with_twins(params: dict) -> dict:
    """``params`` with an untrained twin for every configured learned row: the one place where
    twins are made (:func:`planarena.config.resolve_profile` calls it, so every stage, the report,
    the claim workspaces and the CLI see the same rows). Returns a copy when it changes anything.

    For every learned row ``<row>`` (:func:`_learned_rows`) and every value ``v`` its class declares
    (:meth:`Method.twin_variants`: ``True``, and ``"uniform"`` for a lookahead policy), the twin is
    the row's block with ``untrained: v`` and ``twin_of: <row>``, nothing else changed: the same
    search, decoder, limits and caps, no training. It is

    * a configured block with ``twin_of: <row>`` (and ``untrained: v``; ``true`` when absent),
      completed from the row: ``<row>_untrained: {twin_of: <row>}`` in params.yaml names it for
      a reader of the file;
    * else a configured block equal to the row's but for ``untrained: v`` (e.g.
      ``embedplan_untrained`` of ``embedplan_mlp``), which keeps its name and gets ``twin_of``;
    * else a new block ``<row>_untrained`` / ``<row>_<v>`` (:func:`twin_name`).

    A twin runs when its row runs (``run: false`` on the row turns both off; ``run: false`` on the
    twin's own block turns the twin off alone). Each twin follows its row in ``methods``.

    Raises:
        ConfigError: a ``twin_of`` block names no configured learned row, sets a key in which it
            would differ from its row, or a generated name is taken by a block that is no twin.
    """
    from planarena.config import ConfigError

    blocks = params.get("methods") if isinstance(params, dict) else None
    if not isinstance(blocks, dict) or not blocks:
        return params
    blocks = {name: dict(block or {}) for name, block in blocks.items()}
    learned = _learned_rows(blocks, params)
    for name, block in blocks.items():
        row = block.get("twin_of")
        if row is not None and row not in learned:
            why = "no such block" if row not in blocks else "not a learned row (its family declares no untrained twin)"
            raise ConfigError(f"params: methods.{name}.twin_of={row!r}: {why}")
    twins: dict[str, list[str]] = {}   # row -> its twins, in value order
    made: dict[str, dict] = {}
    for row, values in learned.items():
        row_block = blocks[row]
        config = {"method": row_block.get("method", row), **{k: v for k, v in row_block.items() if k != "run"}}
        for value in values:
            explicit = [n for n, b in blocks.items() if b.get("twin_of") == row
                        and _same_value(b.get("untrained", True), value)]
            implicit = [n for n, b in blocks.items() if "twin_of" not in b and n not in learned
                        and _same_value(b.get("untrained", False), value)
                        and {"method": b.get("method", n), **{k: v for k, v in b.items() if k not in ("run", "untrained")}}
                        == config]
            name = (explicit or implicit or [twin_name(row, value)])[0]
            own = blocks.get(name)
            if own is not None and not (explicit or implicit):
                raise ConfigError(f"params: methods.{name} is not the untrained twin of methods.{row} (it is "
                                  f"configured otherwise); give it another name or set `twin_of: {row}` on it")
            if explicit:
                extra = {k: v for k, v in own.items() if k not in (*TWIN_KEYS, "run", "method")
                         and config.get(k, _MISSING) != v}
                if extra or own.get("method", config["method"]) != config["method"]:
                    raise ConfigError(f"params: methods.{name} (twin_of: {row}) sets {sorted(extra) or ['method']}; a "
                                      f"twin is its row's block with `untrained` only: set them on methods.{row}")
            # the row's registered name: a row named after its class need not say `method:`
            twin = {"method": config["method"], **{k: v for k, v in row_block.items() if k != "run"}}
            twin.update(untrained=value, twin_of=row)
            if row_block.get("run") is False or (own or {}).get("run") is False:
                twin["run"] = False
            elif "run" in row_block:
                twin["run"] = row_block["run"]
            made[name] = twin
            twins.setdefault(row, []).append(name)
    if not made:
        return params
    ordered: dict[str, dict] = {}
    for name, block in blocks.items():
        if name in made:
            continue
        ordered[name] = block
        for twin in twins.get(name, ()):
            ordered[twin] = made[twin]
    return {**params, "methods": ordered}


_MISSING = object()


def twins_of(params: dict) -> dict[str, list[str]]:
    """``{learned row: [its twins]}`` of resolved ``params`` (blocks with ``twin_of``)."""
    out: dict[str, list[str]] = {}
    for name, block in (params.get("methods") or {}).items():
        row = (block or {}).get("twin_of")
        if row:
            out.setdefault(row, []).append(name)
    return out


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
    row); an untrained twin (a block with ``twin_of``) does not run under ``run_twins: false`` (the
    smoke profile: a twin runs its row's code without training, and a smoke run is sized by its
    stages). A row that does not run keeps its DVC stages, which do nothing (the stage script
    returns before loading the family), and is absent from the report: ``-S
    methods.<instance>.run=true`` turns it on alone.

    Raises:
        KeyError: no such block (lists the configured ones).
    """
    block = _block(instance, params)
    if block.get("twin_of") and params.get("run_twins", True) is False:
        return False
    return bool(params.get("run_all")) or block.get("run", True) is not False


def running(params: dict) -> dict:
    """A copy of ``params`` whose ``methods`` holds only the rows that run (:func:`runs`)."""
    out = dict(params)
    out["methods"] = {m: b for m, b in (params.get("methods") or {}).items() if runs(m, params)}
    return out


__all__ = ["REGISTRY", "TASKS", "TWIN_KEYS", "Attempt", "LearnedDomain", "Method", "PlanningTask", "method_class",
           "resolve", "running", "runs", "twin_name", "twins_of", "with_twins"]
