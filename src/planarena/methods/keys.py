"""The declared params keys of the whole file (:mod:`planarena.paramkeys`): the shared sections,
each family's section and the row keys of every registered method, and :func:`check_params`, which
:func:`planarena.config.load_params` runs on every params file it reads (so every stage, the report
and the CLI refuse a misspelled key) and ``planarena check-params`` runs alone.

The family declarations live in each family's light ``keys`` module (no torch); this module only
gathers them, beside the registry (:data:`planarena.methods.REGISTRY`) that names the families.
A method installed from another package declares its row keys with a class attribute
``row_keys`` (a set of names); without one its rows are not checked.
"""

from __future__ import annotations

from typing import Any, Mapping

from planarena.config import ConfigError
from planarena.methods.dias import keys as dias_keys
from planarena.methods.embedplan import keys as embedplan_keys
from planarena.methods.rgnn_policies import keys as rgnn_keys
from planarena.methods.state_centric import keys as state_centric_keys
from planarena.methods.transformers import keys as transformers_keys
from planarena.methods.wl_goose import keys as wl_goose_keys
from planarena.paramkeys import ANY, CORE_KEYS, ROW_COMMON, ROW_PLAN, describe, merge_trees, suggestion, unknown_keys

#: ``methods.<row>`` keys of ``method: ipc_planner`` beyond the common ones
#: (:class:`planarena.methods.ipc_planner.IPCPlanner`).
IPC_PLANNER_KEYS = ("learn", "plan", "image", "ipc2026", "learn_time_limit", "memory_limit_mb", "kill_grace", "kind")

#: registered method name -> the keys its row blocks may hold
ROW_KEYS: dict[str, frozenset] = {
    "fd_astar_lmcut": ROW_COMMON | ROW_PLAN | {"planner"},
    "fd_lama": ROW_COMMON | ROW_PLAN | {"planner"},
    "fast_downward": ROW_COMMON | ROW_PLAN | {"planner"},
    "ipc_planner": ROW_COMMON | ROW_PLAN | {"train_problems", *IPC_PLANNER_KEYS},
    "random_walk": ROW_COMMON | ROW_PLAN | {"horizon", "never_revisit"},
    "state_centric": state_centric_keys.ROW_KEYS,
    "embedplan": embedplan_keys.ROW_KEYS,
    "satr": transformers_keys.ROW_KEYS,
    "rgnn_policy": rgnn_keys.ROW_KEYS,
    "wl_goose": wl_goose_keys.ROW_KEYS,
    "schema_true_domain": dias_keys.ROW_SCHEMA,
    "schema_no_preconditions": dias_keys.ROW_SCHEMA,
    "dias": dias_keys.ROW_KEYS,
}

#: The key tree of a params file's sections (everything but ``methods`` and ``profiles``).
SECTIONS: dict = merge_trees(CORE_KEYS, state_centric_keys.SECTION_KEYS, embedplan_keys.SECTION_KEYS,
                             transformers_keys.SECTION_KEYS, rgnn_keys.SECTION_KEYS, dias_keys.SECTION_KEYS,
                             wl_goose_keys.SECTION_KEYS)


def row_keys(method: str) -> frozenset | None:
    """The keys a row of the registered ``method`` may hold; None when it does not say (a plugin
    class without a ``row_keys`` attribute) or the name is not registered (the stages say so)."""
    if method in ROW_KEYS:
        return ROW_KEYS[method]
    from planarena.methods import method_class

    try:
        declared = getattr(method_class(method), "row_keys", None)
    except Exception:  # noqa: BLE001 - an unknown or broken method fails where it is used
        return None
    return frozenset(declared) | ROW_COMMON if declared is not None else None


def _row_unknown(row: str, block: Any, method: str, prefix: tuple) -> list:
    """A twin block (``twin_of``) may repeat its row's keys (:func:`planarena.methods.with_twins`
    checks that they are equal), so it is read against its class's keys like the row."""
    if not isinstance(block, Mapping):
        return []
    allowed = row_keys(str(block.get("method", method)))
    if allowed is None:
        return []
    return [(prefix + (row, k), suggestion(k, allowed)) for k in block if k not in allowed]


def _methods_unknown(rows: Any, prefix: tuple, classes: Mapping[str, str]) -> list:
    if not isinstance(rows, Mapping):
        return []
    out: list = []
    for row, block in rows.items():
        out += _row_unknown(row, block, classes.get(row, row), prefix)
    return out


def unknown_in(raw: Mapping) -> list[tuple[tuple, str | None]]:
    """Every undeclared key of the raw params tree ``raw`` (profiles not applied), as
    ``(key path, nearest declared name)``: the sections, each profile's overlay and every method
    row (against its class's row keys; a profile's partial row against the class its top-level
    block names)."""
    top = {"methods": ANY, "profiles": ANY, **SECTIONS}
    found = unknown_keys(raw, top)
    rows = raw.get("methods") if isinstance(raw.get("methods"), Mapping) else {}
    classes = {r: str((b or {}).get("method", r)) for r, b in rows.items() if isinstance(b, Mapping) or b is None}
    for r, b in rows.items():   # a twin block without `method` is of its row's class
        if isinstance(b, Mapping) and "method" not in b and b.get("twin_of") in classes:
            classes[r] = classes[b["twin_of"]]
    found += _methods_unknown(rows, ("methods",), classes)
    for name, overlay in (raw.get("profiles") or {}).items():
        if not isinstance(overlay, Mapping):
            continue
        found += unknown_keys(overlay, top, ("profiles", name))
        found += _methods_unknown(overlay.get("methods"), ("profiles", name, "methods"), classes)
    return found


def check_params(raw: Mapping, path: str = "params.yaml") -> None:
    """Refuse a params tree with an undeclared key (:func:`unknown_in`).

    Raises:
        ConfigError: one line naming ``path``, the key paths and the nearest declared keys
            ("did you mean ...?"), and the command that lists them all.
    """
    found = unknown_in(raw)
    if found:
        more = "; `planarena check-params` lists them all" if len(found) > 1 else ""
        raise ConfigError(f"{path}: {describe(found)}{more}")


__all__ = ["IPC_PLANNER_KEYS", "ROW_KEYS", "SECTIONS", "check_params", "row_keys", "unknown_in"]
