"""Per-(domain, seed) models of the learned families: training them as independent units, saving
each one (weights + ``facts.json``), and turning a unit's facts into the outcome every attempt gets
when there is no usable model.

Used by the symmetry-aware transformers and the width-based R-GNN policies; the train stage's
``model_dir`` holds ``<domain>/seed<seed>/{model.pt, facts.json}`` and one ``facts.json`` with
every unit's facts under ``domains.<domain>.seed<seed>``.

A stage killed part-way loses no finished unit when the family passes ``keep`` (a folder outside
the stage's DVC outputs, keyed by everything the training depends on): each unit is copied there as
it finishes and the next run copies it back instead of training it again.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Callable, Iterable

from planarena.core.io import atomic_write_json
from planarena.methods.base import Attempt


#: A kept unit's facts (``keep`` of :func:`train_units`), written last: its presence marks the unit complete
KEPT = "unit.json"


def training_key(parts: dict, package: str, modules: Iterable[str], n: int = 16) -> str:
    """Content key of a family's training: the short SHA-256 (``n`` hex digits) of ``parts``
    (everything the training reads: params, data hashes, seeds) with ``"code"``, the fingerprint of
    the family's modules ``<package>.<module>`` (:func:`planarena.core.fingerprint.code_fingerprint`),
    so an edit to the family's training code retrains while an edit elsewhere does not.

    Raises:
        ValueError: ``parts`` already has a ``"code"`` entry."""
    from planarena.core.fingerprint import code_fingerprint
    from planarena.core.io import stable_hash

    if "code" in parts:
        raise ValueError("training_key: `code` is the family's code fingerprint; name the part otherwise")
    return stable_hash({**parts, "code": code_fingerprint([f"{package}.{m}" for m in modules])}, n=n)


def train_units(fit: Callable[[tuple[str, int]], dict], domains: Iterable[str], seeds: Iterable[int], jobs: int,
                desc: str, device: str = "cpu", model_dir: Path | None = None,
                keep: Path | None = None) -> tuple[dict, dict]:
    """Run ``fit((domain, seed))`` for every pair on the executor's workers
    (:func:`planarena.core.executor.run_units`; ``device``: the units' torch device param, so a
    ``cuda`` unit goes to a worker with a GPU).

    With ``model_dir`` and ``keep`` (both folders, ``fit`` writing its unit under
    ``model_dir/<domain>/seed<seed>``), every finished unit is copied to ``keep/<domain>/seed<seed>``
    with its facts in ``unit.json``; a unit found there is copied back into ``model_dir`` and not
    trained again (a killed stage resumes; a unit's training depends on its seed alone, so the
    result is the one a fresh run gives). ``keep`` must be keyed by everything training reads.

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
    kept: dict = {}
    if model_dir is not None and keep is not None:
        for domain, seed in units:
            src = Path(keep) / domain / f"seed{seed}"
            if (src / KEPT).exists():
                shutil.copytree(src, Path(model_dir) / domain / f"seed{seed}", dirs_exist_ok=True,
                                ignore=shutil.ignore_patterns(KEPT))
                kept[(domain, seed)] = json.loads((src / KEPT).read_text())
        fit = _keeping(fit, Path(model_dir), Path(keep))
    todo = [u for u in units if u not in kept]
    done = dict(zip(todo, run_units(fit, todo, jobs=jobs, desc=desc, device=device, on_failure=lost_unit)))
    for domain, seed in units:
        info = dict(kept.get((domain, seed)) or done[(domain, seed)])
        times[f"{domain}/seed{seed}"] = info.pop("train_time_s", None)
        facts["domains"][domain][f"seed{seed}"] = info
    return facts, times


def _keeping(fit: Callable[[tuple[str, int]], dict], model_dir: Path, keep: Path) -> Callable:
    """``fit`` that copies its finished unit from ``model_dir`` to ``keep`` (atomically: a folder
    renamed into place, ``unit.json`` inside it) before returning its facts."""
    def fit_and_keep(unit: tuple[str, int]) -> dict:
        info = fit(unit)
        domain, seed = unit
        src, dst = model_dir / domain / f"seed{seed}", keep / domain / f"seed{seed}"
        tmp = dst.with_name(dst.name + ".tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        if src.exists():
            shutil.copytree(src, tmp)
        else:
            tmp.mkdir(parents=True)
        atomic_write_json(tmp / KEPT, info, default=float)
        shutil.rmtree(dst, ignore_errors=True)
        tmp.rename(dst)
        return info
    return fit_and_keep


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
