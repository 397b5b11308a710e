"""DIAS training: stratified action-balanced batches, AdamW, PCGrad of ``L_aux`` against ``L_main``,
the precondition-exponent schedule, validation history, divergence handling.

Source: Reiter, Gebler, Geffner (docs/papers/dias.md), Section 4.4 (losses, gradient projection),
Appendix A.2.2 (hyperparameters, eq. 19-20, the ``tau`` schedule), A.4.2 (``tau`` floor and derivation
threshold under noise). The ``tau`` schedule is a fraction of the run (``tau_fraction``) unless an
absolute ``tau_steps`` is given (the paper profile's 500), so that a shortened run also ends in eq. 7's
product regime (:meth:`DiasConfig.tau_horizon`). Paper-silent choices: ``layers`` = 3, the Sinkhorn ``T_max`` / ``epsilon``,
AdamW's default weight decay 0.01, validation ``L_main`` every ``eval_every`` steps at the current
``tau`` (the final model is kept, not the best), one instance per step drawn uniformly when several
are given.
"""

from __future__ import annotations

import math
import os
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Sequence

import torch

from planarena.core.io import stable_hash
from planarena.methods.dias.model import EFFECTS, KEY_NORMS, OBSERVATIONS, DiasModel, Vocab


@dataclass(frozen=True)
class DiasConfig:
    """Model and training hyperparameters (defaults: DIAS Appendix A.2.2).

    Units: ``steps``, ``tau_steps``, ``eval_every`` in gradient steps; ``batch`` in transitions.
    ``tau`` (eq. 8's root degree) is 1 at step 0 and ``0.1`` at step :meth:`tau_horizon`
    (exponential, decaying toward 0 after it), never below ``tau_floor`` (0.1 for noise runs,
    Appendix A.4.2). The paper (dias-action-schemas.txt line 321, Appendix A.2.2) states "tau = 1 at
    step 0 and tau = 0.1 at step 500" of 10,000 steps: ``tau_steps`` = 500 is that absolute
    schedule (the paper profile); with ``tau_steps`` None the schedule is the same fraction of the
    run, ``tau_fraction`` = 500 / 10,000 = 0.05 of ``steps``, so that a shortened run still ends
    at tau ~ 1e-20, the product of eq. 7, as the paper's run does (an absolute 500 steps would leave
    a 100-step run at tau = 0.63, near the geometric mean). ``threshold`` is the eq. 14 literal
    threshold (0.75 under noise). ``alpha`` is the per-domain auxiliary weight (Appendix A.3.3).
    ``pcgrad``: where eq. 19 projects (:data:`PCGRAD`; ``flat``, the paper's reading, by default).

    Raises:
        ValueError: unknown ``effects`` / ``observation`` or an out-of-range value (named).
    """

    d: int = 32
    slots: int = 5
    layers: int = 3
    lr: float = 5e-3
    batch: int = 200
    steps: int = 10000
    weight_decay: float = 0.01
    alpha: float = 1.0
    pcgrad: str = "flat"
    sinkhorn_iters: int = 100
    sinkhorn_tol: float = 1e-5
    key_norm: str = "layer"
    tau_steps: float | None = None
    tau_fraction: float = 0.05
    tau_floor: float = 0.0
    threshold: float = 0.5
    effects: str = "strips"
    observation: str = "names"
    mlp_hidden: int = 128
    eval_every: int = 500
    device: str = "cpu"

    def __post_init__(self) -> None:
        if self.effects not in EFFECTS:
            raise ValueError(f"effects {self.effects!r}; expected one of {EFFECTS}")
        if self.observation not in OBSERVATIONS:
            raise ValueError(f"observation {self.observation!r}; expected one of {OBSERVATIONS}")
        if self.key_norm not in KEY_NORMS:
            raise ValueError(f"key_norm {self.key_norm!r}; expected one of {KEY_NORMS}")
        if self.pcgrad not in PCGRAD:
            raise ValueError(f"pcgrad {self.pcgrad!r}; expected one of {PCGRAD}")
        for name in ("d", "slots", "layers", "batch", "sinkhorn_iters", "eval_every", "mlp_hidden"):
            if int(getattr(self, name)) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")
        if self.steps < 0 or self.lr <= 0 or self.alpha < 0 or self.weight_decay < 0:
            raise ValueError(f"need steps >= 0, lr > 0, alpha >= 0, weight_decay >= 0; got {self}")
        if self.tau_steps is not None and not float(self.tau_steps) > 0:
            raise ValueError(f"tau_steps must be > 0 or null, got {self.tau_steps}")
        if not 0.0 < float(self.tau_fraction) <= 1.0:
            raise ValueError(f"tau_fraction must be in (0, 1], got {self.tau_fraction}")
        if not 0.0 <= self.tau_floor <= 1.0 or not 0.0 <= self.threshold < 1.0:
            raise ValueError(f"tau_floor in [0, 1] and threshold in [0, 1) required; got {self.tau_floor}, {self.threshold}")

    def tau_horizon(self) -> float:
        """The step at which ``tau`` reaches 0.1 (gradient steps, > 0): ``tau_steps`` when set (the
        paper's absolute 500), else ``tau_fraction * steps`` (at least 1 step)."""
        if self.tau_steps is not None:
            return float(self.tau_steps)
        return max(1.0, float(self.tau_fraction) * self.steps)

    @classmethod
    def from_params(cls, block: dict | None) -> "DiasConfig":
        """From a params dict; unknown keys raise :class:`planarena.config.ConfigError` naming them."""
        from planarena.config import dataclass_from_params

        return dataclass_from_params(cls, block, "dias")


@dataclass
class TransitionData:
    """All transitions of one instance: ``A``, ``A_next`` float (N, R, O, O) in {0, 1}; ``action``
    long (N,) into ``vocab.actions``; ``known`` long (N, M), object per slot or -1.

    Raises:
        ValueError: inconsistent shapes or dtypes (named).
    """

    A: torch.Tensor
    A_next: torch.Tensor
    action: torch.Tensor
    known: torch.Tensor

    def __post_init__(self) -> None:
        N = self.action.shape[0] if self.action.dim() == 1 else -1
        if self.A.dim() != 4 or self.A.shape[2] != self.A.shape[3]:
            raise ValueError(f"A must be (N, R, O, O), got {tuple(self.A.shape)}")
        if self.A_next.shape != self.A.shape:
            raise ValueError(f"A_next {tuple(self.A_next.shape)} != A {tuple(self.A.shape)}")
        if N != self.A.shape[0] or self.known.dim() != 2 or self.known.shape[0] != N:
            raise ValueError(f"action (N,) and known (N, M) must match A's N={self.A.shape[0]}; "
                             f"got {tuple(self.action.shape)}, {tuple(self.known.shape)}")
        if self.action.dtype != torch.long or self.known.dtype != torch.long:
            raise ValueError("action and known must be long tensors")
        self._groups: list[torch.Tensor] | None = None

    def __len__(self) -> int:
        return int(self.action.shape[0])

    def subset(self, idx: torch.Tensor) -> "TransitionData":
        """The transitions at ``idx`` (long)."""
        return TransitionData(self.A[idx], self.A_next[idx], self.action[idx], self.known[idx])

    def to(self, device: str | torch.device) -> "TransitionData":
        return TransitionData(self.A.to(device), self.A_next.to(device), self.action.to(device), self.known.to(device))

    def balanced_batch(self, size: int, generator: torch.Generator) -> "TransitionData":
        """A stratified action-balanced batch of ``size`` transitions (Appendix A.2.2).

        Each action name present gets ``size // k`` transitions (k = names present), the remainder
        one more each for names drawn at random; within a name, drawn without replacement when it
        has enough transitions, with replacement otherwise. ``generator``: a CPU generator.
        """
        if self._groups is None:
            act = self.action.cpu()
            self._groups = [(act == a).nonzero()[:, 0] for a in torch.unique(act).tolist()]
        k = len(self._groups)
        counts = [size // k] * k
        for g in torch.randperm(k, generator=generator)[: size % k].tolist():
            counts[g] += 1
        picks = []
        for grp, n in zip(self._groups, counts):
            if n <= len(grp):
                picks.append(grp[torch.randperm(len(grp), generator=generator)[:n]])
            else:
                picks.append(grp[torch.randint(len(grp), (n,), generator=generator)])
        return self.subset(torch.cat(picks).to(self.action.device))


def tau_schedule(step: int, tau_steps: float = 500, floor: float = 0.0) -> float:
    """Eq. 8's ``tau``: ``0.1 ** (step / tau_steps)`` (1 at step 0, 0.1 at ``tau_steps``, toward 0
    after it), at least ``floor``. ``tau_steps``: gradient steps, > 0 (:meth:`DiasConfig.tau_horizon`)."""
    return max(0.1 ** (step / tau_steps), floor)


#: Where eq. 19's projection is applied: ``flat`` (the paper's reading: the whole gradient vector
#: "with respect to all model weights", Appendix A.2.2), ``tensor`` (each parameter tensor's slice on
#: its own) or ``element`` (each coordinate: an auxiliary component whose sign opposes the main one
#: is dropped). The norm cap of eq. 20 is on the whole vector in every case.
PCGRAD = ("flat", "tensor", "element")


def pcgrad(g_main: torch.Tensor, g_aux: torch.Tensor, alpha: float, granularity: str = "flat",
           sizes: Sequence[int] | None = None) -> torch.Tensor:
    """Eq. 19-20 on flat gradient vectors.

    If ``g_aux . g_main < 0``, ``g_aux`` is projected onto the plane normal to ``g_main``; the result
    is scaled by ``min(||g_main|| / ||g~_aux||, 1)`` and added with weight ``alpha``:
    ``g = g_main + alpha * min(||g_main|| / ||g~_aux||, 1) * g~_aux`` (a zero ``g~_aux`` adds nothing).
    ``granularity`` (:data:`PCGRAD`): the projection on the whole vector (``flat``), on each slice of
    ``sizes`` (``tensor``: the parameter tensors' sizes, in order) or on each coordinate
    (``element``).

    Raises:
        ValueError: unknown ``granularity``, or ``tensor`` without ``sizes`` summing to the length.
    """
    if granularity == "flat":
        dot = torch.dot(g_aux, g_main)
        if dot < 0:
            g_aux = g_aux - dot / torch.dot(g_main, g_main) * g_main
    elif granularity == "element":
        g_aux = torch.where(g_aux * g_main < 0, torch.zeros_like(g_aux), g_aux)
    elif granularity == "tensor":
        if sizes is None or sum(sizes) != g_main.numel():
            raise ValueError("pcgrad: 'tensor' needs the parameter sizes (summing to the gradient's length)")
        parts = []
        for m, a in zip(torch.split(g_main, list(sizes)), torch.split(g_aux, list(sizes))):
            dot = torch.dot(a, m)
            parts.append(a - dot / torch.dot(m, m) * m if dot < 0 else a)
        g_aux = torch.cat(parts) if parts else g_aux
    else:
        raise ValueError(f"pcgrad: granularity {granularity!r}; expected one of {PCGRAD}")
    n_main, n_aux = g_main.norm(), g_aux.norm()
    if n_aux == 0:
        return g_main.clone()
    return g_main + alpha * torch.clamp(n_main / n_aux, max=1.0) * g_aux


def _flat(grads: Sequence[torch.Tensor | None], params: Sequence[torch.Tensor]) -> torch.Tensor:
    return torch.cat([(torch.zeros_like(p) if g is None else g).reshape(-1) for g, p in zip(grads, params)])


def _as_list(source) -> list[TransitionData]:
    if source is None:
        return []
    return [source] if isinstance(source, TransitionData) else list(source)


@torch.no_grad()
def validation_loss(model: DiasModel, data: Sequence[TransitionData], tau: float, batch: int, seed: int,
                    device: str = "cpu") -> float:
    """Mean ``L_adj / N`` (``L_main``) over every validation transition, in chunks of ``batch``; node
    noise from a generator seeded with ``seed`` (the same noise at every evaluation)."""
    gen = torch.Generator(device=device).manual_seed(seed)
    total, count = 0.0, 0
    for d in data:
        for start in range(0, len(d), batch):
            c = d.subset(torch.arange(start, min(start + batch, len(d)))).to(device)
            out = model(c.A, c.A_next, c.action, c.known, tau, generator=gen)
            total += float((out.l_adj / out.n).sum())
            count += len(c)
    return total / max(count, 1)


#: Steps between two checkpoints of :func:`train` (a names-only step costs 70-250 ms on one core:
#: 500 steps are about a minute of work to redo after a kill).
CHECKPOINT_EVERY = 500


def train(config: DiasConfig, vocab: Vocab, train_batches_source, validation_source=None, seed: int = 0,
          progress: bool = True, checkpoint: Path | None = None,
          checkpoint_every: int | None = None) -> tuple[DiasModel, dict]:
    """Train DIAS on the transitions of one instance (or several, one drawn per step).

    Args:
        config: hyperparameters; vocab: the signature.
        train_batches_source: :class:`TransitionData` or a sequence of them (``known`` width: the
            model's ``M``: ``slots``, or the largest true arity with ``strips`` observations).
        validation_source: the same kind, or None (no validation history).
        seed: seeds torch's global RNG (parameter init) and two generators (batches, node noise);
            the same seed gives the same parameters and facts except ``seconds``.
        progress: a tqdm bar.
        checkpoint: a file that receives the run's state (parameters, optimiser, the three
            random generators, the facts so far) every ``checkpoint_every`` steps (None:
            :data:`CHECKPOINT_EVERY`), so that a killed run resumes where it stopped. A state found
            there under the same key (config, seed, vocabulary, data sizes: the caller keys the
            folder by the data's content) is resumed; one under another key is ignored. The resumed
            run's parameters and facts are those of an uninterrupted run (``seconds`` counts this
            process's time only). The caller removes the file once the run's outputs are written.
            None: no checkpoint.

    Returns:
        ``(model, facts)``; facts: ``steps_run``, ``diverged`` (a non-finite loss or gradient stops
        training before that step's update, without raising), ``diverged_at``, ``seconds``,
        ``train_loss`` (step, L_main, L_aux), ``validation`` (step, L_main on validation, tau) and
        ``slot_activation`` (step, sigma(w) per action and slot, eq. 2; (A, M) nested lists) every
        ``eval_every`` steps and at the end, ``final_validation``, ``parameters``, ``tau_final``,
        ``tau_horizon`` (the step where tau is 0.1), ``config``. The final model is returned (not
        the best by validation).

    Raises:
        ValueError: no training transitions, or a model/data shape mismatch.
    """
    from tqdm import tqdm

    data = [d.to(config.device) for d in _as_list(train_batches_source)]
    val = _as_list(validation_source)
    if not data or not any(len(d) for d in data):
        raise ValueError("train: no training transitions")
    torch.manual_seed(seed)
    batch_gen = torch.Generator().manual_seed(seed)
    noise_gen = torch.Generator(device=config.device).manual_seed(seed + 1)
    model = DiasModel(vocab, d=config.d, slots=config.slots, layers=config.layers, observation=config.observation,
                      effects=config.effects, mlp_hidden=config.mlp_hidden, sinkhorn_iters=config.sinkhorn_iters,
                      sinkhorn_tol=config.sinkhorn_tol, key_norm=config.key_norm).to(config.device)
    for d in data:
        model.mark_known(d.action, d.known)
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=config.lr, weight_decay=config.weight_decay)
    facts: dict = {"steps": config.steps, "steps_run": 0, "diverged": False, "diverged_at": None,
                   "train_loss": [], "validation": [], "slot_activation": [], "final_validation": None,
                   "parameters": int(sum(p.numel() for p in params)), "config": asdict(config), "seed": seed}
    start = time.perf_counter()
    horizon = config.tau_horizon()
    tau = tau_schedule(0, horizon, config.tau_floor)
    key = stable_hash({"config": asdict(config), "seed": seed, "vocab": repr(vocab),
                       "data": [len(d) for d in data], "validation": [len(v) for v in val]})
    every = int(checkpoint_every or CHECKPOINT_EVERY)
    first = _resume(checkpoint, key, model, opt, batch_gen, noise_gen, facts) if checkpoint else 0
    bar = tqdm(range(first, config.steps), disable=not progress, desc="dias", leave=False,
               initial=first, total=config.steps)
    for step in bar:
        tau = tau_schedule(step, horizon, config.tau_floor)
        inst = data[int(torch.randint(len(data), (1,), generator=batch_gen))] if len(data) > 1 else data[0]
        b = inst.balanced_batch(config.batch, batch_gen)
        out = model(b.A, b.A_next, b.action, b.known, tau, generator=noise_gen)
        main, aux = float(out.main.detach()), float(out.aux.detach())
        g_total = None
        if math.isfinite(main) and math.isfinite(aux):
            g_main = _flat(torch.autograd.grad(out.main, params, retain_graph=True, allow_unused=True), params)
            g_aux = _flat(torch.autograd.grad(out.aux, params, allow_unused=True), params)
            g_total = pcgrad(g_main, g_aux, config.alpha, config.pcgrad, [p.numel() for p in params])
        if g_total is None or not bool(torch.isfinite(g_total).all()):
            facts["diverged"], facts["diverged_at"] = True, step
            break
        offset = 0
        for p in params:
            p.grad = g_total[offset: offset + p.numel()].view_as(p).clone()
            offset += p.numel()
        opt.step()
        facts["steps_run"] = step + 1
        if (step + 1) % config.eval_every == 0 or step + 1 == config.steps:
            facts["train_loss"].append((step + 1, main, aux))
            # eq. 2's slot activations sigma(w^a), (A, M): which slots the learned arity keeps (> 1/2)
            facts["slot_activation"].append((step + 1, [[round(float(x), 4) for x in row]
                                                        for row in torch.sigmoid(model.w.detach()).cpu()]))
            if val:
                v = validation_loss(model, val, tau, config.batch, seed + 2, config.device)
                facts["validation"].append((step + 1, v, tau))
                facts["final_validation"] = v
            bar.set_postfix(main=f"{main:.4g}", aux=f"{aux:.4g}")
        if checkpoint and (step + 1) % every == 0 and step + 1 < config.steps:
            _save_checkpoint(checkpoint, key, step + 1, model, opt, batch_gen, noise_gen, facts)
    if val and config.observation != "strips" and not facts["diverged"]:
        # Section 4.1's S is row-stochastic; a row mass well below 1 flags a non-converged Sinkhorn
        c = val[0].subset(torch.arange(min(config.batch, len(val[0])))).to(config.device)
        mass = model.selection_row_mass(c.A, c.A_next, c.action, c.known,
                                        torch.Generator(device=config.device).manual_seed(seed + 2))
        facts["selection_row_mass_min"] = float(mass.min()) if mass.numel() else None
    facts["tau_final"] = tau
    facts["tau_horizon"] = horizon
    facts["seconds"] = time.perf_counter() - start
    model.eval()
    return model, facts


def _save_checkpoint(path: Path, key: str, step: int, model, opt, batch_gen, noise_gen, facts: dict) -> None:
    """Write the run's state after ``step`` steps to ``path`` (atomically: a kill mid-write leaves
    the previous checkpoint)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    torch.save({"key": key, "step": step, "model": model.state_dict(), "opt": opt.state_dict(),
                "batch_gen": batch_gen.get_state(), "noise_gen": noise_gen.get_state(),
                "torch_rng": torch.get_rng_state(), "facts": facts}, tmp)
    os.replace(tmp, path)


def _resume(path: Path, key: str, model, opt, batch_gen, noise_gen, facts: dict) -> int:
    """Load the checkpoint at ``path`` into the run's objects (``facts`` updated in place) and
    return the step to go on from; 0 (nothing loaded) when there is none, it is unreadable, or it
    was written under another key."""
    path = Path(path)
    if not path.exists():
        return 0
    try:
        state = torch.load(path, map_location="cpu", weights_only=False)
    except Exception as err:  # a torn or foreign file: start over, say so
        print(f"dias: ignoring unreadable checkpoint {path} ({err})", file=sys.stderr)
        return 0
    if state.get("key") != key:
        return 0
    model.load_state_dict(state["model"])
    opt.load_state_dict(state["opt"])
    batch_gen.set_state(state["batch_gen"])
    noise_gen.set_state(state["noise_gen"])
    torch.set_rng_state(state["torch_rng"])
    facts.clear()
    facts.update(state["facts"])
    print(f"dias: resumed {path} at step {state['step']}", file=sys.stderr)
    return int(state["step"])


__all__ = ["CHECKPOINT_EVERY", "DiasConfig", "PCGRAD", "TransitionData", "pcgrad", "tau_schedule", "train",
           "validation_loss"]
