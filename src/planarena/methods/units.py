"""Per-(domain, seed) models of the learned families: training them as independent units, saving
each one (weights + ``facts.json``), and turning a unit's facts into the outcome every attempt gets
when there is no usable model.

Used by the symmetry-aware transformers and the width-based R-GNN policies; the train stage's
``model_dir`` holds ``<domain>/seed<seed>/{model.pt, facts.json}`` and one ``facts.json`` with
every unit's facts under ``domains.<domain>.seed<seed>``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Iterable

from planarena.core.io import atomic_write_json
from planarena.methods.base import Attempt


def train_units(fit: Callable[[tuple[str, int]], dict], domains: Iterable[str], seeds: Iterable[int], jobs: int,
                desc: str, device: str = "cpu") -> tuple[dict, dict]:
    """Run ``fit((domain, seed))`` for every pair on the executor's workers
    (:func:`planarena.core.executor.run_units`; ``device``: the units' torch device param, so a
    ``cuda`` unit goes to a worker with a GPU).

    ``fit`` returns the unit's facts (JSON-able), optionally with ``train_time_s``. A unit whose
    worker kept dying gets the facts ``{"status": "error", "reason": ...}`` (no checkpoint:
    :func:`unit_failure` turns it into ``error`` attempts).

    Returns:
        ``(facts, times)``: ``facts = {"domains": {domain: {"seed<seed>": facts}}}`` and
        ``times = {"<domain>/seed<seed>": train_time_s}`` (taken out of the facts: wall times do not
        belong in files whose hash DVC tracks).
    """
    from planarena.core.executor import run_units

    domains, seeds = list(domains), list(seeds)
    units = [(d, s) for d in domains for s in seeds]
    facts: dict = {"domains": {d: {} for d in domains}}
    times: dict[str, float | None] = {}
    for (domain, seed), info in zip(units, run_units(fit, units, jobs=jobs, desc=desc, device=device,
                                                        on_failure=lost_unit)):
        times[f"{domain}/seed{seed}"] = info.pop("train_time_s", None)
        facts["domains"][domain][f"seed{seed}"] = info
    return facts, times


def lost_unit(unit, reason: str) -> dict:
    """The facts of a training unit whose worker kept dying (the executor's ``on_failure``)."""
    return {"status": "error", "reason": f"training unit {unit!r} lost: {reason}"}


def save_unit(out: Path, state: dict | None, info: dict) -> None:
    """Write one unit: ``model.pt`` (the torch ``state`` dict, moved to the CPU; skipped when None)
    and ``facts.json`` (``info``) under ``out``."""
    import torch

    out.mkdir(parents=True, exist_ok=True)
    if state is not None:
        torch.save({k: v.cpu() for k, v in state.items()}, out / "model.pt")
    atomic_write_json(out / "facts.json", info, default=float)


def unit_failure(info: dict | None, domain: str, seed: int, progress: str = "step") -> Attempt | None:
    """The attempt every task of (domain, seed) gets when its unit has no usable model, else None.

    ``info``: the unit's facts (None: never trained). Facts keys read: ``status`` (``no data``:
    the method's data assumption does not hold at this profile, recorded as unsolved with
    ``reason``; ``diverged``: training diverged before any checkpoint, outcome ``diverged``),
    ``checkpoint`` (whether weights were saved), ``diverged_at`` (counted in ``progress`` units:
    optimiser steps, episodes), ``reason``.
    """
    if info is None:
        return Attempt("error", failure_reason=f"no trained model for {domain} (seed {seed}); run the train stage")
    if info.get("status") == "no data":
        return Attempt("unsolved", failure_reason=f"no model: {info.get('reason')}")
    if info.get("checkpoint"):
        return None
    if info.get("status") == "diverged":
        return Attempt("diverged", failure_reason=f"training diverged at {progress} {info.get('diverged_at')} "
                                                  f"before any checkpoint")
    return Attempt("error", failure_reason=info.get("reason") or f"training {info.get('status')} without a checkpoint")


__all__ = ["lost_unit", "save_unit", "train_units", "unit_failure"]
