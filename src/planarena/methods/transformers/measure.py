"""Paired training runs with and without the contrastive objective, for measurement claims
(:mod:`planarena.claims.measure`).

Source: Fritzsche, Gestrin, Seipp (docs/papers/symmetry-aware-transformers.md), Section 6 "Results -
Training Stability" ("Training models with the contrastive objective results in lower validation
losses") and Appendix E1 / Table E.2 (per hyper-parameter setting one model with and one without the
loss, the same seed; the validation loss of each), Appendix E2 ("the models with and without the
contrastive loss started from the same initial weights").

A unit is a seed: both arms start from the same initial weights (``torch.manual_seed(seed)`` before
the model is built; the contrastive terms add no parameters), draw the same training batches (the
batch generator is seeded by ``seed`` alone) and differ only in the objective (``w2 = w3 = 0``
without it, :mod:`planarena.methods.transformers.train`). Every ``eval_every`` steps L_pred (token
cross-entropy, nats per token, contrastive terms left out so that the arms compare) is measured on
one fixed batch of renamed (state, optimal plan) pairs sampled from the validation problems' full
state spaces; the network at its initial weights is a third side, ``untrained`` (what no learning
scores). A run whose training diverged (Appendix E, :func:`~planarena.methods.transformers.train.divergence_step`)
is recorded as not completed, so it counts as the higher loss (the paper's NaN rows).
"""

from __future__ import annotations

import functools
import time
from pathlib import Path
from typing import Iterator

from planarena.config import get
from planarena.core.io import derive_seed

#: ``args.arms`` values: how a side is trained.
ARMS = ("contrastive", "prediction_only", "untrained")


@functools.lru_cache(maxsize=4)
def state_spaces(domain_file: str, problem_files: tuple[str, ...], max_states: int | None) -> tuple:
    """Full state spaces of ``problem_files`` (:func:`planarena.methods.transformers.data.expand`,
    at most ``max_states`` states each; None: in full), cached: one worker builds them once for all
    its units."""
    from planarena.methods.transformers.data import expand

    return tuple(expand(domain_file, f, max_states) for f in problem_files)


def suite_files(params: dict, domain: str) -> tuple[Path, dict[str, list[Path]]]:
    """The domain file and the ``train`` / ``validation`` problem files of the params' suite (a
    suite with a file layout, :data:`planarena.datasets.suites.LAYOUTS`).

    Raises:
        ValueError: the suite has no file layout, or a split has no problem (one line).
    """
    from planarena.datasets.suites import LAYOUTS

    suite = params.get("suite")
    if suite not in LAYOUTS:
        raise ValueError(f"contrastive_pairs: suite {suite!r} has no file layout (one of {', '.join(LAYOUTS)})")
    root = Path(get(params, f"suites.{suite}.path")) / domain
    folders = {split: folder for folder, split in LAYOUTS[suite]}
    out = {}
    for split in ("train", "validation"):
        files = sorted((root / folders[split]).glob("*.pddl"))
        if not files:
            raise ValueError(f"contrastive_pairs: no {split} problem under {root / folders[split]}")
        out[split] = files
    return root / "domain.pddl", out


def train_arm(params: dict, domain: str, seed: int, arm: str, args: dict) -> dict:
    """One arm of one seed (module docstring): ``{"status", "steps_run", "diverged_at", "curve":
    [[step, L_pred], ...] (step 0: the initial weights), "final_loss", "train_loss" (mean training
    loss of the last 5 % of steps), "cpu_s"}``.

    ``args``: ``arch`` (``encdec`` or ``plangpt``; default ``encdec``), ``validation_samples``
    (pairs in the fixed validation batch, default 256), ``max_states`` (largest state space
    expanded, default None: every one in full). The model and training settings are the params'
    ``transformers`` section (``model``, ``train``, ``by_arch.<arch>``, ``max_objects``).
    """
    import dataclasses

    import numpy as np
    import torch

    from planarena.methods.transformers.batches import PlanBatches
    from planarena.methods.transformers.method import build_model, vocabulary
    from planarena.methods.transformers.train import TrainConfig, teacher_forced, train_generator

    if arm not in ARMS:
        raise ValueError(f"contrastive_pairs: arm {arm!r}; one of {', '.join(ARMS)}")
    arch = str(args.get("arch", "encdec"))
    t = get(params, "transformers", {}) or {}
    over = (t.get("by_arch") or {}).get(arch) or {}
    model_cfg = {**(t.get("model") or {}), **(over.get("model") or {})}
    train = {**(t.get("train") or {}), **(over.get("train") or {})}
    domain_file, files = suite_files(params, domain)
    max_states = args.get("max_states")
    spaces = state_spaces(str(domain_file), tuple(map(str, files["train"])), max_states)
    validation = state_spaces(str(domain_file), tuple(map(str, files["validation"])), max_states)
    torch.set_num_threads(1)
    vocab = vocabulary(domain_file, files["train"][0], spaces, int(t.get("max_objects", 64)))
    torch.manual_seed(seed)
    model, tokens = build_model(arch, vocab, model_cfg)
    rng = np.random.default_rng(derive_seed(seed, "contrastive-validation-batch", domain))
    batch = PlanBatches(arch, tokens, validation).draw(int(args.get("validation_samples", 256)), rng)
    c0 = time.process_time()
    model.eval()
    with torch.no_grad():
        initial = teacher_forced(model, batch)[1]
    if arm == "untrained":
        return {"status": "ok", "steps_run": 0, "diverged_at": None, "curve": [[0, initial]], "final_loss": initial,
                "train_loss": None, "cpu_s": round(time.process_time() - c0, 3)}
    cfg = TrainConfig(**{**train, "contrastive": arm == "contrastive", "rename_one": False})
    cfg = dataclasses.replace(cfg, eval_every=int(args.get("eval_every", cfg.eval_every)))
    res = train_generator(model, PlanBatches(arch, tokens, spaces), cfg, seed,
                          lambda m: (-teacher_forced(m, batch)[1],))
    curve = [[0, initial]] + [[step, -scores[""][0]] for step, scores in res.evaluations]
    tail = res.losses[-max(1, len(res.losses) // 20):]
    return {"status": res.status, "steps_run": res.steps_run, "diverged_at": res.diverged_at, "curve": curve,
            "final_loss": curve[-1][1] if res.status == "ok" else None,
            "train_loss": float(np.mean(tail)) if tail else None, "cpu_s": round(time.process_time() - c0, 3)}


def contrastive_pairs(params: dict, sides: list[str], args: dict, done: set) -> Iterator[dict]:
    """The measurement of a contrastive-loss claim: for every seed of ``args["seeds"]`` and every side
    (``sides``, each trained as ``args["arms"][side]``, one of :data:`ARMS`), one row ``{"domain",
    "split": "validation", "problem": "seed<seed>", "objects", "side", "completed" (False: training
    diverged), "values": {"val_loss": L_pred at the last step, "val_loss_best": the lowest logged,
    "train_loss", "steps", "cpu_s"}, "curve": [[step, L_pred], ...]}``; the (seed, side) units run on
    the executor's workers (params ``jobs``) and each row comes as its unit finishes (a stopped run
    keeps every finished unit); keys in ``done`` are skipped.

    Raises:
        ValueError: a side has no arm, an arm is unknown, or the suite lacks the splits (one line).
    """
    from planarena.core.executor import run_units_as_completed

    domain = str(args.get("domain") or (get(params, f"suites.{params.get('suite')}.domains") or [None])[0])
    arms = dict(args.get("arms") or {})
    missing = [s for s in sides if arms.get(s) not in ARMS]
    if missing:
        raise ValueError(f"contrastive_pairs: side(s) {', '.join(missing)} need args.arms.<side> in {', '.join(ARMS)}")
    from planarena.core.pddl import load_problem

    domain_file, files = suite_files(params, domain)
    # the objects of the largest validation problem (the rows' size column)
    objects = max(len(load_problem(str(domain_file), str(f)).get_objects()) for f in files["validation"])
    units = [(int(s), side) for s in args.get("seeds") or [] for side in sides
             if (domain, "validation", f"seed{int(s)}", side) not in done]

    def unit(u: tuple[int, str]) -> dict:
        return train_arm(params, domain, u[0], arms[u[1]], args)

    for (seed, side), out in run_units_as_completed(unit, units, jobs=params.get("jobs"), desc="contrastive pairs"):
        ok = out["status"] == "ok"
        losses = [v for _, v in out["curve"]]
        values = {"val_loss": out["final_loss"], "val_loss_best": min(losses), "train_loss": out["train_loss"],
                  "steps": out["steps_run"], "cpu_s": out["cpu_s"]} if ok else {"steps": out["steps_run"],
                                                                                 "cpu_s": out["cpu_s"]}
        yield {"domain": domain, "split": "validation", "problem": f"seed{seed}", "objects": objects, "side": side,
               "completed": ok, "values": {k: v for k, v in values.items() if v is not None},
               "curve": out["curve"], "diverged_at": out["diverged_at"]}


__all__ = ["ARMS", "contrastive_pairs", "train_arm"]
