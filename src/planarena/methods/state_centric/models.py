"""Embedding-space transition models of the state-centric paper: the shared interface.

The two model kinds live beside this module: :class:`~planarena.methods.state_centric.lstm.LSTMTransitionModel`
(``lstm.py``) and :class:`~planarena.methods.state_centric.xgb.XGBTransitionModel` (``xgb.py``). This
module holds what they share: :class:`TransitionModel` (interface, hyperparameter merging,
persistence, input checks), :class:`DivergedError`, :func:`normalise_rows` and
:func:`make_transition_model` (a model by kind name).

Paper: Gupta et al., "On Sample-Efficient Generalized Planning via Learned Transition Models"
(docs/papers/state-centric.md), section "State-Centric Transition-Model Learning", Appendix G.2
(dataset construction, architectures, losses), Table 6 (hyperparameters), Appendix C.2 (model
sizes). The models know nothing about PDDL or how embeddings are made: every input is a float array
of embeddings ``phi`` with a fixed dimension ``D``.

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
:meth:`TransitionModel.load` on the base class dispatches on the saved kind among the registered
kinds (:mod:`planarena.methods.state_centric.kinds` imports them all).
"""

from __future__ import annotations

import abc
import json
from pathlib import Path
from typing import Any, ClassVar, Iterable, Mapping, Sequence

import numpy as np

from planarena.config import ConfigError
from planarena.core.io import without_times

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
                "params": self.params,
                # training times differ between identical runs: kept out of this DVC output
                "facts": without_times(self.facts)}
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
        # the kinds register as their modules are imported (planarena.methods.state_centric.kinds
        # imports every one; this module imports none, so that none imports it back)
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


__all__ = [
    "FORMAT_VERSION",
    "MODES",
    "NORMALISATIONS",
    "DivergedError",
    "Trajectory",
    "TransitionModel",
    "normalise_rows",
]
