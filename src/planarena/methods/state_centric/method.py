"""State-centric transition models (Gupta, Pallagani, Aydin, Srivastava, "On Sample-Efficient
Generalized Planning via Learned Transition Models", ICAPS 2026; docs/papers/state-centric.md): WL
or FSF state encodings, an LSTM or XGBoost model of transitions in embedding space (state or delta
mode), neuro-symbolic beam decoding (Algorithm 1) and teacher-forced successor ranking (Hit@k).

One registered class, ``state_centric``; the eight configurations of the paper's Table 1 are eight
params blocks (``wl_lstm_state`` ... ``fsf_xgb_delta``) with ``method: state_centric`` and
``encoding``, ``model``, ``mode``. Training: one model per domain (and per seed when training is
stochastic, i.e. the LSTM; XGBoost with the paper's settings is deterministic, so one model serves
every seed and the method runs one seed) on the train split's trajectories, early stopping on the
validation split's.

Hit@k: the successor-set protocol (this paper's, along the suite's reference trajectories) and the
EmbedPlan candidate-pool protocols on the ACPBench-domain datasets (:mod:`planarena.methods.state_centric.pool`:
one more model per (protocol, domain, seed), trained on the protocol's training transitions in the
train stage and saved under ``<model_dir>/pool/``). ``transition_models.pool.protocols`` (or the
block's ``pool_protocols``) chooses the pool protocols; an empty list, or no ACP datasets, turns the
pool protocol off with the reason recorded.

Untrained twin (``untrained: true``, docs/concepts.md#untrained-twins): nothing is fitted. An LSTM
twin decodes, ranks and scores pools with the network at the initial weights its row trains from;
an XGBoost twin (no trees would score every successor equal) scores each candidate uniformly at
random, seeded per (seed, problem) (:class:`UniformScorer`, :func:`rank_uniformly`).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import numpy as np

from planarena.config import get
from planarena.core.io import atomic_write_json, derive_seed, without_times
from planarena.core.pddl import load_problem
from planarena.core.trajectories import Trajectory, load_trajectories
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
from planarena.methods.state_centric.encoders import ENCODINGS, DomainEncoder
from planarena.methods.units import lost_unit
from planarena.search.decoding import (
    DecodeProblem,
    DecodeSettings,
    TransitionScorer,
    decode_lockstep,
    problem_runs,
    rank_successors_along,
)

MODELS = ("lstm", "xgb", "identity")
MODES = ("state", "delta")


class _Uniform:
    """The "model" of an untrained XGBoost twin (no trees, no file): :data:`UNIFORM`."""

    def __repr__(self) -> str:
        return "UNIFORM"


#: what :meth:`StateCentric._model` gives for an untrained XGBoost twin: scores are uniform random
UNIFORM = _Uniform()


class UniformScorer:
    """:class:`~planarena.search.decoding.SuccessorScorer` of the untrained twin of an XGBoost
    row: an XGBoost without trees predicts the same target for every state, so every successor
    would tie; instead each candidate gets a uniform random score, drawn from a generator per
    problem seeded by (``seed``, problem name). A problem's draws depend only on its own
    candidates, so it decodes the same alone or in any lockstep batch. Nothing is embedded."""

    def __init__(self, seed: int, names: list[str]):
        self.rngs = [np.random.default_rng(derive_seed(seed, "uniform-scorer", name)) for name in names]

    def start(self, problems, states):
        return None

    def score(self, ctx, beam_problem, successors, owner):
        problem_of = beam_problem[owner]
        scores = np.empty(len(owner))
        lo = 0
        for i, hi in problem_runs(problem_of):
            scores[lo:hi] = self.rngs[i].random(hi - lo)
            lo = hi
        return scores, None

    def select(self, cand_ctx, chosen):
        return None


def rank_uniformly(problem, actions: list[str], seed: int, name: str, ks=(1, 3, 5)) -> dict:
    """Successor-set Hit@k (:func:`~planarena.search.decoding.rank_successors_along`'s output)
    of uniform random scores along a reference trajectory (the untrained XGBoost twin), seeded by
    (``seed``, problem ``name``): its expectation is min(k, c) / c per step."""
    from planarena.core.pddl import replay
    from planarena.search.decoding import hit_at_k

    states, _ = replay(problem, list(actions))
    if len(states) < 2:
        return {"steps": 0}
    rng = np.random.default_rng(derive_seed(seed, "uniform-ranker", name))
    sums = {f"hit@{k}": 0.0 for k in ks}
    n_cand = 0
    for t in range(len(states) - 1):
        succs = list(dict.fromkeys(a.apply(states[t]) for a in states[t].generate_applicable_actions()))
        scores = rng.random(len(succs))
        true_idx = succs.index(states[t + 1])
        for key, val in hit_at_k(float(scores[true_idx]), np.delete(scores, true_idx), ks).items():
            sums[key] += val
        n_cand += len(succs)
    n = len(states) - 1
    return {**{k: v / n for k, v in sums.items()}, "steps": n, "mean_candidates": n_cand / n}


# ------------------------------------------------------------------------------------------------
# The method
# ------------------------------------------------------------------------------------------------


#: Appendix G.2 and Table 6 (G.5): the LSTM "for 250 epochs with early stopping based on
#: validation loss", batch size 32; XGBoost "for up to 1000 boosting rounds with early stopping if
#: validation loss does not improve for 10 consecutive rounds" (no batch)
PAPER_TRAIN = {"lstm": {"steps": 250, "batch": 32}, "xgb": {"steps": 1000, "batch": None}}


def _hyper(config: dict, params: dict) -> dict:
    """The block's model hyperparameters as :meth:`StateCentric.model_params` resolves them, over
    the model class's Table 6 defaults."""
    kind = config.get("model", "lstm")
    if kind == "lstm":
        from planarena.methods.state_centric.lstm import LSTMTransitionModel as model
    else:
        from planarena.methods.state_centric.xgb import XGBTransitionModel as model
    shared = get(params, f"transition_models.{kind}", None) or {}
    return {**model.DEFAULTS, **shared, **(config.get("model_params") or {})}


def _budget(config: dict, params: dict) -> Budget:
    """A coverage model's budget: LSTM epochs x batch of trajectories, or XGBoost boosting rounds;
    both caps (early stopping), and the samples depend on the data (None)."""
    kind = config.get("model", "lstm")
    p, paper = _hyper(config, params), PAPER_TRAIN[kind]
    if kind == "lstm":
        return Budget(steps=int(p["max_epochs"]), batch=int(p["batch_size"]),
                      unit="epochs (at most) over the train split's trajectories x batch of trajectories",
                      paper_steps=paper["steps"], paper_batch=paper["batch"], source="Appendix G.2, Table 6",
                      note=f"early stopping on validation loss, patience {p['patience']} (paper: 25); the "
                           "pool-protocol models train shorter (`transition_models.pool.lstm`)")
    return Budget(steps=int(p["rounds"]), unit="boosting rounds (at most) over the train split's transitions",
                  paper_steps=paper["steps"], source="Appendix G.2, Table 6",
                  note=f"early stopping after {p['early_stopping']} rounds without improvement (paper: 10)")


def _ablations(cls, config: dict, params: dict) -> tuple[tuple[str, str], ...]:
    """Table 1's axes, declared from the paper's main variant: the delta row against the state row
    with the same other settings, the WL row against the FSF row; and the WL histogram ablation
    (raw counts against L1-normalised,
    docs/papers/state-centric.md#wl-histogram-counts-or-l1-normalised; the ablation block's
    ``pool_protocols`` only drops its pool models), declared from the counts row."""
    from planarena.methods.ablations import counterparts, plain

    def view(c: dict) -> dict:
        v = plain(c, encoding="wl", model="lstm", mode="delta")
        own = dict(v.pop("model_params", None) or {})
        v["normalise"] = own.pop("normalise", None) or (get(params, f"transition_models.{v['model']}", None)
                                                        or {}).get("normalise") or "none"
        v["model_params"], v["decode"] = own, dict(v.get("decode") or {})
        return v

    me, out = view(config), []
    if me["mode"] == "delta":
        out += [(name, "mode: delta vs state") for name, _ in counterparts(cls, config, params, view, "mode")]
    if me["encoding"] == "wl":
        out += [(name, "encoding: WL vs FSF") for name, _ in counterparts(cls, config, params, view, "encoding")]
    if me["normalise"] == "none":
        out += [(name, f"WL histogram: raw counts vs {'L1-normalised' if v['normalise'] == 'l1' else v['normalise']}")
                for name, v in counterparts(cls, config, params, view, "normalise", ignore=("pool_protocols",))
                if me["encoding"] == "wl"]
    return tuple(out)


class StateCentric(Method):
    """One of the eight configurations; see the module docstring. Params block keys:
    ``encoding`` (wl|fsf), ``model`` (lstm|xgb), ``mode`` (state|delta), ``model_params`` (passed to
    the model: Table 6 defaults), ``decode`` (:class:`planarena.search.decoding.DecodeSettings`),
    ``rank_splits`` (splits for the Hit@k protocol), ``splits`` (coverage splits; default the
    evaluation splits)."""

    family = "state-centric-transition-models"
    tasks = frozenset({"plan", "rank_successors"})
    successor_protocols = ("successor_set", "pool")
    #: the per-domain encoders hold wlplan feature generators: rebuilt on each worker
    transient = ("_encoders",)
    #: LSTM training runs on this torch device (decoding stays on the CPU, in float64)
    device_param = "transition_models.device"

    def not_applicable(self, domain: str, domain_file: Path) -> str | None:
        """FSF configurations run only on the domains FSF has a design for (hand-designed per domain:
        state-centric paper, Appendix F.2, Table 5); WL configurations on any domain."""
        if self.config.get("encoding", "wl") == "fsf":
            from planarena.features.fsf import canonical_domain

            try:
                canonical_domain(domain)
            except ValueError:
                return (f"FSF features are hand-designed per domain (state-centric paper, Appendix F.2) and "
                        f"{domain} has none; the WL configurations run on it")
        return super().not_applicable(domain, domain_file)

    def unit_device(self) -> str:
        """``transition_models.device`` for the LSTM configurations; ``cpu`` for XGBoost (the
        executor then never holds an XGBoost unit back for a GPU worker)."""
        return super().unit_device() if self.model_kind == "lstm" else "cpu"

    def _fit_kwargs(self) -> dict:
        """Extra arguments of the model's ``fit``: the resolved torch device for the LSTM (called
        inside a unit, so ``auto`` resolves on the worker that trains)."""
        return {"device": self.torch_device()} if self.model_kind == "lstm" else {}

    @classmethod
    def twin_variants(cls, config: dict) -> tuple:
        """The untrained twin of an LSTM or XGBoost row (docs/concepts.md#untrained-twins); none
        for the identity floor (nothing to train) or a twin."""
        if config.get("untrained") or config.get("twin_of") or config.get("model", "lstm") == "identity":
            return ()
        return (True,)

    @classmethod
    def report_traits(cls, config: dict, params: dict) -> ReportTraits:
        """Info row: raw or normalised WL histograms (``transition_models.<lstm|xgb>.normalise``;
        the report says which ran); the candidate-pool note; the decoder's horizon (Algorithm 1:
        plans of at most ``decode.horizon`` steps). An untrained twin (``untrained: true``): the
        floor of its row's kind, with the row's decoder and horizon (:func:`twin_traits`)."""
        if config.get("untrained"):
            what = ("untrained LSTM (initial weights)" if config.get("model", "lstm") == "lstm"
                    else "uniform random scorer (an XGBoost without trees ranks every successor equal)")
            row = cls.report_traits(row_config(config), params)
            return twin_traits(row, str(config.get("twin_of") or ""), f"untrained twin: {what}")
        how = {k: (get(params, f"transition_models.{k}", {}) or {}).get("normalise") or "none" for k in ("lstm", "xgb")}
        names = {"none": "raw colour counts", "l1": "L1-normalised"}
        text = (names.get(how["lstm"], how["lstm"]) if len(set(how.values())) == 1
                else "; ".join(f"{k}: {names.get(v, v)}" for k, v in how.items()))
        wl = (f"{text} (`transition_models.<lstm|xgb>.normalise`; counts, E.3, is the default, chosen on validation "
              "splits over Stage 4's normalised histograms: see docs/papers/state-centric.md"
              "#wl-histogram-counts-or-l1-normalised)")
        own = (config.get("model_params") or {}).get("normalise")
        info = [("WL histogram (state-centric models)", wl)]
        if own and config.get("encoding", "wl") == "wl":
            info.append((f"WL histogram (blocks with `model_params.normalise: {own}`)",
                         f"{names.get(own, own)}: the histogram ablation beside the default"))
        pool = ("The state-centric WL/FSF models (state, goal; `planarena.methods.state_centric.pool`) ignore the "
                "action, so they have no Acc@k; they are trained per (protocol, domain, seed) on the same training "
                "transitions and scored on the same pools and tie-breaking draws, ranking candidates by the "
                "decoder's distance (Euclidean in delta mode, cosine in state mode) to their prediction. Pool "
                "queries are single transitions, so the LSTM runs history-free from its zero recurrent state. WL's "
                "vocabulary is collected on each task's training states only. FSF exists for Blocksworld and "
                "Logistics among these domains (the paper designs four domains), and WL/FSF features are per "
                "domain, so the transfer protocols (Multi-Domain, Cross-Domain, Leave-One-Out) have no "
                "state-centric rows.")
        decode = DecodeSettings.from_params(config.get("decode"))
        horizon = None if decode.horizon_per_object else decode.horizon  # per problem otherwise
        identity = config.get("model") == "identity"
        return ReportTraits(role="floor" if identity else "model",
                            info=tuple(info), notes=(("pool", pool),),
                            horizon=horizon, floor_group=f"{config.get('encoding', 'wl').upper()} encoding",
                            kind="decoder", budget=None if identity else _budget(config, params),
                            ablations=() if identity else _ablations(cls, config, params))

    def __init__(self, name, config, params, layout):
        # coverage splits: the block's `splits`, else `transition_models.splits` (the paper profile
        # sets Table 1's validation/interpolation/extrapolation), else `evaluation.splits`
        default_splits = get(params, "transition_models.splits", None) or get(params, "evaluation.splits")
        config = {"splits": list(default_splits), **config}
        super().__init__(name, config, params, layout)
        self.encoding = config.get("encoding", "wl")
        self.model_kind = config.get("model", "lstm")
        self.mode = config.get("mode", "delta")
        #: the untrained twin (docs/concepts.md#untrained-twins): the LSTM at the initial weights
        #: its row trains from (``torch.manual_seed(seed)``), or for XGBoost (no trees: every
        #: successor scores the same) a uniform random score, seeded per (seed, problem)
        self.untrained = bool(untrained_value(config, name))
        for key, value, allowed in (("encoding", self.encoding, ENCODINGS), ("model", self.model_kind, MODELS),
                                    ("mode", self.mode, MODES)):
            if value not in allowed:
                raise ValueError(f"params: methods.{name}.{key}={value!r}; use one of {allowed}")
        self.decode_settings = DecodeSettings.from_params(config.get("decode"))
        self._encoders: dict[str, DomainEncoder] = {}
        self._models: dict[tuple[str, int], Any] = {}
        self._facts: dict[str, Any] = {}
        self._unit_times: dict[str, float] = {}
        self.model_dir: Path | None = None

    # the LSTM's training is seeded; XGBoost's (no subsampling) is not, so it runs one seed
    @property
    def stochastic(self) -> bool:  # type: ignore[override]
        return self.model_kind == "lstm"

    @property
    def uses_params(self) -> tuple[str, ...]:  # type: ignore[override]
        shared = (f"transition_models.{self.model_kind}", "transition_models.pool", "acp",
                  "embedplan.pool_size", "embedplan.pessimistic_ties", "embedplan.test_fraction",
                  "embedplan.max_train_transitions")
        device = ("transition_models.device",) if self.model_kind == "lstm" else ()
        return shared + device + (("embed_wl",) if self.encoding == "wl" else ())

    @property
    def data_deps(self) -> tuple[str, ...]:  # type: ignore[override]
        wl = ("embeddings/wl",) if self.encoding == "wl" else ()
        return ("problems", "trajectories", *wl, *(("acp",) if self._pool_protocols() else ()))

    def model_params(self) -> dict:
        """Hyperparameters: ``transition_models.<lstm|xgb>`` (shared by the configurations, so a
        profile can change all of them at once) updated by the block's ``model_params``; whatever
        neither sets is the paper's Table 6 default (:mod:`planarena.methods.state_centric.models`)."""
        shared = dict(get(self.params, f"transition_models.{self.model_kind}", None) or {})
        return {**shared, **(self.config.get("model_params") or {})}

    # -- helpers ---------------------------------------------------------------------------------

    def encoder(self, domain: str) -> DomainEncoder:
        if domain not in self._encoders:
            self._encoders[domain] = DomainEncoder(self.encoding, domain, self.layout, self.ps)
        return self._encoders[domain]

    def _model_class(self):
        from planarena.methods.state_centric.kinds import KINDS

        return KINDS[self.model_kind]


    def _model_seed(self, seed: int) -> int:
        return seed if self.stochastic else self.seeds()[0]

    # -- training --------------------------------------------------------------------------------
    def train(self, model_dir: Path) -> dict:
        """Train one model per domain (and per seed for the LSTM); write ``<domain>/seed<k>/``.

        The (domain, seed) models, and the pool-protocol models, are independent units run through
        :func:`planarena.core.executor.run_units` (``jobs`` processes; the same models for any
        ``jobs``). A diverged or failed run of one unit is recorded in ``facts.json`` with its
        reason; the other models still train. Wall times go to ``unit_times_s`` (the train log),
        not to ``facts.json``.
        """
        from planarena.methods.state_centric.models import DivergedError
        from planarena.core.executor import run_units

        cls = self._model_class()
        hyper = self.model_params()
        if self.untrained:
            return self._train_untrained(model_dir, cls, hyper)
        facts: dict[str, Any] = {"domains": {}}
        data: dict[str, dict[str, list]] = {}
        for domain in self.ps.domains:
            enc = self.encoder(domain)
            # the block's train_problems (Method.training_problems) may keep the k smallest only
            keep = {e.problem for e in self.training_problems(domain)}
            data[domain] = {split: [enc.trajectory(t) for t in load_trajectories(self.layout.trajectories, domain, split)
                                    if split != "train" or t.problem in keep]
                            for split in ("train", "validation")}
            dom_facts: dict[str, Any] = {"dim": enc.dim, "train_trajectories": len(data[domain]["train"]),
                                         "validation_trajectories": len(data[domain]["validation"])}
            if self.encoding == "fsf":
                dom_facts["fsf_slots"] = enc.n_slots
            facts["domains"][domain] = dom_facts

        def fit(unit: tuple[str, int]) -> dict:
            domain, seed = unit
            train, validation = data[domain]["train"], data[domain]["validation"]
            if not train:
                return {"status": "failed", "reason": f"no train trajectories for {domain}"}
            out = model_dir / domain / f"seed{seed}"
            out.mkdir(parents=True, exist_ok=True)
            model = cls(mode=self.mode, dim=self.encoder(domain).dim, **hyper)
            start = time.perf_counter()
            try:
                info = {"status": "ok", **model.fit(train, validation or None, seed=seed, **self._fit_kwargs())}
                model.save(out)
            except DivergedError as exc:
                info = {"status": "diverged", "reason": str(exc)}
            info.setdefault("train_time_s", round(time.perf_counter() - start, 3))
            return info

        units = [(domain, seed) for domain in self.ps.domains for seed in self.seeds()]
        times: dict[str, float] = {}
        for (domain, seed), info in zip(units, run_units(fit, units, jobs=self.jobs, desc=f"train {self.name}",
                                                         device=self.unit_device(), on_failure=lost_unit)):
            times[f"{domain}/seed{seed}"] = info.pop("train_time_s", None)
            facts["domains"][domain][f"seed{seed}"] = without_times(info)
        facts["pool"] = self._train_pool(model_dir, cls, self.pool_model_params(), times)
        atomic_write_json(model_dir / "facts.json", facts, default=float)
        # train.json (written by the stage) gets the fingerprint-relevant summary
        reduced = {}
        if self.encoding == "wl":
            from planarena.features.wl import reductions

            reduced = reductions(self.layout, self.ps.domains)
        return {"trained": True, "models": {d: {k: v.get("status") if isinstance(v, dict) else v
                                                 for k, v in f.items() if k.startswith("seed")}
                                             for d, f in facts["domains"].items()},
                "pool": {"status": facts["pool"]["status"],
                         "runs": {k: v.get("status") for k, v in facts["pool"].get("runs", {}).items()}},
                "unit_times_s": times, **({"features_reduced": reduced} if reduced else {})}

    def _train_untrained(self, model_dir: Path, cls, hyper: dict) -> dict:
        """The untrained twin's "training": no data is read and nothing is fitted. An LSTM is
        built at the initial weights its row's :meth:`fit` starts from (``torch.manual_seed(seed)``,
        :meth:`LSTMTransitionModel.build`) and saved per (domain, seed); XGBoost saves nothing
        (its decoder scores uniformly at random, :class:`UniformScorer`). The pool-protocol models
        likewise (:meth:`_train_pool`)."""
        facts: dict[str, Any] = {"domains": {}, "untrained": True}
        for domain in self.ps.domains:
            dom: dict[str, Any] = {}
            for seed in self.seeds():
                info: dict[str, Any] = {"status": "ok", "untrained": True}
                if self.model_kind == "lstm":
                    enc = self.encoder(domain)
                    model = cls(mode=self.mode, dim=enc.dim, **hyper).build(seed=seed)
                    model.facts = {"untrained": True, "seed": int(seed)}
                    model.save(model_dir / domain / f"seed{seed}")
                    info["parameters"] = model.parameter_count()
                dom[f"seed{seed}"] = info
            facts["domains"][domain] = dom
        facts["pool"] = self._train_pool(model_dir, cls, self.pool_model_params(), {})
        atomic_write_json(model_dir / "facts.json", facts, default=float)
        return {"trained": False, "untrained": True, "reason": "untrained twin: no training",
                "models": {d: {k: v["status"] for k, v in f.items()} for d, f in facts["domains"].items()},
                "pool": {"status": facts["pool"]["status"],
                         "runs": {k: v.get("status") for k, v in facts["pool"].get("runs", {}).items()}}}

    # -- pool Hit@k (EmbedPlan protocols on the ACPBench-domain datasets) -------------------------
    def _pool_protocols(self) -> list[str]:
        from planarena.methods.state_centric.pool import POOL_PROTOCOLS
        from planarena.protocols.pool import PROTOCOLS

        protos = self.config.get("pool_protocols")
        if protos is None:
            protos = get(self.params, "transition_models.pool.protocols", list(POOL_PROTOCOLS))
        protos = list(protos or [])
        bad = [p for p in protos if p not in PROTOCOLS]
        if bad:
            raise ValueError(f"params: transition_models.pool.protocols (or methods.{self.name}.pool_protocols) "
                             f"has unknown {bad}; valid: {list(PROTOCOLS)}")
        return protos

    def pool_model_params(self) -> dict:
        """Hyperparameters of the pool-protocol models: :meth:`model_params` updated by
        ``transition_models.pool.<lstm|xgb>`` (the default profile trains these shorter: they are
        many small models, see docs/cost.md)."""
        pool = dict(get(self.params, f"transition_models.pool.{self.model_kind}", None) or {})
        return {**self.model_params(), **pool}

    def _pool_seeds(self) -> list[int]:
        # `transition_models.pool.seeds` if set, else every evaluation seed: the protocols'
        # partitions are seeded, so XGBoost needs one model per seed here even though its training
        # is deterministic
        seeds = get(self.params, "transition_models.pool.seeds", None)
        return [int(s) for s in (seeds or self.config.get("seeds") or get(self.params, "evaluation.seeds"))]

    def _pool_corpus(self):
        """``(Corpus, None)``, or ``(None, reason)`` when the pool protocol is off."""
        from planarena.datasets.acp import domains_available
        from planarena.protocols.pool import build_corpus

        if not self._pool_protocols():
            return None, "transition_models.pool.protocols is empty"
        have = set(domains_available(self.layout.acp))
        domains = [d for d in (get(self.params, "acp.domains", None) or []) if d in have]
        if not domains:
            return None, f"{self.layout.acp}: no ACP datasets for acp.domains (run the acp_data stage)"
        return build_corpus(self.layout.acp, None, domains), None

    def _pool_tasks(self, corpus):
        """``(protocol, seed, task or None, reason)`` for every pool model of the configuration."""
        from planarena.methods.state_centric.pool import NOT_APPLICABLE, fsf_supported
        from planarena.protocols.pool import protocol_tasks

        frac = float(get(self.params, "embedplan.test_fraction", 0.2))
        for protocol in self._pool_protocols():
            if protocol in NOT_APPLICABLE:
                yield protocol, None, None, NOT_APPLICABLE[protocol]
                continue
            for seed in self._pool_seeds():
                for task in protocol_tasks(corpus, protocol, seed, frac,
                                           get(self.params, "embedplan.max_train_transitions", None)):
                    reason = task.skipped or (fsf_supported(task.train_key) if self.encoding == "fsf" else None)
                    yield protocol, seed, task, reason

    def _train_pool(self, model_dir: Path, cls, hyper: dict, times: dict) -> dict:
        """Train one model per (pool protocol, seed, domain) on the protocol's training transitions
        (:mod:`planarena.methods.state_centric.pool`), as independent units; returns the facts
        (``status``, ``runs``, ``reason``) and adds each unit's seconds to ``times``."""
        from planarena.features.wl import wl_settings
        from planarena.methods.state_centric.models import DivergedError
        from planarena.methods.state_centric.pool import (
            encode_domain,
            split_validation,
            task_key,
            training_trajectories,
        )
        from planarena.core.executor import run_units

        corpus, off = self._pool_corpus()
        if corpus is None:
            return {"status": "off", "reason": off}
        frac = float(get(self.params, "transition_models.pool.validation_fraction", 0.1))
        runs: dict[str, dict] = {}
        units = []
        for protocol, seed, task, reason in self._pool_tasks(corpus):
            if task is None:
                runs[protocol] = {"status": "not applicable", "reason": reason}
            elif reason:
                runs[task_key(task, seed)] = {"status": "skipped", "reason": reason}
            else:
                units.append((task_key(task, seed), task, seed))
        acp_root, settings = self.layout.acp, wl_settings(self.params)

        def fit(unit) -> dict:
            key, task, seed = unit
            if self.untrained and self.model_kind == "xgb":   # a uniform random scorer: nothing to save
                return {"status": "ok", "untrained": True}
            out = model_dir / "pool" / key
            out.mkdir(parents=True, exist_ok=True)
            wl_file = out / "wl_feature_generator.json" if self.encoding == "wl" else None
            if wl_file is not None:
                wl_file.unlink(missing_ok=True)  # always a fresh vocabulary from this task's train rows
            start = time.perf_counter()
            try:
                phi = encode_domain(self.encoding, corpus, acp_root, task.train_key, task.train_rows, settings, wl_file)
                model = cls(mode=self.mode, dim=phi.states.shape[1], **hyper)
                if self.untrained:   # the LSTM at its initial weights (the untrained twin)
                    model.build(seed=seed).facts = {"untrained": True, "seed": int(seed)}
                    model.save(out)
                    return {"status": "ok", "untrained": True, "parameters": model.parameter_count(), **phi.facts}
                tr, va = split_validation(task.train_rows, frac, seed)
                info = model.fit(training_trajectories(phi, corpus, tr),
                                 training_trajectories(phi, corpus, va) or None, seed=seed, **self._fit_kwargs())
                model.save(out)
                info = {"status": "ok", **info, "train_transitions": int(len(tr)),
                        "validation_transitions": int(len(va)), **phi.facts}
            except DivergedError as exc:
                info = {"status": "diverged", "reason": str(exc)}
            except ValueError as exc:  # e.g. an FSF problem with more objects than slots
                info = {"status": "failed", "reason": str(exc)}
            info.setdefault("train_time_s", round(time.perf_counter() - start, 3))
            return info

        for (key, _, _), info in zip(units, run_units(fit, units, jobs=self.jobs, desc=f"train {self.name} (pool)",
                                                        device=self.unit_device(), on_failure=lost_unit)):
            times[f"pool/{key}"] = info.pop("train_time_s", None)
            runs[key] = without_times(info)
        return {"status": "ok", "runs": dict(sorted(runs.items()))}

    def pool_records(self, done: set, fingerprint: str, train_facts: dict):
        """Pool Hit@1/5/10 records (one per protocol, domain, seed; ``problem`` = the encoding),
        scored on the same pools as EmbedPlan (:func:`planarena.protocols.pool.pool_ranks`) through
        the shared loop :func:`planarena.protocols.pool.task_records`. A model that diverged or
        failed to train gives a record with that outcome and no metrics."""
        from planarena.methods.state_centric.kinds import load_transition_model
        from planarena.methods.state_centric.pool import (
            encode_domain,
            pool_scores,
            predict_targets,
            task_key,
        )
        from planarena.protocols.pool import PoolModel, pool_ranks, task_records

        corpus, off = self._pool_corpus()
        if corpus is None:
            print(f"evaluate {self.name}: pool Hit@k off: {off}")
            return
        runs = ((getattr(self, "_facts", None) or {}).get("pool") or {}).get("runs") or {}
        pool = int(get(self.params, "embedplan.pool_size", 128))
        pessimistic = bool(get(self.params, "embedplan.pessimistic_ties", False))
        metric = self.decode_settings.resolved_metric(self.mode)
        model_dir = self.model_dir or (self.layout.models / self.name)
        label = {"wl": "WL (ILG)", "fsf": "FSF"}[self.encoding]
        acp_root = self.layout.acp
        for protocol, seed, task, reason in self._pool_tasks(corpus):
            if task is None or reason:
                continue
            key = task_key(task, seed)
            run = runs.get(key)

            def load(task=task, seed=seed, key=key, run=run) -> PoolModel:
                extra = {"encoder": label, "inputs": "state, goal", "pool_size": pool, "metric": metric,
                         "history": "none (one-step queries from the zero recurrent state)"
                         if self.model_kind == "lstm" else "none (Markov model)",
                         **{k: run[k] for k in ("epochs", "best_epoch", "rounds", "tree_nodes", "parameters", "dim")
                            if run and k in run}}
                if run is None:
                    return PoolModel("error", f"no trained pool model {key}; run the train stage", extra=extra)
                if run.get("status") != "ok":
                    return PoolModel("diverged" if run.get("status") == "diverged" else "error",
                                     run.get("reason", "training failed"), extra=extra)
                if self.untrained and self.model_kind == "xgb":   # the twin's uniform random scores
                    rng = np.random.default_rng(derive_seed(seed, "uniform-pool-scores", key))

                    def rank_uniform(test, rng=rng):
                        ranks, sizes, _ = pool_ranks(corpus.table, test.rows, lambda b, cand: rng.random(cand.shape),
                                                     pool_size=pool, distractors=test.distractors, seed=seed,
                                                     pessimistic_ties=pessimistic)
                        return ranks, sizes, {}

                    return PoolModel("solved", None, rank_uniform, {**extra, "inputs": "none (uniform random scores)"})
                out = model_dir / "pool" / key
                model = load_transition_model(out)
                phi = encode_domain(self.encoding, corpus, acp_root, task.train_key,
                                    wl_file=out / "wl_feature_generator.json" if self.encoding == "wl" else None)

                def rank(test):
                    targets = predict_targets(model, phi, corpus, test.rows)
                    scorer = pool_scores(targets, phi, metric, corpus.trans_problem[test.rows])
                    ranks, sizes, _ = pool_ranks(corpus.table, test.rows, scorer,
                                                 pool_size=pool, distractors=test.distractors, seed=seed,
                                                 pessimistic_ties=pessimistic)
                    return ranks, sizes, {}

                return PoolModel("solved", None, rank, extra)

            yield from task_records(self, task, protocol, seed, self.encoding, done, fingerprint, train_facts, load)

    def load(self, model_dir: Path) -> None:
        self.model_dir = Path(model_dir)
        f = self.model_dir / "facts.json"
        self._facts = json.loads(f.read_text()) if f.exists() else {"domains": {}}
        log = self.layout.train_log(self.name)
        self._unit_times = (json.loads(log.read_text()).get("unit_times_s") or {}) if log.exists() else {}

    def _model(self, domain: str, seed: int):
        """The trained model for (domain, seed), or an Attempt-worthy failure string."""
        key = (domain, self._model_seed(seed))
        if key not in self._models:
            info = self._facts.get("domains", {}).get(domain, {}).get(f"seed{key[1]}")
            if info is None:
                self._models[key] = f"no trained model for {domain} (seed {key[1]}); run the train stage"
            elif info.get("status") != "ok":
                self._models[key] = (info.get("status", "failed"), info.get("reason", "training failed"))
            elif self.untrained and self.model_kind == "xgb":
                self._models[key] = UNIFORM
            else:
                self._models[key] = self._model_class().load(self.model_dir / domain / f"seed{key[1]}")
        return self._models[key]

    def _cost_extra(self, domain: str, seed: int) -> dict:
        s = self._model_seed(seed)
        info = self._facts.get("domains", {}).get(domain, {}).get(f"seed{s}", {})
        out = {k: info[k] for k in ("parameters", "tree_nodes") if k in info}
        seconds = self._unit_times.get(f"{domain}/seed{s}")  # from the train log (absent: unknown)
        return {**out, "train_time_s": seconds} if seconds is not None else out

    # -- plan ------------------------------------------------------------------------------------
    lockstep = True

    def solve(self, task: PlanningTask, seed: int) -> Attempt:
        """Beam-decode a plan (Algorithm 1): :meth:`solve_batch` of one task."""
        return self.solve_batch([task], seed)[0]

    def solve_batch(self, tasks: list[PlanningTask], seed: int) -> list[Attempt]:
        """Beam-decode every task (one domain) in lockstep (:func:`~planarena.search.decoding.decode_lockstep`):
        one model call and one embedding call per step for all their beams. Outcome diverged/error
        for every task if the model did not train; ``unsolved`` for a problem that cannot be
        encoded (e.g. an FSF problem with more objects than slots). ``wall_time`` is each
        problem's share of the decoding time."""
        from planarena.core.pddl import goal_atoms

        domains = {t.entry.domain for t in tasks}
        if len(domains) != 1:
            raise ValueError(f"solve_batch: tasks of one domain expected, got {sorted(domains)}")
        domain = domains.pop()
        model = self._model(domain, seed)
        if isinstance(model, tuple):
            return [Attempt("diverged" if model[0] == "diverged" else "error", failure_reason=model[1]) for _ in tasks]
        if isinstance(model, str):
            return [Attempt("error", failure_reason=model) for _ in tasks]
        attempts: list[Attempt | None] = [None] * len(tasks)
        batch, encoders, problems = [], [], []
        for k, task in enumerate(tasks):
            problem = load_problem(str(task.domain_file), str(task.problem_file))
            try:
                enc = self.encoder(domain).for_problem(task.problem_file, goal_atoms(problem))
                enc.goal()
            except ValueError as exc:  # e.g. an FSF problem with more objects than slots
                attempts[k] = Attempt("unsolved", failure_reason=f"cannot encode: {exc}")
                continue
            batch.append(k)
            encoders.append(enc)
            problems.append(problem)
        if batch:
            if model is UNIFORM:
                scorer = UniformScorer(seed, [tasks[k].entry.problem for k in batch])
            else:
                scorer = TransitionScorer(model, self.encoder(domain).split(encoders, problems),
                                          self.decode_settings.resolved_metric(self.mode))
            todo = [DecodeProblem(p, tasks[k].entry.objects, tasks[k].time_limit) for k, p in zip(batch, problems)]
            cost = self._cost_extra(domain, seed)
            for k, res in zip(batch, decode_lockstep(todo, scorer, self.decode_settings)):
                attempts[k] = Attempt(res.outcome, res.plan, failure_reason=res.reason, wall_time=res.wall_s,
                                      extra={"steps": res.steps, "time_per_step_s": round(res.time_per_step_s, 5),
                                             "cpu_time_s": round(res.time_s, 4),
                                             "decode": self.decode_settings.__dict__, **cost})
        return attempts  # type: ignore[return-value]

    # -- rank_successors -------------------------------------------------------------------------
    def rank(self, traj: Trajectory, seed: int) -> dict:
        """Teacher-forced successor ranking (Hit@1/3/5) along a reference trajectory."""
        model = self._model(traj.domain, seed)
        if model is UNIFORM:
            problem = load_problem(str(self.ps.domain_file(traj.domain)), str(self.ps.root / traj.problem_file))
            return {**rank_uniformly(problem, traj.actions, seed, traj.problem), "inputs": "none (uniform random scores)"}
        if not hasattr(model, "step"):
            reason = model[1] if isinstance(model, tuple) else model
            raise RuntimeError(reason)
        problem = load_problem(str(self.ps.domain_file(traj.domain)), str(self.ps.root / traj.problem_file))
        enc = self.encoder(traj.domain).for_problem(self.ps.root / traj.problem_file, traj.goal)
        out = rank_successors_along(problem, traj.actions, enc, model, self.mode,
                                    self.decode_settings.metric)
        out["inputs"] = "state, goal"
        return out
