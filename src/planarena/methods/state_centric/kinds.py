"""The state-centric transition model kinds by name (``lstm``, ``xgb``, ``identity``) and their
factory. Apart from :mod:`planarena.methods.state_centric.models` (the base class every kind
imports), so that no module imports a kind that imports it back."""

from __future__ import annotations

from typing import Any, Mapping

from planarena.config import ConfigError
from planarena.methods.state_centric import identity, lstm, xgb
from planarena.methods.state_centric.models import TransitionModel

#: Every model kind by name.
KINDS: dict[str, type[TransitionModel]] = {"identity": identity.IdentityTransitionModel,
                                           "lstm": lstm.LSTMTransitionModel, "xgb": xgb.XGBTransitionModel}


def make_transition_model(kind: str, mode: str | None = None, dim: int | None = None,
                          params: Mapping[str, Any] | None = None, **overrides: Any) -> TransitionModel:
    """A model of ``kind`` (``lstm`` | ``xgb`` | ``identity``); see :class:`TransitionModel` for the other args.

    Raises:
        ConfigError: unknown kind or hyperparameter.
    """
    cls = KINDS.get(kind)
    if cls is None:
        raise ConfigError(f"unknown transition model {kind!r}; expected one of {sorted(KINDS)}")
    return cls(mode=mode, dim=dim, params=params, **overrides)


def load_transition_model(directory) -> TransitionModel:
    """:meth:`TransitionModel.load` with every kind registered (the saved kind picks the class).

    Raises:
        FileNotFoundError, ValueError: as :meth:`TransitionModel.load`.
    """
    return TransitionModel.load(directory)


__all__ = ["KINDS", "load_transition_model", "make_transition_model"]
