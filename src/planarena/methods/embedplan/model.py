"""EmbedPlan: transition models in a frozen sentence-embedding space (model, losses, training).

Source: "Textual Planning with Explicit Latent Transitions" (docs/papers/embedplan.md), Section 3
and Appendix B.

* Frozen encoder embeddings ``e(s)``, ``e(a)`` (``d`` = encoder width, e.g. 384 for MiniLM) are the
  inputs; they are computed once by the ``embed_acp`` stage and never fine-tuned (B.1.1).
* Separate projection heads ``P_s``, ``P_a``: MLPs ``d -> h -> ... -> 128`` with GELU and
  LayerNorm after each hidden layer (B.1.2, Eq. 26).
* Transition network (B.1.3): the residual MLP ``z' = z_s + FFN([z_s; z_a])`` (Eq. 27-28, the
  primary architecture) or the FiLM hypernetwork, which maps ``z_a`` to per-layer scale and shift
  vectors of an MLP over ``z_s`` (Eq. 29, Perez et al. FiLM) and also adds the residual ``z_s``.
  ``build_model(..., skip=False)`` drops that identity term (``z' = FFN([z_s; z_a])``), with the same
  parameters: only the untrained ``noskip`` floor uses it (see :func:`build_model`).
* Loss (Eq. 3, B.2.2): ``L = L_state + lambda * L_action``. ``L_state`` is InfoNCE over the batch
  (Eq. 31): the prediction for transition i must be closer (cosine / temperature) to ``P_s(e(s'_i))``
  than to the other next states of the batch. ``L_action`` (Eq. 32): for up to ``K`` applicable ground
  actions of ``s_i`` (the true one always among them), the prediction made with the true action must
  be the closest to ``P_s(e(s'_i))``.
* AdamW (weight decay 1e-2), linear warm-up then constant learning rate, early stopping on the
  validation loss with a patience (Table 6). The best-validation weights are kept.

The paper's text lost several constants in extraction (hidden widths of Eq. 28, the chosen
``lambda``); the defaults below are Table 6 values that give "about 500K trainable parameters"
(B.1.3) with a 384-d encoder (hidden 256, 2 layers, projection heads 128 wide with 4 hidden layers:
394K for the MLP, 573K for the hypernetwork), and ``lambda = 2`` ("we set lambda to emphasize action
disambiguation"; G.2 says performance degrades at 4). Both are params.
"""

from __future__ import annotations

import copy
import math
import time
from dataclasses import asdict, dataclass, field
from typing import Callable

import numpy as np

from planarena.protocols.pool import HitResult, TransitionTable, pool_ranks

ARCHS = ("mlp", "hyper", "identity")


@dataclass
class EmbedPlanConfig:
    """Hyperparameters (EmbedPlan Table 6; defaults = the values this harness uses by default).

    Attributes:
        arch: ``mlp`` (residual MLP, Eq. 27), ``hyper`` (FiLM hypernetwork, Eq. 29), or
            ``identity``: the floor z' = z_s in the frozen encoder's space (no parameters).
        proj_dim: width of the latent space (128 in the paper).
        proj_hidden: hidden width of the projection heads.
        proj_layers: hidden layers of each projection head (2 or 4 in Table 6; B.1.2 says 4).
        hidden: hidden width of the transition network (128 or 256).
        layers: hidden layers of the transition network (2 or 4).
        dropout: dropout after each hidden layer (0.0 or 0.5).
        action_weight: ``lambda`` of Eq. 3 (0 disables the action-disambiguation loss).
        max_actions: ``K``, applicable ground actions per state in ``L_action`` (sampled when more).
        temperature: InfoNCE temperature ``tau`` (0.07).
        lr, weight_decay, batch_size: AdamW settings (Table 6).
        max_epochs, warmup_epochs, patience: training length, linear warm-up, early stopping.
        val_fraction: fraction of the training transitions held out for early stopping.
        time_budget_s: CPU-time limit of one training run, in CPU seconds of this process (None:
            none; CPU time, so that machine load decides no outcome); reaching it stops
            training with the best weights so far and is recorded (``stopped: time_budget``).
    """

    arch: str = "mlp"
    proj_dim: int = 128
    proj_hidden: int = 128
    proj_layers: int = 4
    hidden: int = 256
    layers: int = 2
    dropout: float = 0.0
    action_weight: float = 2.0
    max_actions: int = 16
    temperature: float = 0.07
    lr: float = 1e-3
    weight_decay: float = 1e-2
    batch_size: int = 128
    max_epochs: int = 400
    warmup_epochs: int = 10
    patience: int = 100
    val_fraction: float = 0.1
    time_budget_s: float | None = None

    @classmethod
    def from_dict(cls, d: dict | None) -> "EmbedPlanConfig":
        """Build from a params dict; unknown keys raise ``ValueError`` naming them."""
        d = dict(d or {})
        unknown = sorted(set(d) - set(cls.__dataclass_fields__))
        if unknown:
            raise ValueError(f"unknown EmbedPlan hyperparameters {unknown}; known: {sorted(cls.__dataclass_fields__)}")
        cfg = cls(**d)
        if cfg.arch not in ARCHS:
            raise ValueError(f"EmbedPlan arch {cfg.arch!r} is not one of {ARCHS}")
        return cfg


def _torch():
    import torch

    return torch


def build_model(cfg: EmbedPlanConfig, state_dim: int, action_dim: int, skip: bool = True):
    """The EmbedPlan network (projection heads + transition network) as a ``torch.nn.Module``.

    Args:
        cfg: hyperparameters.
        state_dim, action_dim: encoder widths of state and action embeddings.
        skip: keep the identity skip ``z_s`` of the transition network (B.1.3, Eq. 27: "a residual
            MLP that concatenates inputs and adds a skip connection", Section 3). ``False`` predicts
            ``FFN([z_s; z_a])`` alone (for the hypernetwork ``W_out h_L``), with the *same*
            parameters drawn in the same order, so for one seed the two predictions differ by
            exactly ``z_s``. At random weights the skip makes the network a noisy identity
            predictor (the current state's own latent; a successor differs from it by one action's
            effects), which ranks far above chance in the candidate pools; without it the untrained
            network sits near the chance level that Appendix D.6 reports for its untrained baseline
            (3.9 % Hit@5 = 5/128). Ignored by ``arch: identity``.

    Returns:
        a module with ``project_state(e_s) -> (B, proj_dim)``, ``project_action(e_a)`` and
        ``transition(z_s, z_a) -> (B, proj_dim)`` (the predicted next-state latent, unnormalised).
    """
    torch = _torch()
    nn = torch.nn

    if cfg.arch == "identity":
        class IdentityNet(nn.Module):
            """The identity floor: latents are the encoder's embeddings, the predicted successor is
            the state itself (z' = z_s), the action is ignored (so Acc@k is chance)."""

            def project_state(self, e):
                return e

            def project_action(self, e):
                return e

            def transition(self, zs, za):
                return zs

        return IdentityNet()

    def mlp(d_in: int, hidden: int, n_hidden: int, d_out: int, dropout: float) -> nn.Sequential:
        mods: list = []
        width = d_in
        for _ in range(n_hidden):
            mods += [nn.Linear(width, hidden), nn.GELU(), nn.LayerNorm(hidden)]
            if dropout > 0:
                mods.append(nn.Dropout(dropout))
            width = hidden
        mods.append(nn.Linear(width, d_out))
        return nn.Sequential(*mods)

    class ResidualMLP(nn.Module):
        """``z' = z_s + FFN([z_s; z_a])`` (Eq. 27-28); ``FFN([z_s; z_a])`` alone when ``skip`` is off."""

        def __init__(self):
            super().__init__()
            self.skip = skip
            self.ffn = mlp(2 * cfg.proj_dim, cfg.hidden, cfg.layers, cfg.proj_dim, cfg.dropout)

        def forward(self, zs, za):
            update = self.ffn(torch.cat([zs, za], dim=-1))
            return zs + update if self.skip else update

    class FiLMHyper(nn.Module):
        """Hypernetwork: ``[gamma_l, beta_l]_l = H(z_a)``; ``h_l = (1 + gamma_l) * GELU(LN(W_l h_{l-1}))
        + beta_l``; ``z' = z_s + W_out h_L`` (Eq. 29, FiLM conditioning); ``W_out h_L`` alone when
        ``skip`` is off."""

        def __init__(self):
            super().__init__()
            self.skip = skip
            self.inp = nn.Linear(cfg.proj_dim, cfg.hidden)
            self.hidden_layers = nn.ModuleList(nn.Linear(cfg.hidden, cfg.hidden) for _ in range(cfg.layers))
            self.norms = nn.ModuleList(nn.LayerNorm(cfg.hidden) for _ in range(cfg.layers))
            self.hyper = mlp(cfg.proj_dim, cfg.proj_dim, 1, 2 * cfg.layers * cfg.hidden, 0.0)
            self.out = nn.Linear(cfg.hidden, cfg.proj_dim)
            self.drop = nn.Dropout(cfg.dropout) if cfg.dropout > 0 else nn.Identity()

        def forward(self, zs, za):
            film = self.hyper(za).view(*za.shape[:-1], cfg.layers, 2, cfg.hidden)
            h = self.inp(zs)
            for i, (lin, norm) in enumerate(zip(self.hidden_layers, self.norms)):
                h = (1 + film[..., i, 0, :]) * nn.functional.gelu(norm(lin(h))) + film[..., i, 1, :]
                h = self.drop(h)
            update = self.out(h)
            return zs + update if self.skip else update

    class EmbedPlanNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.state_head = mlp(state_dim, cfg.proj_hidden, cfg.proj_layers, cfg.proj_dim, cfg.dropout)
            self.action_head = mlp(action_dim, cfg.proj_hidden, cfg.proj_layers, cfg.proj_dim, cfg.dropout)
            self.trans = ResidualMLP() if cfg.arch == "mlp" else FiLMHyper()

        def project_state(self, e):
            return self.state_head(e)

        def project_action(self, e):
            return self.action_head(e)

        def transition(self, zs, za):
            return self.trans(zs, za)

    return EmbedPlanNet()


def count_parameters(model) -> int:
    """Trainable parameters of a module."""
    return int(sum(p.numel() for p in model.parameters() if p.requires_grad))


# --------------------------------------------------------------------------------------------
# Training data: transitions as index arrays into state / action embedding tables
# --------------------------------------------------------------------------------------------


def _sample_action_sets(table: TransitionTable, rows: np.ndarray, k: int, rng: np.random.Generator
                        ) -> tuple[np.ndarray, np.ndarray]:
    """For each transition row: the true action at column 0 and up to ``k - 1`` other applicable
    ground actions of the same state (uniform without replacement). Returns ``(actions, mask)``,
    both ``(len(rows), k)``; padded columns have mask False (action row 0, ignored)."""
    out = np.zeros((len(rows), k), dtype=np.int64)
    mask = np.zeros((len(rows), k), dtype=bool)
    for j, i in enumerate(rows):
        app = table.applicable(int(i))
        others = app[app != table.a[i]]
        if len(others) > k - 1:
            others = rng.choice(others, size=k - 1, replace=False)
        out[j, 0] = table.a[i]
        out[j, 1:1 + len(others)] = others
        mask[j, :1 + len(others)] = True
    return out, mask


def losses(model, table: TransitionTable, rows: np.ndarray, cfg: EmbedPlanConfig,
           rng: np.random.Generator, state_t, action_t):
    """``(L_state, L_action)`` of one batch (Eq. 31 and 32).

    Args:
        rows: transition rows of the batch, ``(B,)``.
        state_t, action_t: the embedding tables as torch tensors (same rows as ``table``), on
            the model's device (the batch's indices follow them).
    """
    torch = _torch()
    F = torch.nn.functional
    dev = state_t.device

    def idx(a):
        return torch.as_tensor(a, device=dev)

    zs = model.project_state(state_t[idx(table.s[rows])])
    za = model.project_action(action_t[idx(table.a[rows])])
    target = F.normalize(model.project_state(state_t[idx(table.s2[rows])]), dim=-1)
    pred = F.normalize(model.transition(zs, za), dim=-1)
    logits = pred @ target.T / cfg.temperature
    l_state = F.cross_entropy(logits, torch.arange(len(rows), device=dev))
    if cfg.action_weight <= 0:
        return l_state, torch.zeros((), device=dev)
    acts, mask = _sample_action_sets(table, rows, cfg.max_actions, rng)
    mask_t = idx(mask)
    # project each distinct ground action of the batch once (actions repeat across a problem's states)
    uniq, inverse = np.unique(acts, return_inverse=True)
    za_uniq = model.project_action(action_t[idx(uniq)])
    za_all = za_uniq[idx(inverse.reshape(-1))].view(len(rows), cfg.max_actions, -1)
    zs_rep = zs.unsqueeze(1).expand(-1, cfg.max_actions, -1)
    preds = F.normalize(model.transition(zs_rep, za_all), dim=-1)
    alog = (preds * target.unsqueeze(1)).sum(-1) / cfg.temperature
    alog = alog.masked_fill(~mask_t, float("-inf"))
    l_action = F.cross_entropy(alog, torch.zeros(len(rows), dtype=torch.long, device=dev))
    return l_state, l_action


@dataclass
class TrainResult:
    """Outcome of :func:`train`: facts for ``train.json`` and the result records."""

    status: str  # ok | diverged
    epochs: int
    best_epoch: int
    best_val_loss: float | None
    train_time_s: float
    parameters: int
    stopped: str  # early_stopping | max_epochs | time_budget | diverged
    history: list[dict] = field(default_factory=list)

    def to_dict(self) -> dict:
        return asdict(self)


def train(model, table: TransitionTable, train_rows: np.ndarray, cfg: EmbedPlanConfig, seed: int,
          progress: Callable[[int, float], None] | None = None, device: str = "cpu") -> TrainResult:
    """Train ``model`` in place on ``train_rows`` of ``table`` (EmbedPlan B.2).

    ``cfg.val_fraction`` of the rows (seeded) is held out for early stopping on ``L_state +
    lambda L_action``; the weights of the best validation epoch are restored at the end. A
    non-finite loss stops training with ``status = "diverged"`` (the caller records it; the
    model keeps its best weights so far).

    Args:
        train_rows: ``(T_train,)`` transition rows; at least 2.
        seed: seeds torch and the numpy generator (batch order, action sampling, hold-out).
        device: torch device of training (``cpu`` or ``cuda[:N]``, resolved; see
            :func:`planarena.config.torch_device`). The model and the embedding tables move there
            for training and the model comes back to the CPU (evaluation runs on the CPU). On a
            GPU the weights differ from the CPU's in the last bits.

    Raises:
        ValueError: fewer than 2 training transitions.
    """
    torch = _torch()
    if len(train_rows) < 2:
        raise ValueError(f"EmbedPlan needs at least 2 training transitions, got {len(train_rows)}")
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    rows = rng.permutation(np.asarray(train_rows, dtype=np.int64))
    n_val = int(round(len(rows) * cfg.val_fraction)) if len(rows) >= 10 else 0
    val_rows, fit_rows = rows[:n_val], rows[n_val:]
    model.to(device)
    state_t = torch.as_tensor(table.state_emb, dtype=torch.float32).to(device)
    action_t = torch.as_tensor(table.action_emb, dtype=torch.float32).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    steps_per_epoch = max(1, math.ceil(len(fit_rows) / cfg.batch_size))
    warmup_steps = cfg.warmup_epochs * steps_per_epoch
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda step: min(1.0, (step + 1) / warmup_steps) if warmup_steps > 0 else 1.0)
    best, best_epoch, best_state, bad = math.inf, -1, None, 0
    history: list[dict] = []
    start, cpu_start = time.perf_counter(), time.process_time()
    stopped, status, epoch = "max_epochs", "ok", 0
    eval_rng = np.random.default_rng(seed + 1)
    for epoch in range(1, cfg.max_epochs + 1):
        model.train()
        perm = rng.permutation(fit_rows)
        total = 0.0
        for b in range(0, len(perm), cfg.batch_size):
            batch = perm[b:b + cfg.batch_size]
            if len(batch) < 2:
                continue
            ls, la = losses(model, table, batch, cfg, rng, state_t, action_t)
            loss = ls + cfg.action_weight * la
            if not torch.isfinite(loss):
                status, stopped = "diverged", "diverged"
                break
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            total += float(loss.detach()) * len(batch)
        if status == "diverged":
            break
        train_loss = total / max(1, len(perm))
        if len(val_rows) >= 2:
            model.eval()
            with torch.no_grad():
                vl = []
                for b in range(0, len(val_rows), cfg.batch_size):
                    batch = val_rows[b:b + cfg.batch_size]
                    if len(batch) < 2:
                        continue
                    ls, la = losses(model, table, batch, cfg, eval_rng, state_t, action_t)
                    vl.append(float(ls + cfg.action_weight * la) * len(batch))
                val_loss = sum(vl) / max(1, sum(len(val_rows[b:b + cfg.batch_size]) for b in range(0, len(val_rows), cfg.batch_size)))
            eval_rng = np.random.default_rng(seed + 1)  # same action samples every epoch
        else:
            val_loss = train_loss
        history.append({"epoch": epoch, "train_loss": round(train_loss, 5), "val_loss": round(val_loss, 5)})
        if progress:
            progress(epoch, val_loss)
        if not math.isfinite(val_loss):
            status, stopped = "diverged", "diverged"
            break
        if val_loss < best - 1e-6:
            best, best_epoch, bad = val_loss, epoch, 0
            best_state = copy.deepcopy(model.state_dict())
        else:
            bad += 1
            if epoch > cfg.warmup_epochs and bad >= cfg.patience:
                stopped = "early_stopping"
                break
        if cfg.time_budget_s is not None and time.process_time() - cpu_start > cfg.time_budget_s:
            stopped = "time_budget"
            break
    if best_state is not None:
        model.load_state_dict(best_state)
    model.to("cpu")
    model.eval()
    return TrainResult(
        status=status, epochs=epoch, best_epoch=best_epoch,
        best_val_loss=None if not math.isfinite(best) else round(best, 5),
        train_time_s=round(time.perf_counter() - start, 3), parameters=count_parameters(model),
        stopped=stopped, history=history,
    )


# --------------------------------------------------------------------------------------------
# Evaluation (Appendix B.3): pool-128 Hit@k, action disambiguation Acc@k, plan-level Hit@5
# --------------------------------------------------------------------------------------------


def project_states(model, table: TransitionTable, batch: int = 8192) -> np.ndarray:
    """``P_s(e(s))`` normalised, for every state row: ``(N_states, proj_dim)`` float32."""
    torch = _torch()
    F = torch.nn.functional
    out = []
    with torch.no_grad():
        emb = torch.as_tensor(table.state_emb, dtype=torch.float32)
        for b in range(0, emb.shape[0], batch):
            out.append(F.normalize(model.project_state(emb[b:b + batch]), dim=-1).numpy())
    return np.concatenate(out) if out else np.zeros((0, 0), np.float32)


def predict(model, table: TransitionTable, s_rows: np.ndarray, a_rows: np.ndarray,
            batch: int = 8192) -> np.ndarray:
    """Predicted next-state latents (unit norm) for state rows ``s_rows`` with action rows
    ``a_rows`` (same length): ``(Q, proj_dim)`` float32. One batched forward pass per ``batch``."""
    torch = _torch()
    F = torch.nn.functional
    out = []
    with torch.no_grad():
        se = torch.as_tensor(table.state_emb, dtype=torch.float32)
        ae = torch.as_tensor(table.action_emb, dtype=torch.float32)
        for b in range(0, len(s_rows), batch):
            s = torch.as_tensor(s_rows[b:b + batch])
            a = torch.as_tensor(a_rows[b:b + batch])
            p = model.transition(model.project_state(se[s]), model.project_action(ae[a]))
            out.append(F.normalize(p, dim=-1).numpy())
    return np.concatenate(out) if out else np.zeros((0, 0), np.float32)


def evaluate_rows(model, table: TransitionTable, rows: np.ndarray, *, pool_size: int = 128,
                  distractors: str = "problem", seed: int = 0, pessimistic_ties: bool = False,
                  latents: np.ndarray | None = None, batch: int = 2048) -> HitResult:
    """Pool Hit@k and action-disambiguation ranks for transition ``rows`` (EmbedPlan B.3).

    Vectorised: per batch one ``(B, pool)`` similarity matrix via ``einsum`` over the projected
    candidate latents, and for Acc@k one forward pass over every (state, applicable action) pair of
    the batch with ranks computed by segment sums, never a Python loop over candidates.

    Args:
        rows: ``(Q,)`` transition rows to query.
        pool_size: candidates per query (128 in the paper).
        distractors: ``"domain"`` or ``"problem"`` (see :func:`sample_pools`).
        seed: seeds pool sampling and random tie-breaking.
        latents: precomputed :func:`project_states` output (reuse across protocols of one model).
    """
    rows = np.asarray(rows, dtype=np.int64)
    z = project_states(model, table) if latents is None else latents
    pred = predict(model, table, table.s[rows], table.a[rows])

    def cosine(b: slice, cand: np.ndarray) -> np.ndarray:
        return np.einsum("bd,bkd->bk", pred[b], z[cand])

    ranks, sizes, rng = pool_ranks(table, rows, cosine, pool_size=pool_size, distractors=distractors,
                                   seed=seed, pessimistic_ties=pessimistic_ties, batch=batch)
    # action disambiguation: every applicable action of s, ranked by cos(pred(s, a), z(s'))
    counts = np.diff(table.app_offsets)[rows]
    seg = np.repeat(np.arange(len(rows)), counts)
    pair_actions = np.concatenate([table.applicable(int(i)) for i in rows]) if len(rows) else np.zeros(0, np.int64)
    pair_states = table.s[rows][seg]
    pair_pred = predict(model, table, pair_states, pair_actions)
    pair_score = np.einsum("qd,qd->q", pair_pred, z[table.s2[rows]][seg])
    is_true = pair_actions == table.a[rows][seg]
    true_score = np.full(len(rows), -np.inf)
    np.maximum.at(true_score, seg[is_true], pair_score[is_true])
    greater = np.bincount(seg, weights=(pair_score > true_score[seg]), minlength=len(rows))
    ties = np.bincount(seg, weights=(pair_score == true_score[seg]) & ~is_true, minlength=len(rows))
    if pessimistic_ties:
        arank = greater + ties
    else:
        arank = greater + np.floor(rng.random(len(rows)) * (ties + 1))
    return HitResult(rank=ranks, pool=sizes, action_rank=arank.astype(np.int64), n_actions=counts)


