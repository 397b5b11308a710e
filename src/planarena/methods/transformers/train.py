"""Training of the SATr heuristic model: renamed sample pairs, the contrastive objective, the
learning-rate schedule, divergence detection and checkpoint selection.

Source: Fritzsche, Gestrin, Seipp (docs/papers/symmetry-aware-transformers.md), Section 4 (renaming
modes: Rename-One for the heuristic model; L = w1 L_pred + w2 L_att + w3 L_hid, all weights 1),
Appendix E (AdamW, weight decay 0.1, betas 0.9/0.999, linear warm-up then cosine decay to a minimum
learning rate; every sample duplicated and renamed once, so the effective batch is twice the batch
size; a run has *diverged* when its training loss becomes NaN or spikes and stays on a high plateau,
Figure E.1; the checkpoint kept is the best on the validation split by coverage first, Section E2).

Without the contrastive loss (``*_nocl``) the same pairs are drawn and the same prediction loss is
minimised (w2 = w3 = 0), so the two variants differ only in the objective, as in the paper's
ablation (equal seeds, equal initial weights).
"""

from __future__ import annotations

import copy
import math
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np
import torch

from planarena.methods.transformers.batches import PairBatches, PlanBatches  # noqa: F401 (re-exported)
from planarena.methods.transformers.model import REDUCTIONS, SATrEncoder, contrastive_loss, pair_losses


@dataclass(frozen=True)
class TrainConfig:
    """Optimisation settings (paper, Appendix E / Table E.3: lr 1.5e-4, warm-up 2000, min lr 1e-7,
    70 epochs x 100,000 samples, batch 64). ``steps`` replaces epochs x samples / batch: the
    optimiser steps run. ``schedule_steps`` is the length of the learning-rate schedule in steps
    (warm-up + cosine), independent of ``steps``: Appendix E's "Maximum iterations for schedules:
    500000" (symmetry-aware-transformers.txt line 479) while a run stops after at most 70 epochs
    (109,375 steps, Section E2, line 597), so the learning rate of a paper run only falls to ~0.89 x
    ``lr``. None: the schedule ends at ``steps`` (the cosine reaches ``min_lr`` at the run's last
    step). ``eval_every`` steps the validation coverage is measured (checkpoint selection);
    ``window`` / ``spike`` / ``plateau`` define divergence (:func:`divergence_step`).
    ``contrastive_reduction``: how L_att and L_hid reduce (:data:`~planarena.methods.transformers.model.REDUCTIONS`):
    ``sum`` as Section 4's equations write them, ``mean`` as Appendix E's "MSE" (line 483).

    Raises:
        ValueError: ``schedule_steps`` below 1, or an unknown ``contrastive_reduction`` (named).
    """

    steps: int = 600
    schedule_steps: int | None = None
    batch: int = 32
    lr: float = 1e-3
    min_lr: float = 1e-5
    warmup: float = 50
    weight_decay: float = 0.1
    contrastive: bool = True
    contrastive_reduction: str = "sum"
    weights: tuple[float, float, float] = (1.0, 1.0, 1.0)
    rename_one: bool = True
    eval_every: int = 200
    window: float = 25
    spike: float = 10.0
    plateau: int = 4

    def __post_init__(self) -> None:
        if self.contrastive_reduction not in REDUCTIONS:
            raise ValueError(f"transformers.train.contrastive_reduction must be one of {', '.join(REDUCTIONS)}, "
                             f"got {self.contrastive_reduction!r}")
        if self.schedule_steps is not None and int(self.schedule_steps) < 1:
            raise ValueError(f"transformers.train.schedule_steps must be >= 1 or null, got {self.schedule_steps}")
        for key in ("warmup", "window"):
            value = getattr(self, key)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
                raise ValueError(f"transformers.train.{key} must be a step count (>= 1) or a fraction of the run "
                                 f"(< 1), got {value!r}")

    @property
    def warmup_steps(self) -> int:
        """Warm-up steps: ``warmup`` when it is >= 1, else that fraction of :attr:`schedule_length`
        (rounded; 0 means none)."""
        w = self.warmup
        return int(w) if w >= 1 else int(round(w * self.schedule_length))

    @property
    def window_steps(self) -> int:
        """Steps per divergence window: ``window`` when it is >= 1, else that fraction of ``steps``
        (at least 1)."""
        w = self.window
        return int(w) if w >= 1 else max(1, int(round(w * self.steps)))

    @property
    def schedule_length(self) -> int:
        """Steps of the learning-rate schedule: ``schedule_steps``, or ``steps`` when it is None."""
        return int(self.steps if self.schedule_steps is None else self.schedule_steps)


def learning_rate(step: int, cfg: TrainConfig) -> float:
    """The learning rate of optimiser step ``step`` (0-based): linear warm-up over
    ``cfg.warmup_steps`` steps, then cosine decay from ``cfg.lr`` to ``cfg.min_lr`` at step
    ``cfg.schedule_length`` (``schedule_steps``, else ``steps``; Appendix E), ``cfg.min_lr`` after it."""
    warmup = cfg.warmup_steps
    if step < warmup:
        return cfg.lr * (step + 1) / warmup
    t = min(1.0, (step - warmup) / max(1, cfg.schedule_length - warmup))
    return cfg.min_lr + 0.5 * (cfg.lr - cfg.min_lr) * (1 + math.cos(math.pi * t))


def divergence_step(losses: Sequence[float], window: int, spike: float, plateau: int) -> int | None:
    """The step at which a run diverged (Appendix E, Figure E.1), or None.

    A run diverged at the first non-finite loss, or at the start of ``plateau`` consecutive
    windows (means over ``window`` steps) that all exceed ``spike`` times the best window mean
    before them: a spike that *stays* (a spike that returns to low values is not a divergence).
    """
    losses = np.asarray(losses, dtype=float)
    bad = np.nonzero(~np.isfinite(losses))[0]
    if len(bad):
        return int(bad[0])
    n = len(losses) // window
    means = losses[: n * window].reshape(n, window).mean(1) if n else np.zeros(0)
    best, run = math.inf, 0
    for i, m in enumerate(means):
        if best < math.inf and m > spike * best:
            run += 1
            if run >= plateau:
                return int((i - plateau + 1) * window)
        else:
            run = 0
            best = min(best, m)
    return None


@dataclass
class TrainResult:
    """``status``: ``ok`` or ``diverged`` (then ``diverged_at`` is the step); ``losses`` per step;
    ``best_step`` and ``best_score`` of the kept checkpoint; ``state`` its weights. When the
    validator scores several criteria (a dict, one per decoding strategy), ``best`` holds each
    criterion's kept checkpoint, ``{key: (score, step, state)}``, and ``best_step`` /
    ``best_score`` / ``state`` are those of the first key; ``evaluations`` lists every validation,
    ``(step, {key: score})``."""

    status: str
    steps_run: int
    losses: list[float] = field(default_factory=list)
    diverged_at: int | None = None
    best_step: int | None = None
    best_score: tuple | None = None
    state: dict | None = None
    seconds: float = 0.0
    best: dict = field(default_factory=dict)
    evaluations: list = field(default_factory=list)


def fit(model, step_loss: Callable[[np.random.Generator], torch.Tensor], cfg: TrainConfig, seed: int,
        validate: Callable[[Any], tuple] | None = None) -> TrainResult:
    """Train ``model`` in place with ``step_loss(rng)`` (the loss of one freshly drawn batch); return
    the :class:`TrainResult` with the kept checkpoint's weights.

    ``validate(model)`` returns a score tuple, higher is better (e.g. ``(coverage, -cap hits)``),
    or a dict of them, one per criterion (e.g. per decoding strategy: each keeps its own best
    checkpoint); it runs every ``cfg.eval_every`` steps and at the end, and the best checkpoint is
    kept (ties: the later one, which has trained longer). A diverged run stops at the divergence
    and keeps its best checkpoints before it, if any; it never raises.
    """
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, betas=(0.9, 0.999), weight_decay=cfg.weight_decay)
    start = time.perf_counter()
    res = TrainResult("ok", 0)
    window = cfg.window_steps

    def checkpoint(step: int) -> None:
        model.eval()
        with torch.no_grad():
            scores = validate(model) if validate else ()
        model.train()
        scores = scores if isinstance(scores, dict) else {"": scores}
        res.evaluations.append((step, {k: list(v) for k, v in scores.items()}))
        state = None
        for key, score in scores.items():
            score = (*score, step)
            if key not in res.best or score >= res.best[key][0]:
                state = state if state is not None else copy.deepcopy(model.state_dict())
                res.best[key] = (score, step, state)
        res.best_score, res.best_step, res.state = res.best[next(iter(scores))]

    model.train()
    for step in range(cfg.steps):
        for g in opt.param_groups:
            g["lr"] = learning_rate(step, cfg)
        loss = step_loss(rng)
        res.losses.append(float(loss.detach()))
        res.steps_run = step + 1
        if not math.isfinite(res.losses[-1]):
            res.status, res.diverged_at = "diverged", step
            break
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if (step + 1) % window == 0:
            at = divergence_step(res.losses, window, cfg.spike, cfg.plateau)
            if at is not None:
                res.status, res.diverged_at = "diverged", at
                break
        if validate and (step + 1) % cfg.eval_every == 0:
            checkpoint(step + 1)
    if res.status == "ok" and not (res.evaluations and res.evaluations[-1][0] == res.steps_run):
        checkpoint(res.steps_run)   # the last step, unless it was just validated
    res.seconds = round(time.perf_counter() - start, 3)
    return res


def train_heuristic(model: SATrEncoder, batches: PairBatches, cfg: TrainConfig, seed: int,
                    validate: Callable[[SATrEncoder], tuple] | None = None) -> TrainResult:
    """Train the heuristic model (:func:`fit`): MSE to h* on both renamed copies, plus the
    contrastive terms when ``cfg.contrastive`` (Section 4, Appendix E)."""
    w1, w2, w3 = cfg.weights
    dev = next(model.parameters()).device

    def step_loss(rng):
        ids_a, ids_b, mask, h = (x.to(dev) for x in batches.draw(cfg.batch, rng, cfg.rename_one))
        out_a, out_b = model(ids_a, mask), model(ids_b, mask)
        loss = w1 * 0.5 * (torch.mean((out_a[0] - h) ** 2) + torch.mean((out_b[0] - h) ** 2))
        if cfg.contrastive:
            l_att, l_hid = contrastive_loss(out_a, out_b, mask, model.cfg.k, cfg.contrastive_reduction)
            loss = loss + w2 * l_att + w3 * l_hid
        return loss

    return fit(model, step_loss, cfg, seed, validate)


def generator_terms(model, batch: dict, k: int, contrastive: bool = True,
                    reduction: str = "sum") -> tuple[torch.Tensor, torch.Tensor | None, torch.Tensor | None]:
    """``(L_pred, L_att, L_hid)`` of one batch of renamed pairs (a :meth:`PlanBatches.draw` dict):
    L_pred the token cross-entropy averaged over the real target tokens of both copies (nats per
    token); L_att and L_hid over every hidden state and attention module (Section 4,
    :func:`~planarena.methods.transformers.model.pair_losses` with ``reduction``), None without
    ``contrastive``."""
    dev = next(model.parameters()).device
    batch = {k: tuple(x.to(dev) for x in v) if isinstance(v, tuple) else v.to(dev) for k, v in batch.items()}
    out_a, out_b = model(*batch["a"]), model(*batch["b"])
    tgt, weight = batch["target"], batch["target_mask"].float()
    ce = torch.nn.functional.cross_entropy
    l_pred = sum((ce(o.logits.flatten(0, 1), t.flatten(), reduction="none") * weight.flatten()).sum()
                 for o, t in ((out_a, tgt[0]), (out_b, tgt[1]))) / (2 * weight.sum())
    if not contrastive:
        return l_pred, None, None
    l_att, l_hid = pair_losses(out_a, out_b, k, batch.get("perm"), reduction)
    return l_pred, l_att, l_hid


def generator_losses(model, batch: dict, cfg: TrainConfig, k: int) -> torch.Tensor:
    """``w1 L_pred + w2 L_att + w3 L_hid`` of one batch of renamed pairs (:func:`generator_terms`;
    the contrastive terms only when ``cfg.contrastive``)."""
    w1, w2, w3 = cfg.weights
    l_pred, l_att, l_hid = generator_terms(model, batch, k, cfg.contrastive, cfg.contrastive_reduction)
    if l_att is None:
        return w1 * l_pred
    return w1 * l_pred + w2 * l_att + w3 * l_hid


def teacher_forced(model, batch: dict) -> tuple[float, float]:
    """``(accuracy, loss)`` of a plan generator on one fixed batch of renamed pairs (a
    :meth:`PlanBatches.draw` dict), both copies: the fraction of real target tokens whose argmax is
    the target (teacher forcing), and their mean token cross-entropy (L_pred, nats per token; the
    contrastive terms are left out so that models with and without them compare). Section E2's
    last two checkpoint criteria, "Accuracy between the predicted and sampled plans" and "Loss"
    (symmetry-aware-transformers.txt lines 609-611); the paper does not say which loss: L_pred is
    the choice here."""
    dev = next(model.parameters()).device
    dtype = next(model.parameters()).dtype
    batch = {k: tuple(x.to(dev) for x in v) if isinstance(v, tuple) else v.to(dev) for k, v in batch.items()}
    weight = batch["target_mask"].to(dtype)
    hits = loss = 0.0
    for out, tgt in ((model(*batch["a"]), batch["target"][0]), (model(*batch["b"]), batch["target"][1])):
        ce = torch.nn.functional.cross_entropy(out.logits.flatten(0, 1), tgt.flatten(), reduction="none")
        loss += float((ce * weight.flatten()).sum())
        hits += float(((out.logits.argmax(-1) == tgt).to(dtype) * weight).sum())
    n = 2 * float(weight.sum())
    return (hits / n, loss / n) if n else (0.0, math.inf)


def train_generator(model, batches: "PlanBatches", cfg: TrainConfig, seed: int,
                    validate: Callable[[Any], tuple] | None = None) -> TrainResult:
    """Train a plan generator (:class:`~planarena.methods.transformers.decoders.SATrEncDec` or
    :class:`~planarena.methods.transformers.decoders.PlanGPT`) with :func:`fit` and
    :func:`generator_losses`; Rename-Both (both copies random, Section 4)."""
    return fit(model, lambda rng: generator_losses(model, batches.draw(cfg.batch, rng), cfg, model.cfg.k),
               cfg, seed, validate)


__all__ = ["PairBatches", "PlanBatches", "TrainConfig", "TrainResult", "divergence_step", "fit", "generator_losses",
           "generator_terms", "learning_rate", "teacher_forced", "train_generator", "train_heuristic"]
