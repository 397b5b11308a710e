"""WL-GOOSE: a linear heuristic on WL features of the Instance Learning Graph, searched with GBFS.

Source: Chen, Trevizan, Thiébaux, "Return to Tradition: Learning Reliable Heuristics with Classical
Machine Learning" (ICAPS 2024), the learned-heuristic baseline "GOOSE*" of Table 1 of
Aichmüller et al. (docs/papers/rgnn-policies.md; its "Baselines" paragraph: "it colors a graph
(specifically, the ILG) and uses the resulting color counts to define its heuristic ... used with
GBFS"). The GOOSE paper itself is not one of the papers this harness follows; what it does is
summarised here.

What it computes
----------------
* Features: ``phi(s, g)`` in ``R^D``, the WL colour histogram of the ILG ``G_{s,g}`` of a state,
  exactly as the ``embed_wl`` stage computes it (:mod:`planarena.features.wl`: wlplan, ILG, the
  ``embed_wl`` iterations, vocabulary collected on the train split only, unseen colours dropped).
  Nothing is re-embedded for training: the stage's cached ``train.npz`` rows are the inputs.
* Labels: the state ``s_i`` of a train-split reference plan of ``n`` actions gets ``h = n - i``,
  its goal distance along the plan (``h*`` where the plan is optimal, i.e. A*+LM-cut solved the
  problem; an upper bound for LAMA-first plans; the facts count both).
* Model: ``h(s) = w . phi(s, g) + b``, ridge regression (closed form, unpenalised intercept) with
  ``alpha`` from the params block. GOOSE fits linear models of the WL counts (Gaussian process
  regression with a dot-product kernel; linear SVR); the posterior mean of GPR with a dot-product
  kernel and Gaussian noise is ridge regression (up to how the intercept is treated), so ridge stands
  in for it here, with a fixed ``alpha`` instead of GPR's fitted noise level.
* Search: eager greedy best-first search (GBFS) of pymimir (:func:`pymimir.gbfs_eager`) with the
  learned heuristic as a :class:`pymimir.Heuristic` subclass, no preferred operators, under the
  task's time limit. One call per generated state: the pymimir state becomes a wlplan state
  (:meth:`planarena.features.wl.PDDLCache.mimir_state`) and wlplan's C++ ``predict`` gives
  ``w . phi``; about 0.1 ms a state on one core (measured on the default profile), so no batching
  is needed.

One model per domain, trained on that domain's ``train`` split only. Training output (the method's
domain knowledge, IPC 2023 Learning Track style: planning needs only it, the domain and a task),
``<model_dir>/<domain>/``:

``feature_generator.json``  a copy of the ``embed_wl`` stage's wlplan feature generator.
``weights.json``            ``{"weights": [D floats], "bias": float, "alpha": float}``.
``facts.json``              deterministic training facts (no times): states, plans, optimal plans,
                            ``D``, ``alpha``, train R^2 and MAE.

Deterministic: training is a closed-form solve of fixed data and the search has no random choices;
each attempt parses its problem afresh, so a plan does not depend on what ran before it in the
process. The method therefore runs one seed (``stochastic = False``).

Untrained twin (``untrained: true``, docs/concepts.md#untrained-twins): no model; the same GBFS,
limits and expansion cap with a uniform random heuristic seeded by (seed, problem)
(:class:`UniformRandomHeuristic`).
"""

from __future__ import annotations

import dataclasses
import json
import math
import shutil
import time
from pathlib import Path
from typing import Any

import numpy as np
import pymimir

from planarena.config import get
from planarena.core.clock import wall_safety
from planarena.core.io import atomic_write_json, derive_seed
from planarena.core.pddl import fresh_problem
from planarena.core.trajectories import load_trajectories
from planarena.methods.base import (
    Attempt,
    Budget,
    Method,
    PlanningTask,
    ReportTraits,
    row_config,
    twin_traits,
    untrained_value,
)

#: its own family: the learned-heuristic baseline, not one of the five papers
FAMILY = "wl-goose"

#: pymimir ``SearchResult.status`` values and the attempt outcome each one gives (``out_of_states``
#: cannot happen: no state cap is passed; the expansion cap is :class:`_ExpansionCap`)
_OUTCOMES = {"solved": "solved", "out_of_time": "timeout", "out_of_memory": "memout",
             "exhausted": "unsolved", "unsolvable": "unsolved", "failed": "unsolved",
             "out_of_states": "unsolved"}


class _CpuLimit(Exception):
    """Raised from the expansion callback when the task's CPU-time limit has passed."""


class _ExpansionCap(Exception):
    """Raised from pymimir's expansion callback to stop a search at ``max_expansions`` (pymimir
    propagates a callback's exception out of :func:`pymimir.gbfs_eager`)."""


def fit_ridge(x: np.ndarray, y: np.ndarray, alpha: float) -> tuple[np.ndarray, float]:
    """Ridge regression with an unpenalised intercept (scikit-learn's ``Ridge``, float64).

    Minimises ``||x w + b - y||^2 + alpha ||w||^2``.

    Args:
        x: ``(N, D)`` features (WL colour counts).
        y: ``(N,)`` targets (goal distances, in actions).
        alpha: the L2 penalty, > 0.

    Returns:
        ``(w, b)``: ``(D,)`` float64 weights and the float intercept.

    Raises:
        ValueError: ``alpha`` is not > 0, no rows, or ``x`` and ``y`` disagree in length.
    """
    from sklearn.linear_model import Ridge

    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if not alpha > 0:
        raise ValueError(f"ridge alpha must be > 0, got {alpha!r}")
    if x.ndim != 2 or y.shape != (x.shape[0],) or x.shape[0] == 0:
        raise ValueError(f"fit_ridge: need x (N, D) and y (N,) with N > 0, got {x.shape} and {y.shape}")
    model = Ridge(alpha=float(alpha), fit_intercept=True).fit(x, y)
    return np.asarray(model.coef_, dtype=np.float64), float(model.intercept_)


def plan_labels(traj_index: np.ndarray, step: np.ndarray) -> np.ndarray:
    """Goal distance along the plan of each row of an ``embed_wl`` split file.

    Args:
        traj_index: ``(N,)`` int, the trajectory of each row (rows of one trajectory contiguous,
            steps ``0..n``, as :func:`planarena.features.wl.embed_split` writes them).
        step: ``(N,)`` int, ``i`` of ``s_i``.

    Returns:
        ``(N,)`` float64 ``n - i``, with ``n`` the number of actions of the row's plan.
    """
    traj_index = np.asarray(traj_index, dtype=np.int64)
    if traj_index.size == 0:
        return np.zeros(0, dtype=np.float64)
    n_actions = np.bincount(traj_index)[traj_index] - 1
    return (n_actions - np.asarray(step, dtype=np.int64)).astype(np.float64)


class LinearWLHeuristic(pymimir.Heuristic):
    """``h(s) = w . phi(s, g) + b`` for the states of one pymimir problem (GOOSE's heuristic).

    Args:
        embedder: the domain's :class:`planarena.features.wl.WLEmbedder`; its wlplan feature
            generator must hold the weights ``w`` (``fg.set_weights``) and is bound to this problem
            here (``fg.set_problem``), so one embedder serves one search at a time.
        problem_file: the problem's PDDL file (objects, goal and static atoms for the ILG).
        problem: the pymimir problem parsed from ``problem_file`` that the search runs on.
        bias: ``b``, in actions.

    ``evaluations`` counts the calls of :meth:`compute_value` (generated states evaluated).
    """

    def __init__(self, embedder, problem_file: str | Path, problem: pymimir.Problem, bias: float):
        super().__init__()
        self._embedder, self._problem, self._bias = embedder, problem, float(bias)
        parsed = embedder.pddl.problem(problem_file)
        # a private atom-index map: pymimir atom indices belong to this Problem object (a fresh
        # parse numbers atoms in the order this search meets them)
        self._parsed = dataclasses.replace(parsed, by_index=({}, {}, []))
        embedder.fg.set_problem(parsed.problem)
        self.evaluations = 0

    def compute_value(self, state: pymimir.State, goal=None) -> float:
        """``w . phi(state) + b`` (float; estimated actions to the goal). ``goal`` is ignored: the
        ILG's goal is the problem's."""
        self.evaluations += 1
        wl_state = self._embedder.pddl.mimir_state(self._parsed, self._problem, state)
        return self._embedder.fg.predict(wl_state) + self._bias

    def get_preferred_actions(self) -> set:
        """GOOSE searches without preferred operators: always the empty set."""
        return set()


class UniformRandomHeuristic(pymimir.Heuristic):
    """The untrained twin's heuristic: a uniform random value in [0, 1) per evaluated state, drawn
    from a generator seeded by (seed, problem name). Without training WL-GOOSE's ridge weights
    are zero and every state would tie (GBFS would fall back to its tie-breaking order, a blind
    search); a random heuristic is the floor the brief sets for it: the same GBFS guided by
    nothing learned. GBFS evaluates states in a fixed order, so the values are reproducible.

    ``evaluations`` counts the calls of :meth:`compute_value`."""

    def __init__(self, seed: int, name: str):
        super().__init__()
        self._rng = np.random.default_rng(derive_seed(seed, "wl-goose-uniform", name))
        self.evaluations = 0

    def compute_value(self, state: pymimir.State, goal=None) -> float:
        self.evaluations += 1
        return float(self._rng.random())

    def get_preferred_actions(self) -> set:
        return set()


class WLGoose(Method):
    """WL-GOOSE (Chen, Trevizan, Thiébaux, ICAPS 2024) as a ``plan`` method; see the module docs.

    Params block keys: ``alpha`` (ridge L2 penalty, > 0; default 1.0), ``max_expansions`` (stop a
    search after this many expansions, outcome ``unsolved``; default none), ``splits`` (coverage
    splits; default ``evaluation.splits``), ``time_limit`` (seconds per attempt; default
    ``evaluation.time_limit``).

    Raises (on construction):
        ValueError: ``alpha`` is not a number > 0 or ``max_expansions`` is not a positive integer
            (the message names the params key).
    """

    family = FAMILY
    tasks = frozenset({"plan"})
    stochastic = False
    parallel = True
    uses_params = ("embed_wl",)
    #: problems (the manifest's domains; the tasks' PDDL), trajectories (optimal-plan flags, a check
    #: that the cached embeddings match the plans), embeddings/wl (features and feature generator)
    data_deps = ("problems", "trajectories", "embeddings/wl")

    @classmethod
    def report_traits(cls, config: dict, params: dict) -> ReportTraits:
        """A model row (no horizon: a search planner) with one Info row on how it learns and plans.
        The untrained twin: a search floor (:func:`twin_traits`)."""
        if config.get("untrained"):
            return twin_traits(cls.report_traits(row_config(config), params), str(config.get("twin_of") or ""),
                               "untrained twin: GBFS with a uniform random heuristic")
        iterations = get(params, "embed_wl.iterations", 2)
        alpha = config.get("alpha", 1.0)
        info = (("WL-GOOSE",
                 f"linear heuristic (ridge, alpha={alpha}) on the ILG WL colour counts of `embed_wl` "
                 f"({iterations} iterations, or fewer where `embed_wl.max_features` cut a domain's vocabulary: "
                 "Info's Features reduced; train-split vocabulary), fitted per domain to the goal distance "
                 "of every state on the train split's reference plans; eager GBFS in pymimir, no preferred "
                 "operators (Chen, Trevizan, Thiébaux, ICAPS 2024)"),)
        # a closed-form ridge fit, no optimisation steps; its sample count (the train split's plan
        # states) depends on the data, and none of the papers this harness follows states a budget
        # for it
        budget = Budget(unit="closed-form ridge regression over the train split's reference-plan states (no "
                             "optimisation steps)",
                        note="one fit per domain; WL-GOOSE's own paper is not one of the five")
        return ReportTraits(role="model", variant="GOOSE", info=info, horizon=None, kind="search", budget=budget)

    def __init__(self, name: str, config: dict, params: dict, layout):
        super().__init__(name, config, params, layout)
        try:
            self.alpha = float(config.get("alpha", 1.0))
        except (TypeError, ValueError):
            self.alpha = float("nan")
        if not (math.isfinite(self.alpha) and self.alpha > 0):
            raise ValueError(f"params: methods.{name}.alpha={config.get('alpha')!r}; a number > 0 (ridge penalty)")
        cap = config.get("max_expansions")
        if cap is not None and (isinstance(cap, bool) or not isinstance(cap, int) or cap < 1):
            raise ValueError(f"params: methods.{name}.max_expansions={cap!r}; a positive integer or null")
        self.max_expansions: int | None = cap
        #: the untrained twin (docs/concepts.md#untrained-twins): the same GBFS, limits and cap with
        #: a seeded uniform random heuristic (:class:`UniformRandomHeuristic`); nothing is trained
        self.untrained = bool(untrained_value(config, name))
        self.model_dir: Path | None = None
        self._models: dict[str, Any] = {}

    # -- training --------------------------------------------------------------------------------
    def train(self, model_dir: Path) -> dict:
        """Fit one ridge model per domain of the manifest on its ``train`` split; write
        ``<model_dir>/<domain>/`` (module docs) and ``<model_dir>/facts.json``.

        Returns:
            ``{"trained": True, "parameters": total weights + biases, "models": {domain: status}}``
            plus ``domain_times_s`` (seconds per domain; a ``*_s`` key, so it goes to the train log).
            A domain without train embeddings gets status ``no data`` with the reason (its attempts
            are then ``unsolved``); the others still train.

        Raises:
            ValueError: the cached train embeddings do not match the train trajectories (a stale
                ``embed_wl`` output: rerun it).
        """
        model_dir = Path(model_dir)
        domains = self.ps.domains
        if self.untrained:
            atomic_write_json(model_dir / "facts.json", {"domains": {d: {"status": "ok", "untrained": True}
                                                                     for d in domains}})
            return {"trained": False, "untrained": True, "reason": "untrained twin: no training",
                    "models": {d: "ok" for d in domains}}
        facts: dict[str, dict] = {}
        times: dict[str, float] = {}
        for domain in domains:
            start = time.perf_counter()
            facts[domain] = self._train_domain(domain, model_dir / domain)
            times[domain] = round(time.perf_counter() - start, 4)
        atomic_write_json(model_dir / "facts.json", {"domains": facts})
        parameters = sum(f["dim"] + 1 for f in facts.values() if f["status"] == "ok")
        from planarena.features.wl import reductions

        reduced = reductions(self.layout, domains)
        return {"trained": True, "parameters": parameters, "alpha": self.alpha,
                "models": {d: f["status"] for d, f in facts.items()}, "domain_times_s": times,
                **({"features_reduced": reduced} if reduced else {})}

    def _train_domain(self, domain: str, out: Path) -> dict:
        """Fit and save one domain's model; its facts (``status`` ``ok`` or ``no data``)."""
        wl_dir = self.layout.embeddings / "wl" / domain
        npz = wl_dir / "train.npz"
        if not npz.exists():
            return {"status": "no data", "reason": f"{npz} not found (run `dvc repro embed_wl`)"}
        with np.load(npz) as z:
            x, traj_index, step = z["states"], z["traj_index"], z["step"]
            problems = [str(p) for p in z["problems"]]
        if x.shape[0] == 0:
            return {"status": "no data", "reason": f"no train trajectories of {domain}"}
        trajs = load_trajectories(self.layout.trajectories, domain, "train")
        lengths = np.bincount(traj_index) if traj_index.size else np.zeros(0, dtype=np.int64)
        if [t.problem for t in trajs] != problems or [len(t.states) for t in trajs] != lengths.tolist():
            raise ValueError(f"{npz}: the cached WL rows do not match {self.layout.trajectories / domain}/train.jsonl "
                             "(stale embeddings); rerun `dvc repro embed_wl`")
        y = plan_labels(traj_index, step)
        keep = {e.problem for e in self.training_problems(domain)}   # the block's train_problems
        if len(keep) < len(trajs):
            rows = np.isin(traj_index, [i for i, t in enumerate(trajs) if t.problem in keep])
            x, y, trajs = x[rows], y[rows], [t for t in trajs if t.problem in keep]
            if x.shape[0] == 0:
                return {"status": "no data", "reason": f"no train trajectory among train_problems of {domain}"}
        w, b = fit_ridge(x, y, self.alpha)
        pred = x.astype(np.float64) @ w + b
        ss_tot = float(((y - y.mean()) ** 2).sum())
        r2 = 1.0 - float(((pred - y) ** 2).sum()) / ss_tot if ss_tot > 0 else 1.0
        out.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(wl_dir / "feature_generator.json", out / "feature_generator.json")
        atomic_write_json(out / "weights.json", {"weights": [float(v) for v in w], "bias": float(b),
                                                 "alpha": self.alpha})
        facts = {"status": "ok", "dim": int(x.shape[1]), "alpha": self.alpha, "train_states": int(x.shape[0]),
                 "train_plans": len(trajs), "optimal_plans": sum(bool(t.optimal) for t in trajs),
                 "max_label": int(y.max()), "train_r2": round(r2, 6),
                 "train_mae": round(float(np.abs(pred - y).mean()), 6)}
        atomic_write_json(out / "facts.json", facts)
        return facts

    def load(self, model_dir: Path) -> None:
        """Remember ``model_dir``; each domain's model is read on its first :meth:`solve` (in the
        worker process that plans it)."""
        self.model_dir = Path(model_dir)
        self._models = {}

    def _model(self, domain: str, domain_file: Path):
        """``(embedder with weights set, bias, facts)`` of ``domain``, or an :class:`Attempt` that
        every task of the domain gets (no model)."""
        if domain not in self._models:
            from planarena.features.wl import WLEmbedder

            d = (self.model_dir or Path("<not loaded>")) / domain
            facts_file = d / "facts.json"
            facts = json.loads(facts_file.read_text()) if facts_file.exists() else None
            if facts is None:
                self._models[domain] = Attempt("error", failure_reason=f"no trained model for {domain} under "
                                                                       f"{d.parent}; run the train stage")
            elif facts.get("status") != "ok":
                self._models[domain] = Attempt("unsolved", failure_reason=f"no model: {facts.get('reason')}")
            else:
                saved = json.loads((d / "weights.json").read_text())
                embedder = WLEmbedder.load(d / "feature_generator.json", domain_file)
                if embedder.dim != len(saved["weights"]):
                    raise ValueError(f"{d}: {len(saved['weights'])} weights for {embedder.dim} WL features")
                embedder.fg.set_weights([float(v) for v in saved["weights"]])
                self._models[domain] = (embedder, float(saved["bias"]), facts)
        return self._models[domain]

    # -- planning --------------------------------------------------------------------------------
    def solve(self, task: PlanningTask, seed: int) -> Attempt:
        """Eager GBFS with the learned heuristic on one task (``seed`` is unused: deterministic;
        the untrained twin seeds its random heuristic with it and the problem's name).

        Outcomes: ``solved`` (the plan, ``str`` of each pymimir ground action), ``timeout`` (the
        task's time limit in CPU seconds of this process, counted from the call, ran out: checked
        at every expansion, so that machine load decides no outcome; pymimir's own wall-clock limit
        is only a safety net, :func:`planarena.core.clock.wall_safety`), ``unsolved`` (search space exhausted,
        ``max_expansions`` reached, or no model for the domain), ``memout``. ``extra``:
        ``expansions``, ``evaluations`` (heuristic calls), ``plan_length``, ``h_init`` (the initial
        state's heuristic value, in actions).
        """
        start, cpu_start = time.perf_counter(), time.process_time()
        # a fresh parse: search state and atom numbering start empty, so the plan does not depend
        # on earlier attempts
        if self.untrained:
            problem = fresh_problem(task.domain_file, task.problem_file)
            heuristic = UniformRandomHeuristic(seed, task.entry.problem)
        else:
            got = self._model(task.entry.domain, task.domain_file)
            if isinstance(got, Attempt):
                return Attempt(got.outcome, failure_reason=got.failure_reason, wall_time=time.perf_counter() - start)
            embedder, bias, _ = got
            problem = fresh_problem(task.domain_file, task.problem_file)
            heuristic = LinearWLHeuristic(embedder, task.problem_file, problem, bias)
        initial = problem.get_initial_state()
        h_init = heuristic.compute_value(initial)
        heuristic.evaluations = 0
        expansions = 0

        def on_expand(_state) -> None:
            nonlocal expansions
            expansions += 1
            if self.max_expansions is not None and expansions > self.max_expansions:
                raise _ExpansionCap()
            if time.process_time() - cpu_start > task.time_limit:
                raise _CpuLimit()

        def extra(plan_length: int | None) -> dict:
            return {"expansions": expansions, "evaluations": heuristic.evaluations,
                    "plan_length": plan_length, "h_init": round(h_init, 4)}

        if time.process_time() - cpu_start > task.time_limit:
            return Attempt("timeout", None, f"CPU time limit {task.time_limit:g} s reached before the search",
                           wall_time=time.perf_counter() - start, extra=extra(None))
        try:
            result = pymimir.gbfs_eager(problem, initial, heuristic, max_time_seconds=wall_safety(task.time_limit),
                                        on_expand_state=on_expand)
        except _CpuLimit:
            return Attempt("timeout", None, f"CPU time limit {task.time_limit:g} s",
                           wall_time=time.perf_counter() - start, extra=extra(None))
        except _ExpansionCap:
            expansions = self.max_expansions  # the search stopped before expanding one more
            return Attempt("unsolved", None, f"max_expansions={self.max_expansions} reached",
                           wall_time=time.perf_counter() - start, extra=extra(None))
        elapsed = time.perf_counter() - start
        outcome = _OUTCOMES.get(result.status, "error")
        if outcome == "solved":
            plan = [str(a) for a in result.solution]
            return Attempt("solved", plan, wall_time=elapsed, extra=extra(len(plan)))
        reasons = {"timeout": f"time limit {task.time_limit:g} s", "memout": "out of memory",
                   "unsolved": "GBFS exhausted the reachable states: no plan"}
        return Attempt(outcome, None, reasons.get(outcome, f"pymimir search status {result.status!r}"),
                       wall_time=elapsed, extra=extra(None))


__all__ = ["FAMILY", "LinearWLHeuristic", "UniformRandomHeuristic", "WLGoose", "fit_ridge", "plan_labels"]
