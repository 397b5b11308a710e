"""LSTM transition model of the state-centric paper (G.2 "LSTM Architecture and Training", Table 6).

Goal-conditioned recurrent model ``f(phi(s_t), phi(g), h_t) -> v_t``; the data, modes, input
normalisation, failures and saved layout are those of :mod:`planarena.methods.state_centric.models`
(saved payload: ``weights.pt``, the network's ``state_dict``).
"""

from __future__ import annotations

import math
import os
import time
from pathlib import Path
from typing import Any, ClassVar, Mapping, Sequence

import numpy as np

from planarena.config import ConfigError
from planarena.core.cost import CostProjection
from planarena.methods.state_centric.models import (
    DivergedError,
    Trajectory,
    TransitionModel,
)


def lstm_parameter_count(dim: int, hidden: int = 256, embed: int = 32, layers: int = 2,
                         shared_encoder: bool = False, head_layernorm: bool = False) -> int:
    """Closed-form trainable-parameter count of :class:`LSTMTransitionModel` (Appendix C.2).

    encoders ``(1 or 2) * (D*E + E)`` + LSTM ``sum_l 4H (in_l + H) + 8H`` (PyTorch keeps two bias
    vectors; ``in_0 = 2E``, ``in_l = H``) + head ``H*H + H [+ 2H LayerNorm] + H*D + D``. With the
    defaults this is ``321 D + 921,920``.
    """
    enc = (1 if shared_encoder else 2) * (dim * embed + embed)
    rnn = sum(4 * hidden * ((2 * embed if i == 0 else hidden) + hidden) + 8 * hidden for i in range(layers))
    head = hidden * hidden + hidden + (2 * hidden if head_layernorm else 0) + hidden * dim + dim
    return enc + rnn + head


class LSTMTransitionModel(TransitionModel):
    """Goal-conditioned recurrent transition model (G.2 "LSTM Architecture and Training", Table 6).

    Architecture: state encoder ``Linear(D, embed)`` and goal encoder ``Linear(D, embed)`` (C.2
    "dual linear encoders"; ``shared_encoder: true`` uses one, as the released code does), each
    followed by ``encoder_activation`` (``relu`` as in the released code, or ``none``); the two
    ``embed``-vectors are concatenated (64) and fed to an ``nn.LSTM(2*embed, hidden, layers)``; the
    head is ``Linear(hidden, hidden) [-> LayerNorm] -> ReLU -> Linear(hidden, D)``
    (``head_layernorm`` as in the released state-mode code; default off). The goal is repeated at
    every step (G.2 "Dataset Construction for LSTM").

    Loss: state mode ``CosineEmbeddingLoss`` with target +1 (= mean over real steps of
    ``1 - cos(pred, phi(s_{t+1}))``); delta mode MSE over all components of real steps. Padded
    steps are masked out. Validation loss is the same quantity averaged over every validation step.

    Training: Adam (``lr`` 1e-2), batches of ``batch_size`` (32) trajectories padded to the longest,
    shuffled per epoch with a generator seeded by ``seed``; at most ``max_epochs`` (250) epochs;
    early stopping when the validation loss has not improved by more than ``min_delta`` for
    ``patience`` (25) epochs; the best-validation weights are kept. Optional ``grad_clip`` (max
    gradient norm; default off, the paper has none). ``n_threads`` sets torch's CPU threads during
    fit (default: leave as is). ``time_budget_s`` (default off) ends training after the first epoch
    that finishes past that many CPU seconds of this process (facts ``stopped_by_budget``), still keeping the best
    weights - for CPU-bound smoke runs and benchmarks, not part of the paper's protocol.

    Determinism: weights are initialised from ``torch.manual_seed(seed)`` inside a forked RNG (the
    caller's global torch RNG is untouched) and ``torch.use_deterministic_algorithms(True)`` is on
    during fit; on CPU with the same thread count the same seed gives bit-identical weights.

    Recurrent state: a tuple ``(h, c)`` of float32 tensors ``(layers, B, hidden)``; carry it along
    a decoded trajectory via :meth:`step` and pick beams with :meth:`select`.
    """

    kind = "lstm"
    DEFAULTS: ClassVar[dict[str, Any]] = {
        "hidden": 256, "embed": 32, "layers": 2, "lr": 1e-2, "batch_size": 32, "max_epochs": 250,
        "patience": 25, "min_delta": 0.0, "normalise": "none", "shared_encoder": False,
        "encoder_activation": "relu", "head_layernorm": False, "grad_clip": None, "n_threads": None,
        "time_budget_s": None,
    }

    def __init__(self, mode: str | None = None, dim: int | None = None,
                 params: Mapping[str, Any] | None = None, **overrides: Any):
        super().__init__(mode, dim, params, **overrides)
        self.net = None

    def _check_params(self, p: dict) -> None:
        for key in ("hidden", "embed", "layers", "batch_size", "max_epochs"):
            if not isinstance(p[key], int) or p[key] < 1:
                raise ConfigError(f"LSTMTransitionModel: {key}={p[key]!r}; expected an integer >= 1")
        if not isinstance(p["patience"], int) or p["patience"] < 1:
            raise ConfigError(f"LSTMTransitionModel: patience={p['patience']!r}; expected an integer >= 1")
        if not (isinstance(p["lr"], (int, float)) and p["lr"] > 0):
            raise ConfigError(f"LSTMTransitionModel: lr={p['lr']!r}; expected a positive number")
        if p["encoder_activation"] not in ("relu", "none"):
            raise ConfigError(f"LSTMTransitionModel: encoder_activation={p['encoder_activation']!r}; expected relu|none")

    @property
    def fitted(self) -> bool:
        return self.net is not None

    # -- network ---------------------------------------------------------------------------------
    def build(self, dim: int | None = None, seed: int = 0) -> "LSTMTransitionModel":
        """Create freshly initialised weights for dimension ``dim`` (default: ``self.dim``).

        Seeded with ``seed`` in a forked torch RNG. Called by :meth:`fit`; call it directly to
        inspect :meth:`parameter_count` without training. Returns ``self``.
        """
        import torch

        if dim is not None:
            self._check_dim(dim, "build")
        if self.dim is None:
            raise ValueError("LSTMTransitionModel.build: dimension unknown (pass dim)")
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(int(seed))
            self.net = _make_lstm_net(self.dim, self.params)
        self.net.eval()
        return self

    def parameter_count(self) -> int:
        """Trainable parameters of the built network (equals :func:`lstm_parameter_count`)."""
        self._require_fitted()
        return int(sum(p.numel() for p in self.net.parameters() if p.requires_grad))

    # -- training --------------------------------------------------------------------------------
    def fit(self, train: Sequence[Trajectory], val: Sequence[Trajectory] | None = None,
            seed: int = 0, device: str = "cpu") -> dict:
        """Train (see the class docstring) on torch ``device`` (``cpu`` or ``cuda[:N]``, already
        resolved, see :func:`planarena.config.torch_device`); the trained weights come back to the
        CPU, where :meth:`step` decodes in float64. On the CPU the weights do not depend on the
        device argument; on a GPU they are deterministic per GPU model (cuDNN's deterministic LSTM
        kernels) but not bit-identical to the CPU's. Returns the training facts::

            model, mode, dim, seed, epochs_run, best_epoch (1-based), best_val_loss,
            val_loss_kind (cosine_embedding | mse), final_train_loss, stopped_early,
            stopped_by_budget, early_stopping_on (validation | train), train_time_s, parameters,
            train_trajectories, train_transitions, val_transitions, normalise

        Raises:
            DivergedError: a training batch or validation loss is NaN/inf (also for NaN/inf data).
            ValueError: malformed trajectories, mismatched dimensions, or no training transitions.
        """
        import torch

        start = time.perf_counter()
        tr = self._prepare(train, "train")
        va = self._prepare(val, "val")
        if not tr:
            raise ValueError("LSTMTransitionModel.fit: no training transitions (every trajectory has < 2 states)")
        on = "validation" if va else "train"
        if not va:
            va = tr
        p = self.params
        prev_threads = torch.get_num_threads()
        prev_det = torch.are_deterministic_algorithms_enabled()
        try:
            if p["n_threads"]:
                torch.set_num_threads(int(p["n_threads"]))
            torch.use_deterministic_algorithms(True)
            if device != "cpu":  # deterministic cuBLAS needs a fixed workspace (CUDA docs)
                os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
            with torch.random.fork_rng(devices=[]):
                torch.manual_seed(int(seed))
                net = _make_lstm_net(self.dim, p).to(device)
                facts = self._train_loop(net, tr, va, int(seed), device)
            net.to("cpu")
        finally:
            torch.use_deterministic_algorithms(prev_det)
            torch.set_num_threads(prev_threads)
        net.eval()
        self.net = net
        facts.update(
            model=self.kind, mode=self.mode, dim=self.dim, seed=int(seed), early_stopping_on=on,
            parameters=self.parameter_count(), train_trajectories=len(tr),
            train_transitions=int(sum(len(x) for x, _, _ in tr)),
            val_transitions=int(sum(len(x) for x, _, _ in va)) if on == "validation" else 0,
            normalise=p["normalise"], train_time_s=round(time.perf_counter() - start, 3),
        )
        self.facts = facts
        return dict(facts)

    def _train_loop(self, net, tr, va, seed: int, device: str = "cpu") -> dict:
        import torch

        p = self.params
        opt = torch.optim.Adam(net.parameters(), lr=float(p["lr"]))
        rng = np.random.default_rng(seed)
        bs = int(p["batch_size"])
        val_batches = [_pad(va[i:i + bs], device) for i in range(0, len(va), bs)]
        best, best_state, best_epoch, bad = math.inf, None, 0, 0
        train_loss = math.nan
        epoch = 0
        budget = float(p["time_budget_s"]) if p["time_budget_s"] else math.inf
        steps_per_epoch = sum(len(x) for x, _, _ in tr)  # tr: [(x (T_i, D), g (D,), y (T_i, D))]
        projection = CostProjection(
            f"lstm {self.mode} seed {seed}",
            f"{len(tr):,} trajectories ({steps_per_epoch:,} steps) x {self.dim:,} features, batch {bs}",
            int(p["max_epochs"]), "epoch", p["time_budget_s"], "transition_models.lstm.time_budget_s")
        t0, by_budget = time.process_time(), False  # CPU seconds: machine load decides no outcome
        for epoch in range(1, int(p["max_epochs"]) + 1):
            net.train()
            order = rng.permutation(len(tr))
            total, steps = 0.0, 0
            for b, i in enumerate(range(0, len(order), bs)):
                x, g, y, mask = _pad([tr[j] for j in order[i:i + bs]], device)
                pred, _ = net(x, g)
                loss, n = self._loss(pred, y, mask)
                lv = float(loss.detach())
                if not math.isfinite(lv):
                    raise DivergedError(f"LSTM training loss is {lv} at epoch {epoch} batch {b + 1}",
                                        where=f"epoch {epoch} batch {b + 1}", loss=lv)
                opt.zero_grad(set_to_none=True)
                loss.backward()
                if p["grad_clip"]:
                    torch.nn.utils.clip_grad_norm_(net.parameters(), float(p["grad_clip"]))
                opt.step()
                total += lv * n
                steps += n
            train_loss = total / max(steps, 1)
            val_loss = self._evaluate(net, val_batches)
            projection.unit_done()
            if not math.isfinite(val_loss):
                raise DivergedError(f"LSTM validation loss is {val_loss} at epoch {epoch}",
                                    where=f"epoch {epoch} validation", loss=val_loss)
            if val_loss < best - float(p["min_delta"]):
                best, best_epoch, bad = val_loss, epoch, 0
                best_state = {k: v.detach().clone() for k, v in net.state_dict().items()}
            else:
                bad += 1
                if bad >= int(p["patience"]):
                    break
            if time.process_time() - t0 > budget and epoch < int(p["max_epochs"]):
                by_budget = True
                break
        net.load_state_dict(best_state)
        return {"epochs_run": epoch, "best_epoch": best_epoch, "best_val_loss": float(best),
                "val_loss_kind": "cosine_embedding" if self.mode == "state" else "mse",
                "final_train_loss": float(train_loss), "stopped_by_budget": by_budget,
                "stopped_early": epoch < int(p["max_epochs"]) and not by_budget}

    def _loss(self, pred, y, mask):
        """(mean loss over real steps, weight) - weight = steps (state) or step components (delta)."""
        import torch
        import torch.nn.functional as F

        pa, ya = pred[mask], y[mask]
        if self.mode == "state":
            ones = torch.ones(pa.shape[0], dtype=pa.dtype, device=pa.device)
            return F.cosine_embedding_loss(pa, ya, ones), pa.shape[0]
        return F.mse_loss(pa, ya), pa.numel()

    def _evaluate(self, net, batches) -> float:
        import torch

        net.eval()
        total, n = 0.0, 0
        with torch.no_grad():
            for x, g, y, mask in batches:
                pred, _ = net(x, g)
                loss, w = self._loss(pred, y, mask)
                total += float(loss) * w
                n += w
        return total / max(n, 1)

    # -- inference -------------------------------------------------------------------------------
    def _step_net(self):
        """The network :meth:`step` runs: a float64 copy of the trained float32 weights, made once.

        Why float64: torch's CPU matrix products round differently for different batch sizes,
        so in float32 a beam's target would depend on how many other beams (of other problems,
        under lockstep decoding) share the call, and exact ties between candidates of different
        beams would be broken by that rounding. In float64 those differences (~1e-16) vanish when
        the output is rounded to float32: a problem decodes the same alone or in any batch
        (``tests/test_state_centric.py::test_lockstep_decoding_is_one_problem_at_a_time``).
        """
        import copy

        cached = getattr(self, "_net64", None)
        if cached is None or cached[0] is not self.net:
            cached = self._net64 = (self.net, copy.deepcopy(self.net).double().eval())
        return cached[1]

    def initial_state(self, batch_size: int):
        """Zero ``(h, c)``, each ``(layers, batch_size, hidden)`` float64 (what training starts
        from; :meth:`step` computes in float64, see :meth:`_step_net`)."""
        import torch

        shape = (int(self.params["layers"]), int(batch_size), int(self.params["hidden"]))
        return (torch.zeros(shape, dtype=torch.float64), torch.zeros(shape, dtype=torch.float64))

    def select(self, rec_state, indices):
        """``(h, c)`` restricted/reordered to batch positions ``indices`` (``index_select`` on dim 1)."""
        import torch

        idx = torch.as_tensor(np.asarray(indices, dtype=np.int64))
        h, c = rec_state
        return (h.index_select(1, idx), c.index_select(1, idx))

    def step(self, phi_s, phi_g, rec_state=None):
        """See :meth:`TransitionModel.step`; ``rec_state=None`` means :meth:`initial_state`.

        Raises ``ValueError`` when shapes disagree (also a recurrent state of another batch size).
        """
        import torch

        phi_s, x, g = self._inputs(phi_s, phi_g)
        if rec_state is None:
            rec_state = self.initial_state(len(phi_s))
        if rec_state[0].shape[1] != len(phi_s):
            raise ValueError(f"recurrent state is for batch {rec_state[0].shape[1]}, phi_s has {len(phi_s)} rows")
        net = self._step_net()
        rec_state = tuple(t.double() for t in rec_state)
        with torch.no_grad():
            pred, new = net(torch.tensor(x, dtype=torch.float64)[:, None, :],
                            torch.tensor(g, dtype=torch.float64), rec_state)
        return self._targets(phi_s, pred[:, 0, :].numpy()), new

    def predict_teacher_forced(self, states, goal, include_last: bool = False):
        """See :meth:`TransitionModel.predict_teacher_forced` (one LSTM pass from a zero state)."""
        import torch

        src, goal = self._teacher_forced_inputs(states, goal, include_last)
        if len(src) == 0:
            return np.zeros((0, self.dim), dtype=np.float32)
        x = torch.tensor(self.transform(src))[None]
        g = torch.tensor(self.transform(goal))[None]
        with torch.no_grad():
            pred, _ = self.net(x, g)
        return self._targets(src, pred[0].numpy())

    # -- persistence -----------------------------------------------------------------------------
    def _save_payload(self, directory: Path) -> None:
        import torch

        torch.save(self.net.state_dict(), directory / "weights.pt")

    def _load_payload(self, directory: Path) -> None:
        import torch

        self.net = _make_lstm_net(self.dim, self.params)
        self.net.load_state_dict(torch.load(directory / "weights.pt", weights_only=True))
        self.net.eval()


def _make_lstm_net(dim: int, p: Mapping[str, Any]):
    import torch
    from torch import nn

    class _Net(nn.Module):
        def __init__(self):
            super().__init__()
            e, h = int(p["embed"]), int(p["hidden"])
            self.state_encoder = nn.Linear(dim, e)
            self.goal_encoder = None if p["shared_encoder"] else nn.Linear(dim, e)
            self.act = p["encoder_activation"] == "relu"
            self.lstm = nn.LSTM(2 * e, h, num_layers=int(p["layers"]), batch_first=True)
            mid = [nn.LayerNorm(h)] if p["head_layernorm"] else []
            self.head = nn.Sequential(nn.Linear(h, h), *mid, nn.ReLU(), nn.Linear(h, dim))

        def forward(self, states, goals, hx=None):
            """``states`` (B, T, D), ``goals`` (B, D) -> (pred (B, T, D), (h, c))."""
            zs = self.state_encoder(states)
            zg = (self.goal_encoder or self.state_encoder)(goals)
            if self.act:
                zs, zg = torch.relu(zs), torch.relu(zg)
            z = torch.cat([zs, zg[:, None, :].expand(-1, zs.shape[1], -1)], dim=-1)
            out, hx = self.lstm(z, hx)
            return self.head(out), hx

    return _Net()


def _pad(batch, device: str = "cpu"):
    """Pad ``[(x (T_i, D), g (D,), y (T_i, D))]`` to tensors ``x, y (B, Tmax, D)``, ``g (B, D)``,
    mask ``(B, Tmax)``, on torch ``device``."""
    import torch

    b = len(batch)
    tmax = max(len(x) for x, _, _ in batch)
    d = batch[0][0].shape[1]
    x = np.zeros((b, tmax, d), dtype=np.float32)
    y = np.zeros((b, tmax, d), dtype=np.float32)
    mask = np.zeros((b, tmax), dtype=bool)
    for i, (xi, _, yi) in enumerate(batch):
        x[i, :len(xi)] = xi
        y[i, :len(yi)] = yi
        mask[i, :len(xi)] = True
    g = np.stack([gi for _, gi, _ in batch]).astype(np.float32)
    return tuple(torch.from_numpy(a).to(device) for a in (x, g, y, mask))


__all__ = ["LSTMTransitionModel", "lstm_parameter_count"]
