"""Embedding-space transition models of the state-centric paper (LSTM and XGBoost).

Paper: ``shared/papers/state-centric-transition-models.txt``, section "State-Centric Transition-Model
Learning", Appendix G.2 (dataset construction, architectures, losses), Table 6 (hyperparameters),
Appendix C.2 (model sizes). The models know nothing about PDDL or how embeddings are made: every
input is a float array of embeddings ``phi`` with a fixed dimension ``D``.

Data
----
A *trajectory* is a pair ``(states, goal)``: ``states`` is a float array ``(T+1, D)`` holding
``phi(s_0) .. phi(s_T)`` and ``goal`` a float array ``(D,)`` holding ``phi(g)``. It contributes the
``T`` transitions ``(s_t, s_{t+1})``; trajectories with fewer than two states contribute nothing.

Modes
-----
``mode="state"`` predicts ``phi(s_{t+1})``; ``mode="delta"`` predicts the residual
``Delta_t = phi(s_{t+1}) - phi(s_t)`` (paper, "State-Centric Transition-Model Learning").
Either way :meth:`TransitionModel.step` returns the decoding target ``v_t`` in the *caller's*
embedding space: ``v_t = phi(s_t) + Delta_hat`` in delta mode, ``v_t = phi_hat(s_{t+1})`` in state
mode, so the decoder compares ``v_t`` with the successor embeddings exactly as it encodes them.

Normalisation (``normalise: none | l1``)
---------------------------------------
G.1 Stage 4 calls the embedding a "normalized color histogram", E.3 defines it as raw counts. The
param ``normalise`` applies to the model's *inputs* ``phi(s_t)`` and ``phi(g)`` (in :meth:`fit`,
:meth:`step` and :meth:`predict_teacher_forced` alike): ``l1`` divides each row by the sum of its
absolute values (= its sum for a histogram; an all-zero row stays zero), ``none`` (default) leaves
counts as they are. Targets (``phi(s_{t+1})``, ``Delta_t``) and hence ``v_t`` stay in the caller's
space, so a decoder that ranks raw successor embeddings needs no change. For the reading in which
the normalised histogram *is* the embedding (inputs, targets and candidates all normalised),
normalise in the encoder with :func:`normalise_rows` and leave ``normalise: none`` here.

Failures
--------
``ValueError`` (:class:`planarena.config.ConfigError` for hyperparameters) for malformed inputs or
params; :class:`DivergedError` when training produces a non-finite loss (NaN/inf, including NaN or
inf in the data); ``RuntimeError`` when predicting with a model that was neither fitted nor loaded.

Saved layout (:meth:`TransitionModel.save`): ``meta.json`` (kind, mode, dim, params, training facts)
plus ``weights.pt`` (LSTM ``state_dict``) or ``booster.ubj`` and ``targets.npz`` (XGBoost).
:meth:`TransitionModel.load` on the base class dispatches on the saved kind.
"""

from __future__ import annotations

import abc
import json
import math
import time
from pathlib import Path
from typing import Any, ClassVar, Iterable, Mapping, Sequence

import numpy as np

from planarena.config import ConfigError

MODES = ("state", "delta")
NORMALISATIONS = ("none", "l1")
FORMAT_VERSION = 1

Trajectory = tuple[np.ndarray, np.ndarray]


class DivergedError(RuntimeError):
    """Training produced a non-finite loss (NaN or inf); the harness records outcome ``diverged``.

    Attributes: ``where`` (e.g. ``"epoch 3 batch 1"``, ``"round 12"`` or ``"data"``) and ``loss``
    (the offending value, ``nan`` when the data itself was not finite).
    """

    def __init__(self, message: str, where: str = "", loss: float = float("nan")):
        super().__init__(message)
        self.where = where
        self.loss = loss


def normalise_rows(x: np.ndarray, how: str) -> np.ndarray:
    """``x`` (..., D) as float32, each row divided by its L1 norm (``how="l1"``) or unchanged (``none``).

    Rows whose L1 norm is 0 are returned unchanged (all zeros). Non-finite values propagate.

    Raises:
        ValueError: ``how`` is not one of :data:`NORMALISATIONS`.
    """
    x = np.asarray(x, dtype=np.float32)
    if how == "none":
        return x
    if how == "l1":
        norm = np.abs(x).sum(axis=-1, keepdims=True)
        return x / np.where(norm > 0, norm, np.float32(1.0))
    raise ValueError(f"normalise={how!r}; expected one of {NORMALISATIONS}")


# ------------------------------------------------------------------------------------------------
# Base class
# ------------------------------------------------------------------------------------------------


class TransitionModel(abc.ABC):
    """Common interface: ``f(phi(s_t), phi(g)) -> v_t`` trained on trajectories.

    Construct with ``Model(mode="delta", dim=None, params=None, **overrides)``: hyperparameters are
    the class's :attr:`DEFAULTS` (Table 6), updated by ``params`` (a params.yaml block) and then by
    keyword ``overrides``; an unknown key raises :class:`ConfigError`. ``dim`` (D) is optional and
    checked against the data when given. ``mode`` may also be given as the param ``mode``.

    Subclasses implement :meth:`fit`, :meth:`step`, :meth:`predict_teacher_forced` and the storage
    hooks; :meth:`initial_state` and :meth:`select` default to a stateless model (``None``).
    """

    kind: ClassVar[str] = ""
    DEFAULTS: ClassVar[dict[str, Any]] = {}
    _KINDS: ClassVar[dict[str, type["TransitionModel"]]] = {}

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if cls.kind:
            TransitionModel._KINDS[cls.kind] = cls

    def __init__(self, mode: str | None = None, dim: int | None = None,
                 params: Mapping[str, Any] | None = None, **overrides: Any):
        merged = dict(self.DEFAULTS)
        merged["mode"] = "delta"
        for src in (params or {}, overrides):
            for key, value in src.items():
                if key not in merged:
                    raise ConfigError(
                        f"{type(self).__name__}: unknown hyperparameter {key!r}; "
                        f"known: {', '.join(sorted(merged))}")
                merged[key] = value
        if mode is not None:
            merged["mode"] = mode
        if merged["mode"] not in MODES:
            raise ConfigError(f"{type(self).__name__}: mode={merged['mode']!r}; expected one of {MODES}")
        if merged.get("normalise", "none") not in NORMALISATIONS:
            raise ConfigError(f"{type(self).__name__}: normalise={merged['normalise']!r}; "
                              f"expected one of {NORMALISATIONS}")
        self._check_params(merged)
        self.params: dict[str, Any] = merged
        self.mode: str = merged["mode"]
        self.dim: int | None = int(dim) if dim is not None else None
        self.facts: dict[str, Any] = {}

    # -- hooks for subclasses --------------------------------------------------------------------
    def _check_params(self, p: dict) -> None:
        """Raise :class:`ConfigError` for a hyperparameter value the model cannot use."""

    @property
    @abc.abstractmethod
    def fitted(self) -> bool:
        """Whether the model has been trained or loaded."""

    @abc.abstractmethod
    def fit(self, train: Sequence[Trajectory], val: Sequence[Trajectory] | None = None,
            seed: int = 0) -> dict:
        """Train on ``train``; early-stop on ``val`` (on ``train`` when ``val`` has no transitions).

        Returns training facts (see the subclass). Raises :class:`DivergedError` on a non-finite
        loss and ``ValueError`` for malformed data or no training transitions.
        """

    @abc.abstractmethod
    def step(self, phi_s: np.ndarray, phi_g: np.ndarray, rec_state: Any = None) -> tuple[np.ndarray, Any]:
        """One decoding step for a batch of B beams.

        Args:
            phi_s: ``(B, D)`` current state embeddings ``phi(s_t)`` (caller's space, un-normalised).
            phi_g: ``(B, D)`` or ``(D,)`` goal embedding(s).
            rec_state: recurrent state from :meth:`initial_state` / a previous step / :meth:`select`.

        Returns:
            ``(v_t, new_rec_state)``: ``v_t`` float32 ``(B, D)``, the target embedding to match
            against successor embeddings (``phi_s + Delta_hat`` in delta mode).
        """

    @abc.abstractmethod
    def predict_teacher_forced(self, states: np.ndarray, goal: np.ndarray,
                               include_last: bool = False) -> np.ndarray:
        """Targets ``v_t`` along a given trajectory (true states fed at every step).

        ``states`` ``(T+1, D)``, ``goal`` ``(D,)``. Returns float32 ``(T, D)`` whose row ``t`` is
        ``v_t`` after seeing ``s_0 .. s_t`` (compare with ``states[t+1]``); with ``include_last``
        ``(T+1, D)``, adding the prediction from the last state.
        """

    def initial_state(self, batch_size: int) -> Any:
        """Recurrent state before the first step of ``batch_size`` beams (``None``: stateless)."""
        return None

    def select(self, rec_state: Any, indices: Sequence[int] | np.ndarray) -> Any:
        """Recurrent state of the beams ``indices`` (positions in the batch; repeats allowed)."""
        return None

    def transform(self, phi: np.ndarray) -> np.ndarray:
        """The model's input normalisation of embeddings ``(..., D)`` (see module docstring)."""
        return normalise_rows(phi, self.params.get("normalise", "none"))

    # -- persistence -----------------------------------------------------------------------------
    def save(self, directory: str | Path) -> Path:
        """Write the fitted model to ``directory`` (created if needed); returns the directory.

        Raises:
            RuntimeError: the model was not fitted.
        """
        self._require_fitted()
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        self._save_payload(directory)
        meta = {"format_version": FORMAT_VERSION, "kind": self.kind, "mode": self.mode, "dim": self.dim,
                "params": self.params, "facts": self.facts}
        (directory / "meta.json").write_text(json.dumps(meta, indent=2, sort_keys=True, default=_jsonable) + "\n")
        return directory

    @classmethod
    def load(cls, directory: str | Path) -> "TransitionModel":
        """Load a model saved by :meth:`save`. On the base class the saved kind picks the subclass.

        Raises:
            FileNotFoundError: no ``meta.json`` in ``directory``.
            ValueError: the saved kind does not match ``cls`` or the format version is unknown.
        """
        directory = Path(directory)
        meta_file = directory / "meta.json"
        if not meta_file.exists():
            raise FileNotFoundError(f"{meta_file}: no saved transition model here")
        meta = json.loads(meta_file.read_text())
        if meta.get("format_version") != FORMAT_VERSION:
            raise ValueError(f"{meta_file}: format_version {meta.get('format_version')!r}, expected {FORMAT_VERSION}")
        kind = meta.get("kind")
        target = TransitionModel._KINDS.get(kind)
        if target is None or (cls is not TransitionModel and target is not cls):
            raise ValueError(f"{meta_file}: saved kind {kind!r} cannot be loaded as {cls.__name__}")
        params = dict(meta["params"])
        model = target(mode=meta["mode"], dim=meta["dim"], params=params)
        model.facts = meta.get("facts", {})
        model._load_payload(directory)
        return model

    @abc.abstractmethod
    def _save_payload(self, directory: Path) -> None:
        """Write the subclass's weights or booster into ``directory``."""

    @abc.abstractmethod
    def _load_payload(self, directory: Path) -> None:
        """Read what :meth:`_save_payload` wrote."""

    # -- shared helpers --------------------------------------------------------------------------
    def _teacher_forced_inputs(self, states, goal, include_last: bool) -> tuple[np.ndarray, np.ndarray]:
        """Checked float32 ``(states to predict from, goal)`` for :meth:`predict_teacher_forced`."""
        self._require_fitted()
        states = np.asarray(states, dtype=np.float32)
        goal = np.asarray(goal, dtype=np.float32)
        if states.ndim != 2 or states.shape[1] != self.dim or goal.shape != (self.dim,):
            raise ValueError(f"states {states.shape}, goal {goal.shape}; expected (T+1, {self.dim}) and ({self.dim},)")
        return (states if include_last else states[:-1]), goal

    def _require_fitted(self) -> None:
        if not self.fitted:
            raise RuntimeError(f"{type(self).__name__}: not fitted (call fit() or load())")

    def _check_dim(self, d: int, what: str) -> None:
        if self.dim is None:
            self.dim = int(d)
        elif int(d) != self.dim:
            raise ValueError(f"{type(self).__name__}: {what} has dimension {d}, model dimension is {self.dim}")

    def _prepare(self, data: Sequence[Trajectory] | None, what: str) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """Validate trajectories; return ``(x, g, y)`` per trajectory with at least one transition.

        ``x`` ``(T, D)`` normalised inputs ``s_0..s_{T-1}``, ``g`` ``(D,)`` normalised goal,
        ``y`` ``(T, D)`` targets in the caller's space (``s_{t+1}`` or ``s_{t+1} - s_t``).
        """
        out = []
        for i, item in enumerate(data or []):
            try:
                states, goal = item
            except (TypeError, ValueError) as exc:
                raise ValueError(f"{what}[{i}]: expected a (states, goal) pair") from exc
            states = np.asarray(states, dtype=np.float32)
            goal = np.asarray(goal, dtype=np.float32)
            if states.ndim != 2 or goal.ndim != 1 or states.shape[1] != goal.shape[0]:
                raise ValueError(f"{what}[{i}]: states {states.shape} and goal {goal.shape}; "
                                 "expected (T+1, D) and (D,)")
            self._check_dim(states.shape[1], f"{what}[{i}]")
            if states.shape[0] < 2:
                continue
            x = self.transform(states[:-1])
            g = self.transform(goal)
            y = states[1:] - states[:-1] if self.mode == "delta" else states[1:].copy()
            out.append((x, g, y))
        return out

    def _inputs(self, phi_s: np.ndarray, phi_g: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Validated ``(phi_s raw (B,D), x normalised (B,D), g normalised (B,D))`` for a step."""
        self._require_fitted()
        phi_s = np.asarray(phi_s, dtype=np.float32)
        phi_g = np.asarray(phi_g, dtype=np.float32)
        if phi_s.ndim != 2 or phi_s.shape[1] != self.dim:
            raise ValueError(f"phi_s has shape {phi_s.shape}; expected (B, {self.dim})")
        if phi_g.ndim == 1:
            phi_g = np.repeat(phi_g[None, :], len(phi_s), axis=0)
        if phi_g.shape != phi_s.shape:
            raise ValueError(f"phi_g has shape {phi_g.shape}; expected ({phi_s.shape[0]}, {self.dim}) or ({self.dim},)")
        return phi_s, self.transform(phi_s), self.transform(phi_g)

    def _targets(self, phi_s: np.ndarray, pred: np.ndarray) -> np.ndarray:
        pred = np.asarray(pred, dtype=np.float32)
        return (phi_s + pred).astype(np.float32) if self.mode == "delta" else pred


def _jsonable(x: Any) -> Any:
    if isinstance(x, (np.integer,)):
        return int(x)
    if isinstance(x, (np.floating,)):
        return float(x)
    if isinstance(x, np.ndarray):
        return x.tolist()
    return str(x)


def _finite_or_raise(arrays: Iterable[np.ndarray], what: str) -> None:
    for a in arrays:
        if not np.isfinite(a).all():
            raise DivergedError(f"{what} contains NaN or inf; training cannot produce a finite loss",
                                where="data")


# ------------------------------------------------------------------------------------------------
# LSTM
# ------------------------------------------------------------------------------------------------


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
    that finishes past that many seconds (facts ``stopped_by_budget``), still keeping the best
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
            seed: int = 0) -> dict:
        """Train (see the class docstring). Returns the training facts::

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
            with torch.random.fork_rng(devices=[]):
                torch.manual_seed(int(seed))
                net = _make_lstm_net(self.dim, p)
                facts = self._train_loop(net, tr, va, int(seed))
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

    def _train_loop(self, net, tr, va, seed: int) -> dict:
        import torch

        p = self.params
        opt = torch.optim.Adam(net.parameters(), lr=float(p["lr"]))
        rng = np.random.default_rng(seed)
        bs = int(p["batch_size"])
        val_batches = [_pad(va[i:i + bs]) for i in range(0, len(va), bs)]
        best, best_state, best_epoch, bad = math.inf, None, 0, 0
        train_loss = math.nan
        epoch = 0
        budget = float(p["time_budget_s"]) if p["time_budget_s"] else math.inf
        t0, by_budget = time.perf_counter(), False
        for epoch in range(1, int(p["max_epochs"]) + 1):
            net.train()
            order = rng.permutation(len(tr))
            total, steps = 0.0, 0
            for b, i in enumerate(range(0, len(order), bs)):
                x, g, y, mask = _pad([tr[j] for j in order[i:i + bs]])
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
            if time.perf_counter() - t0 > budget and epoch < int(p["max_epochs"]):
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
            ones = torch.ones(pa.shape[0], dtype=pa.dtype)
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
    def initial_state(self, batch_size: int):
        """Zero ``(h, c)``, each ``(layers, batch_size, hidden)`` float32 (what training starts from)."""
        import torch

        shape = (int(self.params["layers"]), int(batch_size), int(self.params["hidden"]))
        return (torch.zeros(shape), torch.zeros(shape))

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
        with torch.no_grad():
            pred, new = self.net(torch.tensor(x)[:, None, :], torch.tensor(g), rec_state)
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


def _pad(batch):
    """Pad ``[(x (T_i, D), g (D,), y (T_i, D))]`` to tensors ``x, y (B, Tmax, D)``, ``g (B, D)``, mask ``(B, Tmax)``."""
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
    return torch.from_numpy(x), torch.from_numpy(g), torch.from_numpy(y), torch.from_numpy(mask)


# ------------------------------------------------------------------------------------------------
# XGBoost
# ------------------------------------------------------------------------------------------------


class XGBTransitionModel(TransitionModel):
    """Markovian tree-ensemble transition model (G.2 "XGBoost Architecture and Training", Table 6).

    Rows are ``[phi(s_t), phi(g)]`` (``2D`` features, after ``normalise``), targets ``phi(s_{t+1})``
    or ``Delta_t`` (``D`` outputs). ``objective=reg:squarederror``, ``tree_method`` ``hist``,
    ``max_depth`` 8, ``eta`` 0.1, up to ``rounds`` (1000) boosting rounds with early stopping after
    ``early_stopping`` (10) rounds without improvement of the validation RMSE; the booster is cut
    to the best iteration (rounds ``0..best_iteration``), so what is saved and predicted is the
    best-iteration model. ``multi_strategy``: ``one_output_per_tree`` (xgboost's default: one tree
    per output and round) or ``multi_output_tree`` (one vector-leaf tree per round). ``n_jobs``:
    xgboost ``nthread`` for training and prediction (``None``: xgboost's default, all cores).
    ``seed``: the ``fit`` seed (hist with no subsampling is deterministic anyway). ``max_bin`` 256.
    ``max_cached_hist_node`` (xgboost's CPU histogram cache, default here 64 instead of xgboost's
    65536): same trees in our checks, same speed for ``one_output_per_tree``, and for
    ``multi_output_tree`` - whose histograms hold one gradient pair per output - 2.3x less peak
    memory and 1.7-2.8x less time per round (D=500 state mode, 425 outputs: 16.3 GB -> 7.1 GB,
    61 s -> 22 s per round on 2 cores; delta mode, 118 outputs: 5.7 GB -> 2.4 GB, 9.3 s -> 5.6 s).
    ``multi_output_tree`` memory grows with outputs x features x bins: tens of GB at D ~ 1000 in
    state mode; prefer ``one_output_per_tree`` there.
    ``time_budget_s`` (default off) ends boosting after the first round that finishes past that
    many seconds (facts ``stopped_by_budget``; the best round so far is kept) - for CPU-bound
    smoke runs and benchmarks, not part of the paper's protocol.

    Constant targets (``drop_constant_targets``, default on): output columns that are constant on
    the training rows (e.g. WL colours no action ever changes: all-zero ``Delta`` columns) are not
    given to xgboost; predictions put back the training constant. This is exact, not an
    approximation: xgboost 3 fits a per-output intercept (``boost_from_average``), so such a column
    has zero gradient, every tree gives it a zero leaf and its prediction is the constant anyway;
    early stopping picks the same round, because the validation error of a constant column does not
    change with the round. It saves the histogram work of those outputs (one tree per output and
    round with ``one_output_per_tree``): see ``benchmarks/bench_transition_models.py`` for the
    measured speed-up. ``tree_nodes`` counts fitted trees only.

    ``best_val_loss`` is the validation MSE over *all* D outputs at the best iteration (same units
    as the LSTM delta-mode loss); ``best_val_rmse_fitted`` is xgboost's RMSE over fitted outputs.
    NaN in the data would be read by xgboost as "missing"; here it raises :class:`DivergedError`,
    as it does for the LSTM.
    """

    kind = "xgb"
    DEFAULTS: ClassVar[dict[str, Any]] = {
        "max_depth": 8, "eta": 0.1, "rounds": 1000, "early_stopping": 10,
        "multi_strategy": "one_output_per_tree", "tree_method": "hist", "max_bin": 256,
        "drop_constant_targets": True, "n_jobs": None, "normalise": "none", "time_budget_s": None,
        "max_cached_hist_node": 64,
    }
    STRATEGIES = ("one_output_per_tree", "multi_output_tree")

    def __init__(self, mode: str | None = None, dim: int | None = None,
                 params: Mapping[str, Any] | None = None, **overrides: Any):
        super().__init__(mode, dim, params, **overrides)
        self.booster = None
        self.fitted_cols: np.ndarray | None = None  # int64 indices of outputs given to xgboost
        self.constant: np.ndarray | None = None      # float32 (D,) training constant (0 where fitted)

    def _check_params(self, p: dict) -> None:
        if p["multi_strategy"] not in self.STRATEGIES:
            raise ConfigError(f"XGBTransitionModel: multi_strategy={p['multi_strategy']!r}; expected one of {self.STRATEGIES}")
        for key in ("max_depth", "rounds", "early_stopping", "max_bin"):
            if not isinstance(p[key], int) or p[key] < 1:
                raise ConfigError(f"XGBTransitionModel: {key}={p[key]!r}; expected an integer >= 1")
        if not (isinstance(p["eta"], (int, float)) and p["eta"] > 0):
            raise ConfigError(f"XGBTransitionModel: eta={p['eta']!r}; expected a positive number")

    @property
    def fitted(self) -> bool:
        return self.constant is not None

    def _xgb_params(self, seed: int) -> dict:
        p = self.params
        out = {"objective": "reg:squarederror", "tree_method": p["tree_method"], "max_depth": int(p["max_depth"]),
               "eta": float(p["eta"]), "max_bin": int(p["max_bin"]), "multi_strategy": p["multi_strategy"],
               "eval_metric": "rmse", "seed": int(seed)}
        if p["max_cached_hist_node"]:
            out["max_cached_hist_node"] = int(p["max_cached_hist_node"])
        if p["n_jobs"]:
            out["nthread"] = int(p["n_jobs"])
        return out

    @staticmethod
    def _rows(prepared) -> tuple[np.ndarray, np.ndarray]:
        x = np.concatenate([np.hstack([xi, np.broadcast_to(gi, xi.shape)]) for xi, gi, _ in prepared])
        y = np.concatenate([yi for _, _, yi in prepared])
        return np.ascontiguousarray(x, dtype=np.float32), np.ascontiguousarray(y, dtype=np.float32)

    def fit(self, train: Sequence[Trajectory], val: Sequence[Trajectory] | None = None,
            seed: int = 0) -> dict:
        """Train (see the class docstring). Returns the training facts::

            model, mode, dim, seed, multi_strategy, rounds_run, best_iteration (0-based),
            best_rounds, best_val_loss (MSE, all outputs), best_val_rmse_fitted, stopped_early,
            stopped_by_budget, early_stopping_on, train_time_s, tree_nodes, trees, targets_fitted, targets_constant,
            train_rows, val_rows, normalise

        Raises:
            DivergedError: NaN/inf in the data or a non-finite evaluation metric.
            ValueError: malformed trajectories, mismatched dimensions, or no training transitions.
        """
        import xgboost as xgb

        start = time.perf_counter()
        tr = self._prepare(train, "train")
        va = self._prepare(val, "val")
        if not tr:
            raise ValueError("XGBTransitionModel.fit: no training transitions (every trajectory has < 2 states)")
        x, y = self._rows(tr)
        on = "validation" if va else "train"
        xv, yv = self._rows(va) if va else (x, y)
        _finite_or_raise([x, y, xv, yv], "training or validation data")
        d = self.dim
        if self.params["drop_constant_targets"]:
            varying = (y.max(axis=0) != y.min(axis=0))
        else:
            varying = np.ones(d, dtype=bool)
        cols = np.flatnonzero(varying).astype(np.int64)
        constant = np.where(varying, 0.0, y[0]).astype(np.float32)
        p = self.params
        facts: dict[str, Any] = {"model": self.kind, "mode": self.mode, "dim": d, "seed": int(seed),
                                 "multi_strategy": p["multi_strategy"], "early_stopping_on": on,
                                 "targets_fitted": int(len(cols)), "targets_constant": int(d - len(cols)),
                                 "train_rows": int(len(x)), "val_rows": int(len(xv)) if on == "validation" else 0,
                                 "normalise": p["normalise"]}
        booster = None
        if len(cols):
            dtrain = xgb.QuantileDMatrix(x, y[:, cols], max_bin=int(p["max_bin"]))
            dval = (xgb.QuantileDMatrix(xv, yv[:, cols], ref=dtrain, max_bin=int(p["max_bin"]))
                    if on == "validation" else dtrain)
            history: dict = {}
            budget = _TimeBudget(p["time_budget_s"])
            booster = xgb.train(self._xgb_params(seed), dtrain, num_boost_round=int(p["rounds"]),
                                evals=[(dval, "val")], early_stopping_rounds=int(p["early_stopping"]),
                                evals_result=history, verbose_eval=False, callbacks=[budget])
            curve = history["val"]["rmse"]
            bad = [i for i, v in enumerate(curve) if not math.isfinite(v)]
            if bad:
                raise DivergedError(f"XGBoost validation RMSE is {curve[bad[0]]} at round {bad[0] + 1}",
                                    where=f"round {bad[0] + 1}", loss=float(curve[bad[0]]))
            best_it = int(booster.best_iteration)
            rounds_run = booster.num_boosted_rounds()
            booster = booster[: best_it + 1]
            facts.update(rounds_run=int(rounds_run), best_iteration=best_it, best_rounds=best_it + 1,
                         best_val_rmse_fitted=float(curve[best_it]),
                         stopped_by_budget=budget.hit and rounds_run < int(p["rounds"]),
                         stopped_early=rounds_run < int(p["rounds"]) and not budget.hit)
        else:  # every output constant: nothing to boost
            facts.update(rounds_run=0, best_iteration=None, best_rounds=0, best_val_rmse_fitted=0.0,
                         stopped_early=False, stopped_by_budget=False)
        self.booster, self.fitted_cols, self.constant = booster, cols, constant
        self._configure_predict()
        pred = self._predict_raw(xv)
        mse = float(np.mean((pred - yv) ** 2))
        if not math.isfinite(mse):
            raise DivergedError(f"XGBoost validation MSE is {mse}", where="validation", loss=mse)
        nodes, trees = self._count_nodes()
        facts.update(best_val_loss=mse, val_loss_kind="mse", tree_nodes=nodes, trees=trees,
                     train_time_s=round(time.perf_counter() - start, 3))
        self.facts = facts
        return dict(facts)

    def _configure_predict(self) -> None:
        if self.booster is not None and self.params["n_jobs"]:
            self.booster.set_param({"nthread": int(self.params["n_jobs"])})

    def _predict_raw(self, rows: np.ndarray) -> np.ndarray:
        """Model output (B, D) for feature rows (B, 2D): fitted columns from trees, rest constant."""
        out = np.broadcast_to(self.constant, (len(rows), self.dim)).copy()
        if self.booster is not None and len(rows):
            pred = self.booster.inplace_predict(rows)
            out[:, self.fitted_cols] = np.asarray(pred, dtype=np.float32).reshape(len(rows), -1)
        return out

    def _count_nodes(self) -> tuple[int, int]:
        if self.booster is None:
            return 0, 0
        model = json.loads(self.booster.save_raw("json"))
        trees = model["learner"]["gradient_booster"]["model"]["trees"]
        return int(sum(int(t["tree_param"]["num_nodes"]) for t in trees)), len(trees)

    def tree_nodes(self) -> int:
        """Total nodes (splits + leaves) over all trees up to the best iteration (Appendix C.2)."""
        self._require_fitted()
        return self._count_nodes()[0]

    def step(self, phi_s, phi_g, rec_state=None):
        """See :meth:`TransitionModel.step`; stateless: returns ``(v_t, None)``."""
        phi_s, x, g = self._inputs(phi_s, phi_g)
        rows = np.ascontiguousarray(np.hstack([x, g]), dtype=np.float32)
        return self._targets(phi_s, self._predict_raw(rows)), None

    def predict_teacher_forced(self, states, goal, include_last: bool = False):
        """See :meth:`TransitionModel.predict_teacher_forced` (rows are independent)."""
        src, goal = self._teacher_forced_inputs(states, goal, include_last)
        if len(src) == 0:
            return np.zeros((0, self.dim), dtype=np.float32)
        v, _ = self.step(src, goal)
        return v

    def _save_payload(self, directory: Path) -> None:
        np.savez(directory / "targets.npz", fitted_cols=self.fitted_cols, constant=self.constant)
        booster_file = directory / "booster.ubj"
        if self.booster is not None:
            self.booster.save_model(str(booster_file))
        elif booster_file.exists():
            booster_file.unlink()

    def _load_payload(self, directory: Path) -> None:
        import xgboost as xgb

        with np.load(directory / "targets.npz") as z:
            self.fitted_cols = z["fitted_cols"].astype(np.int64)
            self.constant = z["constant"].astype(np.float32)
        booster_file = directory / "booster.ubj"
        self.booster = xgb.Booster(model_file=str(booster_file)) if len(self.fitted_cols) else None
        self._configure_predict()


def _TimeBudget(seconds):
    """xgboost callback that stops boosting once ``seconds`` have passed (``None``: never)."""
    import xgboost as xgb

    class _Budget(xgb.callback.TrainingCallback):
        def __init__(self):
            super().__init__()
            self.hit = False
            self.t0 = time.perf_counter()

        def before_training(self, model):
            self.t0 = time.perf_counter()
            return model

        def after_iteration(self, model, epoch, evals_log):
            if seconds and time.perf_counter() - self.t0 > float(seconds):
                self.hit = True
                return True
            return False

    return _Budget()


def make_transition_model(kind: str, mode: str | None = None, dim: int | None = None,
                          params: Mapping[str, Any] | None = None, **overrides: Any) -> TransitionModel:
    """A model of ``kind`` (``lstm`` | ``xgb``); see :class:`TransitionModel` for the other args.

    Raises:
        ConfigError: unknown kind or hyperparameter.
    """
    cls = TransitionModel._KINDS.get(kind)
    if cls is None:
        raise ConfigError(f"unknown transition model {kind!r}; expected one of {sorted(TransitionModel._KINDS)}")
    return cls(mode=mode, dim=dim, params=params, **overrides)


__all__ = [
    "MODES", "NORMALISATIONS", "DivergedError", "LSTMTransitionModel", "TransitionModel",
    "XGBTransitionModel", "lstm_parameter_count", "make_transition_model", "normalise_rows",
]
