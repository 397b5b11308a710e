"""State-centric transition models (Gupta, Pallagani, Aydin, Srivastava, ICAPS 2026; ``../shared/
papers/state-centric-transition-models.txt``): WL or FSF state encodings, an LSTM or XGBoost model
of transitions in embedding space (state or delta mode), neuro-symbolic beam decoding
(Algorithm 1) and teacher-forced successor ranking (Hit@k).

One registered class, ``state_centric``; the eight configurations of the paper's Table 1 are eight
params blocks (``wl_lstm_state`` ... ``fsf_xgb_delta``) with ``method: state_centric`` and
``encoding``, ``model``, ``mode``. Training: one model per domain (and per seed when training is
stochastic, i.e. the LSTM; XGBoost with the paper's settings is deterministic, so one model serves
every seed and the method runs one seed) on the train split's trajectories, early stopping on the
validation split's.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import numpy as np

from ..config import get
from ..decoding import DecodeSettings, decode, rank_successors_along
from ..pddl import load_problem
from ..problemset import ProblemSet
from ..trajectories import Trajectory, load_trajectories
from .base import Attempt, Method, PlanningTask

ENCODINGS = ("wl", "fsf")
MODELS = ("lstm", "xgb")
MODES = ("state", "delta")


# ------------------------------------------------------------------------------------------------
# Encoders: one object per (domain), giving a per-problem phi
# ------------------------------------------------------------------------------------------------


class _WLProblem:
    def __init__(self, embedder, problem_file: str):
        self.embedder, self.problem_file = embedder, problem_file
        self._goal = None

    def states(self, atom_lists):
        return self.embedder.embed_states(self.problem_file, atom_lists)

    def goal(self):
        if self._goal is None:
            self._goal = self.embedder.embed_goal(self.problem_file)
        return self._goal


class _FSFProblem:
    def __init__(self, bound, goal_atoms):
        self.bound, self.goal_atoms = bound, goal_atoms
        self._goal = None

    def states(self, atom_lists):
        return self.bound.encode_states(atom_lists)

    def goal(self):
        if self._goal is None:
            self._goal = self.bound.encode_goal(self.goal_atoms)
        return self._goal


class DomainEncoder:
    """phi for one domain: WL (the ``embed_wl`` stage's saved feature generator, ILG, 2 iterations)
    or FSF (Appendix F, ``N`` = max slots over all problems of the domain in the manifest)."""

    def __init__(self, encoding: str, domain: str, layout, ps: ProblemSet):
        self.encoding, self.domain, self.layout, self.ps = encoding, domain, layout, ps
        self._cache: dict[str, Any] = {}
        if encoding == "wl":
            from ..embed_wl import WLEmbedder

            self.impl = WLEmbedder.for_domain(layout, domain)
            self.dim = self.impl.dim
        elif encoding == "fsf":
            from ..fsf import FSFEncoder, fsf_size

            files = [ps.problem_file(e) for e in ps.select(domain=domain)]
            self.n_slots = fsf_size(domain, files)
            self.impl = FSFEncoder(domain, self.n_slots)
            self.dim = self.n_slots + 1
        else:
            raise ValueError(f"params: encoding={encoding!r}; use one of {ENCODINGS}")

    def for_problem(self, problem_file: str | Path, goal_atoms: list[str]):
        key = str(problem_file)
        if key not in self._cache:
            if self.encoding == "wl":
                self._cache[key] = _WLProblem(self.impl, key)
            else:
                self._cache[key] = _FSFProblem(self.impl.bind(key), goal_atoms)
        return self._cache[key]

    def trajectory(self, traj: Trajectory) -> tuple[np.ndarray, np.ndarray]:
        """``(states (T+1, D), goal (D,))`` of a stored trajectory."""
        enc = self.for_problem(self.ps.root / traj.problem_file, traj.goal)
        return enc.states(traj.states), enc.goal()


# ------------------------------------------------------------------------------------------------
# The method
# ------------------------------------------------------------------------------------------------


class StateCentric(Method):
    """One of the eight configurations; see the module docstring. Params block keys:
    ``encoding`` (wl|fsf), ``model`` (lstm|xgb), ``mode`` (state|delta), ``model_params`` (passed to
    the model: Table 6 defaults), ``decode`` (:class:`planarena.decoding.DecodeSettings`),
    ``rank_splits`` (splits for the Hit@k protocol), ``splits`` (coverage splits; default the
    evaluation splits)."""

    family = "state-centric-transition-models"
    tasks = frozenset({"plan", "rank_successors"})
    parallel = False

    def __init__(self, name, config, params, layout):
        # coverage splits: the block's `splits`, else `transition_models.splits` (the paper profile
        # sets Table 1's validation/interpolation/extrapolation), else `evaluation.splits`
        default_splits = get(params, "transition_models.splits", None) or get(params, "evaluation.splits")
        config = {"splits": list(default_splits), **config}
        super().__init__(name, config, params, layout)
        self.encoding = config.get("encoding", "wl")
        self.model_kind = config.get("model", "lstm")
        self.mode = config.get("mode", "delta")
        for key, value, allowed in (("encoding", self.encoding, ENCODINGS), ("model", self.model_kind, MODELS),
                                    ("mode", self.mode, MODES)):
            if value not in allowed:
                raise ValueError(f"params: methods.{name}.{key}={value!r}; use one of {allowed}")
        self.decode_settings = DecodeSettings.from_params(config.get("decode"))
        self._ps: ProblemSet | None = None
        self._encoders: dict[str, DomainEncoder] = {}
        self._models: dict[tuple[str, int], Any] = {}
        self._facts: dict[str, Any] = {}
        self.model_dir: Path | None = None

    # the LSTM's training is seeded; XGBoost's (no subsampling) is not, so it runs one seed
    @property
    def stochastic(self) -> bool:  # type: ignore[override]
        return self.model_kind == "lstm"

    @property
    def uses_params(self) -> tuple[str, ...]:  # type: ignore[override]
        shared = (f"transition_models.{self.model_kind}",)
        return shared + (("embed_wl",) if self.encoding == "wl" else ())

    def model_params(self) -> dict:
        """Hyperparameters: ``transition_models.<lstm|xgb>`` (shared by the configurations, so a
        profile can change all of them at once) updated by the block's ``model_params``; whatever
        neither sets is the paper's Table 6 default (:mod:`planarena.transition_models`)."""
        shared = dict(get(self.params, f"transition_models.{self.model_kind}", None) or {})
        return {**shared, **(self.config.get("model_params") or {})}

    # -- helpers ---------------------------------------------------------------------------------
    @property
    def ps(self) -> ProblemSet:
        if self._ps is None:
            self._ps = ProblemSet(self.layout.problems)
        return self._ps

    def encoder(self, domain: str) -> DomainEncoder:
        if domain not in self._encoders:
            self._encoders[domain] = DomainEncoder(self.encoding, domain, self.layout, self.ps)
        return self._encoders[domain]

    def _model_class(self):
        from ..transition_models import LSTMTransitionModel, XGBTransitionModel

        return LSTMTransitionModel if self.model_kind == "lstm" else XGBTransitionModel

    def _seeds(self) -> list[int]:
        seeds = [int(s) for s in (self.config.get("seeds") or get(self.params, "evaluation.seeds"))]
        return seeds if self.stochastic else seeds[:1]

    def _model_seed(self, seed: int) -> int:
        return seed if self.stochastic else self._seeds()[0]

    # -- training --------------------------------------------------------------------------------
    def train(self, model_dir: Path) -> dict:
        """Train one model per domain (and per seed for the LSTM); write ``<domain>/seed<k>/``.

        A diverged or failed run of one (domain, seed) is recorded in ``facts.json`` with its
        reason; the other models still train.
        """
        from ..transition_models import DivergedError

        cls = self._model_class()
        hyper = self.model_params()
        facts: dict[str, Any] = {"domains": {}}
        for domain in self.ps.domains:
            enc = self.encoder(domain)
            data = {}
            for split in ("train", "validation"):
                data[split] = [enc.trajectory(t) for t in load_trajectories(self.layout.trajectories, domain, split)]
            dom_facts: dict[str, Any] = {"dim": enc.dim, "train_trajectories": len(data["train"]),
                                         "validation_trajectories": len(data["validation"])}
            if self.encoding == "fsf":
                dom_facts["fsf_slots"] = enc.n_slots
            for seed in self._seeds():
                out = model_dir / domain / f"seed{seed}"
                out.mkdir(parents=True, exist_ok=True)
                if not data["train"]:
                    dom_facts[f"seed{seed}"] = {"status": "failed", "reason": f"no train trajectories for {domain}"}
                    continue
                model = cls(mode=self.mode, dim=enc.dim, **hyper)
                start = time.perf_counter()
                try:
                    info = model.fit(data["train"], data["validation"] or None, seed=seed)
                    model.save(out)
                    info = {"status": "ok", **info}
                except DivergedError as exc:
                    info = {"status": "diverged", "reason": str(exc)}
                info.setdefault("train_time_s", round(time.perf_counter() - start, 3))
                dom_facts[f"seed{seed}"] = info
            facts["domains"][domain] = dom_facts
        (model_dir / "facts.json").write_text(json.dumps(facts, indent=2, sort_keys=True, default=float) + "\n")
        # train.json (written by the stage) gets the fingerprint-relevant summary
        return {"trained": True, "models": {d: {k: v.get("status") if isinstance(v, dict) else v
                                                 for k, v in f.items() if k.startswith("seed")}
                                             for d, f in facts["domains"].items()}}

    def load(self, model_dir: Path) -> None:
        self.model_dir = Path(model_dir)
        f = self.model_dir / "facts.json"
        self._facts = json.loads(f.read_text()) if f.exists() else {"domains": {}}

    def _model(self, domain: str, seed: int):
        """The trained model for (domain, seed), or an Attempt-worthy failure string."""
        key = (domain, self._model_seed(seed))
        if key not in self._models:
            info = self._facts.get("domains", {}).get(domain, {}).get(f"seed{key[1]}")
            if info is None:
                self._models[key] = f"no trained model for {domain} (seed {key[1]}); run the train stage"
            elif info.get("status") != "ok":
                self._models[key] = (info.get("status", "failed"), info.get("reason", "training failed"))
            else:
                self._models[key] = self._model_class().load(self.model_dir / domain / f"seed{key[1]}")
        return self._models[key]

    def _cost_extra(self, domain: str, seed: int) -> dict:
        info = self._facts.get("domains", {}).get(domain, {}).get(f"seed{self._model_seed(seed)}", {})
        return {k: info[k] for k in ("parameters", "tree_nodes", "train_time_s") if k in info}

    # -- plan ------------------------------------------------------------------------------------
    def solve(self, task: PlanningTask, seed: int) -> Attempt:
        """Beam-decode a plan (Algorithm 1); outcome diverged/error if the model did not train."""
        domain = task.entry.domain
        model = self._model(domain, seed)
        if isinstance(model, tuple):
            return Attempt("diverged" if model[0] == "diverged" else "error", failure_reason=model[1])
        if isinstance(model, str):
            return Attempt("error", failure_reason=model)
        problem = load_problem(str(task.domain_file), str(task.problem_file))
        from ..pddl import goal_atoms

        try:
            enc = self.encoder(domain).for_problem(task.problem_file, goal_atoms(problem))
        except ValueError as exc:  # e.g. an FSF problem with more objects than slots
            return Attempt("unsolved", failure_reason=f"cannot encode: {exc}")
        res = decode(problem, enc, model, self.mode, self.decode_settings, task.time_limit,
                     n_objects=task.entry.objects)
        return Attempt(res.outcome, res.plan, failure_reason=res.reason,
                       extra={"steps": res.steps, "time_per_step_s": round(res.time_per_step_s, 5),
                              "decode": self.decode_settings.__dict__, **self._cost_extra(domain, seed)})

    # -- rank_successors -------------------------------------------------------------------------
    def rank(self, traj: Trajectory, seed: int) -> dict:
        """Teacher-forced successor ranking (Hit@1/3/5) along a reference trajectory."""
        model = self._model(traj.domain, seed)
        if not hasattr(model, "step"):
            reason = model[1] if isinstance(model, tuple) else model
            raise RuntimeError(reason)
        problem = load_problem(str(self.ps.domain_file(traj.domain)), str(self.ps.root / traj.problem_file))
        enc = self.encoder(traj.domain).for_problem(self.ps.root / traj.problem_file, traj.goal)
        out = rank_successors_along(problem, traj.actions, enc, model, self.mode,
                                    self.decode_settings.metric)
        out["inputs"] = "state, goal"
        return out
