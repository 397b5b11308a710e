"""The identity predictor: "the successor is the current state"
(docs/concepts.md#floors-and-ceilings).

A :class:`~planarena.methods.state_centric.models.TransitionModel` with nothing to learn: its target
is ``v_t = phi(s_t)`` in both modes (in delta mode ``Delta_hat = 0``). Ranked by the decoder's
distance, it prefers the successor whose embedding changes least. It is the floor of every learned
transition model of the same encoding: a WL or FSF model that does not beat it on the pool or
successor-set Hit@k has learned nothing the encoding did not already give (the EmbedPlan paper's
identity baseline, z' = z_s, applied to the state-centric encodings).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar, Sequence

import numpy as np

from planarena.methods.state_centric.models import TransitionModel, Trajectory


class IdentityTransitionModel(TransitionModel):
    """``f(phi(s_t), phi(g)) = phi(s_t)``: no parameters, no training (saved as ``meta.json`` only)."""

    kind: ClassVar[str] = "identity"
    DEFAULTS: ClassVar[dict[str, Any]] = {"normalise": "none"}

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._fitted = False

    @property
    def fitted(self) -> bool:
        return self._fitted

    def fit(self, train: Sequence[Trajectory], val: Sequence[Trajectory] | None = None, seed: int = 0) -> dict:
        """Checks the data's dimension; learns nothing. Returns ``{"parameters": 0}``."""
        self._prepare(train, "train")
        self._fitted = True
        return {"parameters": 0}

    def step(self, phi_s: np.ndarray, phi_g: np.ndarray, rec_state: Any = None) -> tuple[np.ndarray, Any]:
        """``(phi_s as float32 (B, D), None)``: the target is the current state itself."""
        self._require_fitted()
        return np.asarray(phi_s, dtype=np.float32).copy(), None

    def predict_teacher_forced(self, states: np.ndarray, goal: np.ndarray, include_last: bool = False) -> np.ndarray:
        """Row ``t`` is ``phi(s_t)`` (``(T, D)``, or ``(T+1, D)`` with ``include_last``)."""
        x, _ = self._teacher_forced_inputs(states, goal, include_last)
        return x.copy()

    def _save_payload(self, directory: Path) -> None:
        """Nothing beyond ``meta.json``."""

    def _load_payload(self, directory: Path) -> None:
        self._fitted = True
