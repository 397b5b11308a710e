"""XGBoost transition model of the state-centric paper (G.2 "XGBoost Architecture and Training", Table 6).

Markovian tree ensemble ``f(phi(s_t), phi(g)) -> v_t``; the data, modes, input normalisation,
failures and saved layout are those of :mod:`planarena.methods.state_centric.models` (saved payload:
``booster.ubj`` and ``targets.npz``).
"""

from __future__ import annotations

import json
import math
import sys
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
    _finite_or_raise,
)


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
    many CPU seconds of this process (facts ``stopped_by_budget``; the best round so far is kept) - for CPU-bound
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
        xgb = _xgboost()

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
            projection = CostProjection(
                f"xgb {self.mode} seed {seed}",
                f"{len(x):,} rows x {x.shape[1]:,} features -> {len(cols):,} outputs fitted "
                f"({d - len(cols):,} constant), {p['multi_strategy']}", int(p["rounds"]), "round",
                p["time_budget_s"], "transition_models.xgb.time_budget_s")
            budget = _TimeBudget(p["time_budget_s"], projection)
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
        xgb = _xgboost()

        with np.load(directory / "targets.npz") as z:
            self.fitted_cols = z["fitted_cols"].astype(np.int64)
            self.constant = z["constant"].astype(np.float32)
        booster_file = directory / "booster.ubj"
        self.booster = xgb.Booster(model_file=str(booster_file)) if len(self.fitted_cols) else None
        self._configure_predict()


def _xgboost():
    """The ``xgboost`` module, imported without its scikit-learn bridge when nothing has imported
    scikit-learn yet.

    ``import xgboost`` imports scikit-learn if it is installed (and with it scipy.stats and pandas)
    only to offer ``XGBRegressor``; this family uses ``xgboost.train`` and ``xgboost.Booster``.
    Measured in an evaluate stage process: 1.04 s for ``import xgboost`` with the bridge, 0.19 s
    without, paid again by every executor worker (docs/cost.md). scikit-learn stays importable
    afterwards; only xgboost's own scikit-learn classes are then unavailable in this process.
    """
    if "xgboost" in sys.modules or "sklearn" in sys.modules:
        import xgboost

        return xgboost
    sys.modules["sklearn"] = None  # type: ignore[assignment]  # `import sklearn` raises ImportError
    try:
        import xgboost
    finally:
        del sys.modules["sklearn"]
    return xgboost


def _TimeBudget(seconds, projection: CostProjection | None = None):
    """xgboost callback that stops boosting once ``seconds`` of CPU time of this process have passed
    (``None``: never; CPU time, so that machine load decides no outcome); after each round it tells
    ``projection`` (:class:`planarena.core.cost.CostProjection`), which prints after the first."""
    xgb = _xgboost()

    class _Budget(xgb.callback.TrainingCallback):
        def __init__(self):
            super().__init__()
            self.hit = False
            self.t0 = time.process_time()

        def before_training(self, model):
            self.t0 = time.process_time()
            return model

        def after_iteration(self, model, epoch, evals_log):
            if projection is not None:
                projection.unit_done()
            if seconds and time.process_time() - self.t0 > float(seconds):
                self.hit = True
                return True
            return False

    return _Budget()


__all__ = ["XGBTransitionModel"]
