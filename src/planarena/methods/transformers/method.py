"""The symmetry-aware transformers and PlanGPT as registry methods (method ``satr``).

Source: Fritzsche, Gestrin, Seipp, "Symmetry-Aware Transformer Training for Automated Planning"
(docs/papers/symmetry-aware-transformers.md). One params block per leaderboard column of Table 1 /
Table E.4:

* ``arch: encoder`` (``satr_encoder_cl`` / ``_nocl``): the heuristic model (Section 4, Figure 1),
  trained on h* (Rename-One), planning by greedy heuristic guidance (Algorithm 4,
  :mod:`planarena.methods.transformers.guidance`).
* ``arch: encdec`` (``satr_encdec_{cl,nocl}_<decoding>``): the SATr encoder-decoder, trained by
  token cross-entropy on uniformly drawn optimal plans (Rename-Both).
* ``arch: plangpt`` (``plangpt_{cl,nocl}_<decoding>``): the decoder-only baseline (Section 2).
* ``contrastive``: with or without L_att + L_hid (Section 4); ``decoding`` (plan generators):
  ``greedy`` | ``applicable`` | ``regrounding`` (Algorithms 1-3,
  :mod:`planarena.methods.transformers.decode`).

Train stage: one model per (domain, seed), independent units over ``jobs`` processes, trained on
the suite's ``train`` split (:mod:`planarena.methods.transformers.data`: every training problem's
full state space, or its reference plan where the space exceeds ``transformers.max_states``; the
facts record how many of each; ``max_states: null``, the paper profile, expands every one in
full, Appendix C). The checkpoint kept is the best on the ``validation`` split by
coverage (Algorithm 4 for the encoder), then fewer problems that ended without the goal (the token
cap; also an ``<EOS>`` before the goal or a cycle), fewer inapplicable, fewer malformed actions,
then (plan generators) the teacher-forced token accuracy and L_pred on validation pairs (Section
E2's six criteria, in its order), then the later step. Section E2 scores coverage with greedy
decoding for every strategy; here (``transformers.select_with: own``, the default) each decoding
strategy keeps its own checkpoint, selected on its own coverage (``model.<strategy>.pt``), and
``select_with: greedy`` is the paper's. The blocks of one (arch, contrastive) differ only in
decoding, so the model is trained once: the train stage stores it in a content-addressed cache
(``data/cache/transformers/<key>``, key = the family's code, the ``transformers`` params, arch,
loss, seeds and the data) and the other blocks copy it.

A run whose loss becomes NaN or spikes to a plateau is *diverged* (Figure E.1): its facts record
the step; its best checkpoint before the divergence, if any, is evaluated (as the paper's are: the
diverged VisitAll encoders of Table E.9 still have coverage in Table E.4), and every record carries
``diverged_at``; without one every attempt is outcome ``diverged``.

Evaluation: all problems of a (domain, split) decode together in lockstep. Object names are renamed
at random (seeded by the evaluation seed and the problem), as the paper does for every input. A
problem with more objects than ``max_objects`` is unsolved with that reason (the paper's
fixed-vocabulary limit, Section 6).

Untrained twin (``untrained: true``, docs/concepts.md#untrained-twins): the train stage expands no
state space and fits nothing; each (domain, seed) unit saves the network at the initial weights its
row trains from (``torch.manual_seed(seed)`` over the same vocabulary), decoded with the row's
strategy, renaming, caps and limits (no checkpoint selection).
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from planarena.config import get, torch_device
from planarena.core.io import atomic_write_json, derive_seed
from planarena.core.pddl import load_problem, static_atoms
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
from planarena.methods.units import save_unit, train_units, unit_failure

FAMILY = "symmetry-aware-transformers"
ARCHS = ("encoder", "encdec", "plangpt")
TITLES = {"encoder": "SATr encoder", "encdec": "SATr encoder-decoder", "plangpt": "PlanGPT"}


@dataclass(frozen=True)
class Settings:
    """The ``transformers`` params of one architecture: ``model`` the model sizes (dict),
    ``train`` a :class:`~planarena.methods.transformers.train.TrainConfig`, ``max_objects`` object
    names, ``max_states`` the largest training state space expanded (None: no cap, every training
    problem is expanded in full as Appendix C says: "we fully expand each training instance",
    symmetry-aware-transformers.txt line 319), ``horizon`` Algorithm 4's
    action cap, ``max_tokens`` Algorithms 1-3's token cap (Section 5: 500), ``device`` the torch
    device of training and inference (``cpu``; ``cuda`` for the paper profile on a GPU),
    ``select_with`` the plan generators' decoding strategy of checkpoint selection: ``own`` (the
    default) keeps one checkpoint per strategy, each selected on its own coverage, and each decoding
    row plans with its strategy's; ``greedy`` is Section E2's (every row decodes the checkpoint
    selected with greedy coverage); ``applicable`` or ``regrounding`` select every row's on that
    strategy's coverage. ``select_strategies`` (``own`` only): the strategies validated and kept
    (None: all three); a run that decodes with some of them (a claim's rows) validates only those,
    each validation decoding every validation problem once per strategy."""

    model: dict
    train: Any
    max_objects: int
    max_states: int | None
    horizon: int
    max_tokens: int
    device: str = "cpu"
    select_with: str = "own"
    select_strategies: tuple[str, ...] | None = None


#: Appendix E2 (main experiments), for every architecture: "each epoch consisted of 100000 sampled
#: states and plans and a batch size of 64 was used. The maximum number of epochs was set to 70,
#: with a timeout of 12 hours"
PAPER_EPOCHS, PAPER_EPOCH_SAMPLES, PAPER_BATCH = 70, 100_000, 64
#: The shared model cache's file of training wall times (not copied into the model folder)
TIMES = "train_times.json"
#: Validation pairs scored for the accuracy / loss criteria of checkpoint selection (Section E2)
VALIDATION_SAMPLES = 64
#: Failures of checkpoint selection's second tier: the plan ended without the goal though every
#: action was well formed and applicable (token cap, horizon, <EOS> before the goal, a cycle)
STOPPED = ("token_cap", "horizon", "eos_before_goal", "cycle")
#: TrainConfig's steps / batch where the params set none (planarena.methods.transformers.train)
TRAIN_DEFAULTS = {"steps": 600, "batch": 32}


def vocabulary(domain_file, problem_file, spaces, max_objects: int) -> dict:
    """The JSON-able vocabulary of a domain: predicates and their largest arity, action schemas (from
    ``problem_file``'s domain), the object types of every training space ``spaces`` (PlanGPT's type
    tokens) and ``max_objects`` (the object-name tokens, Section 4)."""
    from planarena.methods.transformers.plangpt import object_types

    dom = load_problem(str(domain_file), str(problem_file)).get_domain()
    preds = sorted({(p.get_name(), p.get_arity()) for p in dom.get_predicates()})
    return {"predicates": [p for p, _ in preds], "max_arity": max((a for _, a in preds), default=0),
            "actions": sorted(a.get_name().lower() for a in dom.get_actions()),
            "types": sorted({t for sp in spaces for t in object_types(sp.objects, sp.static).values()}),
            "max_objects": int(max_objects)}


def build_model(arch: str, vocab: dict, model_cfg: dict):
    """``(model, tokens)`` of ``arch`` (``encoder``, ``encdec``, ``plangpt``) for ``vocab``
    (:func:`vocabulary`) and the ``transformers.model`` params ``model_cfg``; the weights are drawn
    from torch's global generator (seed it first for reproducible initial weights)."""
    from planarena.methods.transformers.decoders import PlanGPT, PlanGPTConfig, SATrEncDec
    from planarena.methods.transformers.model import EncoderConfig, SATrEncoder
    from planarena.methods.transformers.plangpt import PlanGPTVocabulary
    from planarena.methods.transformers.tokens import ActionVocabulary, AtomVocabulary

    m = vocab["max_objects"]
    if arch == "plangpt":
        v = PlanGPTVocabulary(tuple(vocab["predicates"]), tuple(vocab["actions"]), tuple(vocab["types"]), m)
        cfg = {k: model_cfg[k] for k in ("d", "layers", "heads", "ff", "k", "dropout", "max_positions") if k in model_cfg}
        return PlanGPT(v.size, PlanGPTConfig(**cfg)), v
    atoms = AtomVocabulary(tuple(vocab["predicates"]), int(vocab["max_arity"]), m)
    cfg = EncoderConfig(**{k: v for k, v in model_cfg.items() if k != "max_positions"})
    if arch == "encoder":
        return SATrEncoder(atoms.size, atoms.width, cfg), atoms
    actions = ActionVocabulary(tuple(vocab["actions"]), m)
    return SATrEncDec(atoms.size, atoms.width, actions.size, cfg), (atoms, actions)


def _budget(arch: str, params: dict) -> Budget:
    """The budget of the one model that every decoding row of (arch, loss) shares: optimisation
    steps x batch of ``transformers.train`` updated by ``transformers.by_arch.<arch>.train``."""
    t = get(params, "transformers", {}) or {}
    over = ((t.get("by_arch") or {}).get(arch) or {}).get("train") or {}
    train = {**TRAIN_DEFAULTS, **(t.get("train") or {}), **over}
    steps, batch = int(train["steps"]), int(train["batch"])
    paper_samples = PAPER_EPOCHS * PAPER_EPOCH_SAMPLES
    return Budget(steps=steps, batch=batch, samples=steps * batch,
                  unit="optimiser steps x batch of sampled (state, plan or h*) examples",
                  paper_steps=paper_samples // PAPER_BATCH, paper_batch=PAPER_BATCH, paper_samples=paper_samples,
                  source="Appendix E2",
                  note="one model per (domain, seed) serves every decoding row; the paper's is at most 70 epochs "
                       "x 100,000 samples (12 h timeout); each example is also seen renamed (a pair)")


def _ablations(cls, config: dict, params: dict) -> tuple[tuple[str, str], ...]:
    """The contrastive-loss ablation (Section 6, Appendix E2: with and without L_att + L_hid, for
    every architecture), declared from the row with the loss: the row without it that has the
    same architecture and decoding."""
    from planarena.methods.ablations import counterparts, plain

    def view(c: dict) -> dict:
        v = plain(c, arch="encoder", contrastive=True, decoding="greedy")
        v["contrastive"] = bool(v["contrastive"])
        if v["arch"] == "encoder":
            v.pop("decoding")  # Algorithm 4 only: the encoder ignores it
        return v

    if not view(config)["contrastive"]:
        return ()
    return tuple((name, "contrastive loss: with vs without")
                 for name, _ in counterparts(cls, config, params, view, "contrastive"))


class SATr(Method):
    """Symmetry-aware transformer configurations (params block keys: ``arch``, ``contrastive``,
    ``decoding``, ``seeds``, ``splits``; sizes and schedules from the ``transformers`` section,
    with per-architecture overrides under ``transformers.by_arch.<arch>``)."""

    family = FAMILY
    device_param = "transformers.device"
    tasks = frozenset({"plan"})
    lockstep = True
    uses_params = ("transformers",)
    data_deps = ("problems", "trajectories")

    @classmethod
    def report_traits(cls, config: dict, params: dict) -> ReportTraits:
        if config.get("untrained"):   # the untrained twin: its row's decoder, caps and kind, a floor
            return twin_traits(cls.report_traits(row_config(config), params), str(config.get("twin_of") or ""),
                               "untrained twin: initial weights, no checkpoint selection")
        arch = config.get("arch", "encoder")
        how = "with" if config.get("contrastive", True) else "without"
        strategy = "heuristic guidance" if arch == "encoder" else config.get("decoding", "greedy")
        info = (("Symmetry-aware transformers",
                 "atom-level tokens, random object renaming, no positional encoding, shared layer weights, "
                 "no layer norm; the encoder plans by greedy heuristic guidance (Algorithm 4), the encoder-decoder "
                 "and PlanGPT generate plans token by token (Algorithms 1-3: greedy, applicable-filtered, "
                 "regrounding); `*_cl` train with the contrastive loss, `*_nocl` without"),
                ("PlanGPT", "decoder-only GPT-2 baseline: sorted atoms, learned absolute positions, type-based random "
                            "object renaming"))
        horizon = int(get(params, "transformers.horizon", 100)) if arch == "encoder" else None
        # the encoder is a learned heuristic followed greedily (Algorithm 4): a policy; the others
        # generate the plan token by token
        t = get(params, "transformers", {}) or {}
        max_objects = int(t.get("max_objects", 64))
        max_tokens = None if arch == "encoder" else int(t.get("max_tokens", 500))
        return ReportTraits(role="model", variant=f"{TITLES.get(arch, arch)} {how} CL, {strategy}", info=info,
                            horizon=horizon, max_objects=max_objects, max_tokens=max_tokens,
                            selected_on="validation",   # Section E2: the best checkpoint on validation
                            kind="policy" if arch == "encoder" else "decoder",
                            budget=_budget(arch, params), ablations=_ablations(cls, config, params))

    def __init__(self, name, config, params, layout):
        splits = get(params, "transformers.splits", None) or get(params, "evaluation.splits")
        config = {"splits": list(splits), **config}
        super().__init__(name, config, params, layout)
        self.arch = config.get("arch", "encoder")
        if self.arch not in ARCHS:
            raise ValueError(f"params: methods.{name}.arch={self.arch!r}; one of {', '.join(ARCHS)}")
        self.contrastive = bool(config.get("contrastive", True))
        from planarena.methods.transformers.decode import STRATEGIES

        self.decoding = config.get("decoding", "guidance" if self.arch == "encoder" else "greedy")
        allowed = ("guidance",) if self.arch == "encoder" else STRATEGIES
        if self.decoding not in allowed:
            raise ValueError(f"params: methods.{name}.decoding={self.decoding!r}; arch {self.arch} decodes with "
                             f"{', '.join(allowed)}")
        select_with = (get(params, "transformers", {}) or {}).get("select_with", "own")
        if select_with not in (*STRATEGIES, "own"):  # the raw param: settings() also resolves the device
            raise ValueError(f"params: transformers.select_with={select_with!r}; one of own, {', '.join(STRATEGIES)}")
        chosen = (get(params, "transformers", {}) or {}).get("select_strategies")
        if chosen is not None:
            if not isinstance(chosen, (list, tuple)) or not chosen or set(chosen) - set(STRATEGIES):
                raise ValueError(f"params: transformers.select_strategies={chosen!r}; a non-empty list of "
                                 f"{', '.join(STRATEGIES)} (or null: all)")
            if (select_with == "own" and self.arch != "encoder" and self.decoding not in chosen
                    and not untrained_value(config, name)):
                raise ValueError(f"params: methods.{name} decodes with {self.decoding}, which "
                                 f"transformers.select_strategies={list(chosen)} does not validate")
        #: the untrained twin (docs/concepts.md#untrained-twins): the network at the initial weights
        #: its row trains from (``torch.manual_seed(seed)``, the same vocabulary), the same decoder,
        #: renaming, caps and limits; no training, no checkpoint selection
        self.untrained = bool(untrained_value(config, name))
        self._models: dict[tuple[str, int], Any] = {}
        self._facts: dict = {}
        self.model_dir: Path | None = None

    def model_name(self) -> str:
        """The trained model this block decodes with, e.g. ``"PlanGPT without CL"`` (one per
        (architecture, loss); the blocks of its decoding strategies share it); an untrained twin's
        is ``"... untrained"`` (the loss does not matter without training)."""
        if self.untrained:
            return f"{TITLES[self.arch]} untrained"
        return f"{TITLES[self.arch]} {'with' if self.contrastive else 'without'} CL"

    # -- settings --------------------------------------------------------------------------------
    def settings(self) -> Settings:
        """This architecture's :class:`Settings` from the ``transformers`` params section."""
        from planarena.methods.transformers.train import TrainConfig

        t = get(self.params, "transformers", {}) or {}
        over = ((t.get("by_arch") or {}).get(self.arch) or {})
        model = {**(t.get("model") or {}), **(over.get("model") or {})}
        train = {**(t.get("train") or {}), **(over.get("train") or {})}
        train_cfg = TrainConfig(**{**train, "contrastive": self.contrastive, "rename_one": self.arch == "encoder"})
        device = torch_device(t.get("device", "cpu"), "transformers.device")
        max_states = t.get("max_states", 20000)
        select_with = str(t.get("select_with", "own"))
        chosen = t.get("select_strategies")
        return Settings(model, train_cfg, int(t.get("max_objects", 64)), None if max_states is None else int(max_states),
                        int(t.get("horizon", 100)), int(t.get("max_tokens", 500)), device, select_with,
                        None if chosen is None else tuple(chosen))



    def _problems(self, domain: str, split: str) -> list:
        return [load_problem(str(self.ps.domain_file(domain)), str(self.ps.problem_file(e)))
                for e in self.ps.select(domain=domain, split=split)]

    # -- models ----------------------------------------------------------------------------------
    def _vocabulary(self, domain: str, spaces) -> dict:
        """The JSON-able vocabulary of ``domain`` (:func:`vocabulary`; its first training problem)."""
        return vocabulary(self.ps.domain_file(domain),
                          self.ps.problem_file(self.ps.select(domain=domain, split="train")[0]), spaces,
                          self.settings().max_objects)

    def _build(self, vocab: dict):
        """``(model, tokens)`` of this architecture for ``vocab`` (:func:`build_model`)."""
        return build_model(self.arch, vocab, self.settings().model)

    def _training_data(self, domain: str) -> tuple[list, dict]:
        """Training spaces of ``domain`` and their facts: every train problem's full state space,
        else (space above ``max_states``) its reference-plan chain (:func:`data.trajectory_space`)."""
        from planarena.core.trajectories import load_trajectories
        from planarena.methods.transformers.data import expand, trajectory_space

        max_states = self.settings().max_states
        plans = {t.problem: t for t in load_trajectories(self.layout.trajectories, domain, "train")}
        spaces, notes = [], []
        for e in self.training_problems(domain):
            try:
                spaces.append(expand(self.ps.domain_file(domain), self.ps.problem_file(e), max_states))
            except Exception as exc:  # SkipProblem (too large, unsolvable): fall back to the reference plan
                traj = plans.get(e.problem)
                if traj is None or not traj.actions:
                    notes.append(f"{e.problem}: {exc}; no reference plan")
                    continue
                problem = load_problem(str(self.ps.domain_file(domain)), str(self.ps.problem_file(e)))
                spaces.append(trajectory_space(traj, [str(o) for o in problem.get_objects()]))
                notes.append(f"{e.problem}: {exc}; reference plan used ({'optimal' if traj.optimal else 'not known optimal'})")
        facts = {"train_problems": len(spaces),
                 "from_state_space": sum(s.source == "state space" for s in spaces),
                 "from_reference_plan": sum(s.source == "reference plan" for s in spaces),
                 "train_states": sum(len(s.states) for s in spaces), "data_notes": notes}
        return spaces, facts

    def _validation_batch(self, domain: str, seed: int, tokens) -> dict | None:
        """A fixed batch of renamed (state, plan) pairs from the validation problems' reference plans
        (every state of each plan, with its plan suffix, at most ``VALIDATION_SAMPLES``; seeded), for
        the accuracy and loss criteria; None without reference plans of the validation split (the
        ``plan`` stage's ``planners.splits`` lacks it) or for the encoder."""
        from planarena.core.trajectories import load_trajectories
        from planarena.methods.transformers.batches import PlanBatches
        from planarena.methods.transformers.data import trajectory_space

        if self.arch == "encoder":
            return None
        spaces = []
        for traj in load_trajectories(self.layout.trajectories, domain, "validation"):
            if traj.actions:
                entry = next(e for e in self.ps.select(domain=domain, split="validation") if e.problem == traj.problem)
                problem = load_problem(str(self.ps.domain_file(domain)), str(self.ps.problem_file(entry)))
                if len(problem.get_objects()) <= self.settings().max_objects:
                    spaces.append(trajectory_space(traj, [str(o) for o in problem.get_objects()]))
        if not spaces:
            return None
        rng = np.random.default_rng(derive_seed(seed, "satr-validation-batch", domain))
        n = min(VALIDATION_SAMPLES, sum(len(s.states) for s in spaces))
        return PlanBatches(self.arch, tokens, spaces).draw(n, rng)

    def _validator(self, domain: str, seed: int, tokens):
        """``validate(model) -> score tuple`` on the domain's validation split, higher is better (a
        dict of them, one per decoding strategy, under ``select_with: own``: each strategy keeps its
        own checkpoint), in Section E2's order: coverage of the selection strategy (the encoder
        always plans by Algorithm 4), then fewer problems that ended without the goal while every
        action was well formed and applicable (the token cap, Section E2's second criterion, and
        here also an ``<EOS>`` before the goal and a return to a visited state: counted nowhere, a
        checkpoint that stops early outranked one that runs on to the cap), fewer with an
        inapplicable action, fewer with a malformed action, then (plan generators with validation
        reference plans) teacher-forced token accuracy and lower L_pred on a fixed batch of
        validation pairs (:func:`~planarena.methods.transformers.train.teacher_forced`). None
        without validation problems."""
        from planarena.methods.transformers.decode import STRATEGIES
        from planarena.methods.transformers.train import teacher_forced

        problems = self._problems(domain, "validation")
        if not problems:
            return None
        batch = self._validation_batch(domain, seed, tokens)
        select_with = self.settings().select_with
        own = tuple(s for s in STRATEGIES if s in (self.settings().select_strategies or STRATEGIES))
        strategies = ("greedy",) if self.arch == "encoder" else own if select_with == "own" else (select_with,)

        def score(model, strategy: str) -> tuple:
            results = self._plan(model, tokens, problems, seed, [float("inf")] * len(problems), strategy)
            n = len(results)
            fail = [getattr(r, "failure", None) or r.reason or "" for r in results]
            solved = sum(r.outcome == "solved" for r in results) / n
            stopped = sum(any(w in f for w in STOPPED) for f in fail) / n
            invalid = sum("inapplicable" in f for f in fail) / n
            malformed = sum("malformed" in f for f in fail) / n
            return (solved, -stopped, -invalid, -malformed)

        def validate(model):
            tf = () if batch is None else tuple(round(v, 6) * s for v, s in zip(teacher_forced(model, batch), (1, -1)))
            scores = {s: score(model, s) + tf for s in strategies}
            return scores if select_with == "own" and self.arch != "encoder" else next(iter(scores.values()))

        return validate

    def _train_key(self) -> str:
        """Content key of this block's training (everything but ``decoding``)."""
        from planarena.core.fingerprint import folder_hash
        from planarena.methods.units import training_key

        return training_key({"arch": self.arch, "contrastive": self.contrastive, "seeds": self.seeds(),
                             "train_problems": self.config.get("train_problems"),
                             "transformers": get(self.params, "transformers", {}),
                             "problems": folder_hash(self.layout.problems),
                             "trajectories": folder_hash(self.layout.trajectories)},
                            "planarena.methods.transformers", ("method", "train", "decode", "guidance"))

    def _train_untrained(self, model_dir: Path) -> dict:
        """The untrained twin: per (domain, seed) the network its row would start training from
        (``torch.manual_seed(seed)`` before building it, over the same vocabulary: the training
        problems' predicates, actions and, for PlanGPT, object types), saved as the unit's
        checkpoint. No state space is expanded, nothing is fitted or selected."""
        import torch

        from planarena.methods.transformers.model import count_parameters

        facts: dict = {"domains": {}, "untrained": True}
        for domain in self.ps.domains:
            problems = [load_problem(str(self.ps.domain_file(domain)), str(self.ps.problem_file(e)))
                        for e in self.training_problems(domain)]
            # what the vocabulary reads of the training spaces: objects and static atoms
            spaces = [_Objects([str(o) for o in p.get_objects()], static_atoms(p)) for p in problems]
            facts["domains"][domain] = {}
            for seed in self.seeds():
                if not spaces:
                    info = {"status": "no data", "reason": f"no training problem of {domain} (the vocabulary)"}
                    save_unit(model_dir / domain / f"seed{seed}", None, info)
                else:
                    vocab = self._vocabulary(domain, spaces)
                    torch.manual_seed(seed)
                    model, _ = self._build(vocab)
                    info = {"status": "ok", "untrained": True, "steps_run": 0, "diverged_at": None, "best_step": None,
                            "parameters": count_parameters(model), "vocabulary": vocab, "checkpoint": True,
                            "train_problems": len(spaces)}
                    save_unit(model_dir / domain / f"seed{seed}", model.state_dict(), info)
                facts["domains"][domain][f"seed{seed}"] = info
        atomic_write_json(model_dir / "facts.json", facts, default=float)
        return {"trained": False, "untrained": True, "reason": "untrained twin: no training",
                "models": _statuses(facts)}

    def train(self, model_dir: Path) -> dict:
        """One model per (domain, seed); ``facts.json`` per model (status, steps, divergence step,
        kept checkpoint, parameters, training data), or a copy from the shared model cache. The
        untrained twin trains nothing (:meth:`_train_untrained`)."""
        if self.untrained:
            return self._train_untrained(model_dir)
        cache = self.layout.cache / "transformers" / self._train_key()
        if (cache / "facts.json").exists():
            shutil.copytree(cache, model_dir, dirs_exist_ok=True, ignore=shutil.ignore_patterns(TIMES))
            facts = json.loads((cache / "facts.json").read_text())
            # every row decoding the shared model shows that model's training time (the row that
            # trained it is not charged alone); the train log keeps it, train.json stays time-free
            times = json.loads((cache / TIMES).read_text()) if (cache / TIMES).exists() else {}
            return {"trained": True, "from_cache": cache.name, "models": _statuses(facts), **times}

        def fit(unit: tuple[str, int]) -> dict:
            import torch

            from planarena.methods.transformers.batches import PairBatches, PlanBatches
            from planarena.methods.transformers.model import count_parameters
            from planarena.methods.transformers.train import train_generator, train_heuristic

            domain, seed = unit
            # built on the worker, once per domain (state spaces are pymimir objects: they do not travel)
            spaces, dfacts = self.memo(("training data", domain), lambda: self._training_data(domain))
            if not spaces:
                return {"status": "no data", "reason": f"no training problem of {domain} has a state space or a "
                                                        f"reference plan ({'; '.join(dfacts['data_notes'])})"}
            torch.set_num_threads(1)
            vocab = self._vocabulary(domain, spaces)
            torch.manual_seed(seed)
            model, tokens = self._build(vocab)
            model.to(self.settings().device)
            cfg = self.settings().train
            validate = self._validator(domain, seed, tokens)
            if self.arch == "encoder":
                res = train_heuristic(model, PairBatches(tokens, spaces), cfg, seed, validate)
            else:
                res = train_generator(model, PlanBatches(self.arch, tokens, spaces), cfg, seed, validate)
            select_with = self.settings().select_with
            # one checkpoint per decoding strategy under `select_with: own` (model.<strategy>.pt)
            own = {k: v for k, v in res.best.items() if k} if select_with == "own" else {}
            info = {"status": res.status, "steps_run": res.steps_run, "diverged_at": res.diverged_at,
                    "best_step": res.best_step, "best_score": list(res.best_score) if res.best_score else None,
                    "final_loss": res.losses[-1] if res.losses else None, "parameters": count_parameters(model),
                    **dfacts, "vocabulary": vocab, "checkpoint": res.state is not None,
                    "selected_with": "heuristic guidance" if self.arch == "encoder" else select_with,
                    **({"selection": {k: {"best_step": step, "best_score": list(score)}
                                      for k, (score, step, _) in own.items()}} if own else {}),
                    "evaluations": res.evaluations}
            out = model_dir / domain / f"seed{seed}"
            save_unit(out, res.state, info)
            for strategy, (_, _, state) in own.items():
                torch.save({k: v.cpu() for k, v in state.items()}, out / f"model.{strategy}.pt")
            return {**info, "train_time_s": res.seconds}

        # finished units wait in <cache>.units until every unit is done (a killed stage resumes there)
        units = cache.with_name(cache.name + ".units")
        facts, times = train_units(fit, self.ps.domains, self.seeds(), self.jobs, f"train {self.name}",
                                   device=self.unit_device(), model_dir=model_dir, keep=units)
        atomic_write_json(model_dir / "facts.json", facts, default=float)
        tmp = cache.with_name(cache.name + ".tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        shutil.copytree(model_dir, tmp, ignore=shutil.ignore_patterns("train.json"))
        timing = {"unit_times_s": times, "train_time_s": round(sum(t or 0.0 for t in times.values()), 3)}
        atomic_write_json(tmp / TIMES, timing)
        shutil.rmtree(cache, ignore_errors=True)
        tmp.rename(cache)
        shutil.rmtree(units, ignore_errors=True)
        return {"trained": True, "models": _statuses(facts), **timing}

    def load(self, model_dir: Path) -> None:
        self.model_dir = Path(model_dir)
        f = self.model_dir / "facts.json"
        self._facts = json.loads(f.read_text()) if f.exists() else {"domains": {}}

    def _model(self, domain: str, seed: int):
        """``(model, tokens, facts)`` of (domain, seed), or an ``Attempt`` for every task when there
        is no usable checkpoint. Inference runs in float64, so that a plan does not depend on the
        lockstep batch it was decoded in (float32 rounding differs with batch shapes)."""
        key = (domain, seed)
        if key not in self._models:
            import torch

            info = self._facts.get("domains", {}).get(domain, {}).get(f"seed{seed}")
            failure = unit_failure(info, domain, seed)
            if failure is not None:
                self._models[key] = failure
            else:
                model, tokens = self._build(info["vocabulary"])
                unit = self.model_dir / domain / f"seed{seed}"
                own = unit / f"model.{self.decoding}.pt"   # this strategy's own checkpoint (select_with: own)
                model.load_state_dict(torch.load(own if own.exists() else unit / "model.pt", weights_only=True))
                if own.exists():
                    info = {**info, **info.get("selection", {}).get(self.decoding, {})}
                self._models[key] = (model.eval().double().to(self.settings().device), tokens, info)
        return self._models[key]

    # -- planning --------------------------------------------------------------------------------
    def _plan(self, model, tokens, problems, seed: int, limits, strategy: str, stats: dict | None = None) -> list:
        """Plan every pymimir problem of ``problems`` (one domain) with ``strategy``, each under its
        seeded random renaming; :class:`~planarena.methods.transformers.decode.GenResult` or
        :class:`~planarena.search.decoding.DecodeResult` per problem. ``stats`` (optional) collects
        the decoder's counters (``benchmarks/bench_transformers.py``)."""
        from planarena.methods.transformers.tokens import ProblemTokens, renaming

        s = self.settings()
        rngs = [np.random.default_rng(derive_seed(seed, "satr-renaming", p.get_name())) for p in problems]
        if self.arch == "encoder":
            from planarena.methods.transformers.guidance import guide

            toks = [ProblemTokens(tokens, p, renaming([str(o) for o in p.get_objects()], s.max_objects, r))
                    for p, r in zip(problems, rngs)]
            return guide(model, problems, toks, s.horizon, limits, stats)
        from planarena.methods.transformers.decode import EncDecAdapter, PlanGPTAdapter, decode_plans

        if self.arch == "encdec":
            slots = [renaming([str(o) for o in p.get_objects()], s.max_objects, r) for p, r in zip(problems, rngs)]
            adapter = EncDecAdapter(model, tokens[0], tokens[1], problems, slots)
        else:
            from planarena.methods.transformers.plangpt import object_types, type_renaming

            names = [type_renaming(object_types([str(o) for o in p.get_objects()], static_atoms(p)), s.max_objects, r)
                     for p, r in zip(problems, rngs)]
            adapter = PlanGPTAdapter(model, tokens, problems, names)
        return decode_plans(problems, adapter, strategy, s.max_tokens, limits, stats)

    def _unfit(self, problem, tokens) -> str | None:
        """Why ``problem`` cannot be put to the model (too many objects, an object type PlanGPT
        never saw), or None."""
        n = len(problem.get_objects())
        m = self.settings().max_objects
        if n > m:
            return f"{n} objects but max_objects={m}"
        if self.arch == "plangpt":
            from planarena.methods.transformers.plangpt import object_types

            types = object_types([str(o) for o in problem.get_objects()], static_atoms(problem))
            unseen = sorted(set(types.values()) - set(tokens.types))
            if unseen:
                return f"object type(s) {', '.join(unseen)} not in PlanGPT's training vocabulary"
            per_type = max(list(types.values()).count(t) for t in set(types.values()))
            if per_type > m:
                return f"{per_type} objects of one type but max_objects={m}"
        return None

    def solve(self, task: PlanningTask, seed: int) -> Attempt:
        """Plan one task (:meth:`solve_batch`)."""
        return self.solve_batch([task], seed)[0]

    def solve_batch(self, tasks: list[PlanningTask], seed: int) -> list[Attempt]:
        """Plan every task (one domain) in lockstep; ``wall_time`` is each problem's share of the
        decoding time."""
        import torch

        domains = {t.entry.domain for t in tasks}
        if len(domains) != 1:
            raise ValueError(f"solve_batch: tasks of one domain expected, got {sorted(domains)}")
        domain = domains.pop()
        got = self._model(domain, seed)
        if isinstance(got, Attempt):
            return [Attempt(got.outcome, failure_reason=got.failure_reason) for _ in tasks]
        model, tokens, info = got
        torch.set_num_threads(1)
        attempts: list[Attempt | None] = [None] * len(tasks)
        batch, problems = [], []
        for k, task in enumerate(tasks):
            problem = load_problem(str(task.domain_file), str(task.problem_file))
            why = self._unfit(problem, tokens)
            if why:
                attempts[k] = Attempt("unsolved", failure_reason=why)
                continue
            batch.append(k)
            problems.append(problem)
        extra = {k: info[k] for k in ("parameters", "best_step") if info.get(k) is not None}
        extra["diverged_at"] = info.get("diverged_at")  # None: did not diverge (report: Table E.9 counts)
        extra["strategy"] = self.decoding
        extra["model"] = self.model_name()  # blocks decoding one trained model share it (Table E.9 rows)
        if batch:
            results = self._plan(model, tokens, problems, seed, [tasks[k].time_limit for k in batch], self.decoding)
            for k, res in zip(batch, results):
                own = {"steps": res.steps} if self.arch == "encoder" else {"tokens": res.tokens, "failure": res.failure,
                                                                          **res.extra}
                attempts[k] = Attempt(res.outcome, res.plan, failure_reason=res.reason, wall_time=res.wall_s,
                                      extra={**own, **extra, "cpu_time_s": round(res.time_s, 4)})
        return attempts  # type: ignore[return-value]


@dataclass(frozen=True)
class _Objects:
    """What :meth:`SATr._vocabulary` reads of a training space: its objects and static atoms."""

    objects: list
    static: list


def _statuses(facts: dict) -> dict:
    return {d: {k: v.get("status") for k, v in f.items()} for d, f in facts.get("domains", {}).items()}


__all__ = ["ARCHS", "FAMILY", "SATr", "Settings", "build_model", "vocabulary"]
