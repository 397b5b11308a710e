"""Ablation pairs for :attr:`planarena.methods.base.ReportTraits.ablations`
(docs/concepts.md#comparing-two-methods).

A family's :meth:`~planarena.methods.base.Method.report_traits` gets only its own params block, not
its name, so it finds its counterparts by comparing *configurations*: among the configured blocks
(``params["methods"]``) of the same registered class, those whose normalised configuration differs
from its own in exactly the ablation axis (a block never pairs with itself: the axis differs). Each
pair is declared from one side only, the paper's main variant (with the contrastive loss, AD, delta,
WL, AIW), so that it appears once and reads "main variant vs ablation".
"""

from __future__ import annotations

from typing import Callable, Iterable


def _registry_names(cls: type) -> set[str]:
    from planarena.methods import REGISTRY

    target = f"{cls.__module__}:{cls.__name__}"
    return {name for name, path in REGISTRY.items() if path == target}


def counterparts(cls: type, config: dict, params: dict, view: Callable[[dict], dict], axis: str,
                 ignore: Iterable[str] = ()) -> list[tuple[str, dict]]:
    """``(name, view)`` of every configured block of ``cls`` whose ``view`` (a normalised
    configuration: defaults filled in, ``method`` dropped) differs from ``view(config)`` in the key
    ``axis`` and in no other key except those in ``ignore``; sorted by name."""
    names = _registry_names(cls)
    mine = view(config)
    skip = {axis, *ignore}
    out = []
    for name, block in sorted((params.get("methods") or {}).items()):
        block = {k: v for k, v in dict(block or {}).items() if k != "run"}   # whether it runs is no setting
        if block.get("method", name) not in names:
            continue
        theirs = view(block)
        if theirs.get(axis) == mine.get(axis):
            continue
        if all(theirs.get(k) == mine.get(k) for k in set(mine) | set(theirs) if k not in skip):
            out.append((name, theirs))
    return out


def plain(config: dict, **defaults) -> dict:
    """``config`` without ``method``, with ``defaults`` filled in where the block does not set them."""
    out = {k: v for k, v in config.items() if k != "method"}
    for key, value in defaults.items():
        out.setdefault(key, value)
    return out


__all__ = ["counterparts", "plain"]
