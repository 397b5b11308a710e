"""Width-based R-GNN general policies as registry methods (method ``rgnn_policy``).

Source: Aichmüller, Ståhlberg, Funkquist, Geffner, "Efficient Lookahead Encoding and Abstracted
Width for Learning General Policies in Classical Planning" (docs/papers/rgnn-policies.md). One
params block per row of Table 1 / Table 3: ``lookahead`` (``flat`` | ``iw`` | ``aiw`` | ``baiw`` |
``caiw``, :mod:`~planarena.methods.rgnn_policies.lookahead`) x ``encoding`` (``aa`` | ``ext`` |
``ad``, :mod:`~planarena.methods.rgnn_policies.encodings`): ``flat_aa``, ``iw_ext``, ``aiw_ext``,
``iw_ad``, ``aiw_ad`` and the ablations ``baiw_ad``, ``caiw_ad``, ``flat_ad``. Appendix C's
ablations of AIW-AD: the encodings ``int`` (Internal) and ``id`` (Internal-Delta) of Table 6
(``aiw_int``, ``aiw_id``), and Table 5's switches (:func:`ablation_switches`) ``tree_atoms: false``
("No Tree-Atoms", ``aiw_ad_no_tree_atoms``) and ``goals: reduced`` ("Reduced Goals",
``aiw_ad_reduced_goals``).

Train stage: one Q-function per (domain, seed), trained by DQN with lifted hindsight relabelling on
the suite's ``train`` split (:mod:`~planarena.methods.rgnn_policies.train`), the checkpoint selected
by coverage on problems that the report never counts as held out (:meth:`RGNNPolicy._entries`: the
validation split only when this block does not evaluate it, else the training problems; on IPC 2023
the largest training problems, Table 8). Evaluation: all problems of a (domain, split) run the greedy
policy in lockstep (:func:`~planarena.methods.rgnn_policies.policy.greedy_episodes`); the plan (the
chosen jumps' primitive actions) is validated by the harness like every other plan. Sizes and
schedules come from the ``rgnn_policies`` params section (``model``, ``train``, ``max_choices``,
``capacity``, ``device``).

Twins (floors that isolate learning, docs/papers/rgnn-policies.md#twins): a block with ``untrained:
true`` is the learned row ``twin_of`` names with no DQN update (the Q-network at the initial weights
the trained row starts from, ``torch.manual_seed(seed)``); ``untrained: uniform`` chooses uniformly
at random, seeded per (seed, domain, problem), among the same lookahead's unvisited candidates and
builds no network. Both evaluate through the same greedy lockstep code, limits and caps as the row.
"""

from __future__ import annotations

import json
from pathlib import Path

from planarena.config import get, torch_device
from planarena.core.io import atomic_write_json
from planarena.core.pddl import fresh_problem
from planarena.methods.base import (Attempt, Budget, Method, PlanningTask, ReportTraits, row_config,
                                    twin_traits, untrained_value)
from planarena.methods.rgnn_policies.lookahead import GOALS, KINDS
from planarena.methods.units import save_unit, train_units, unit_failure

FAMILY = "aiw-ad-rgnn-policies"
ENCODING_NAMES = {"aa": "AA", "ext": "Ext", "ad": "AD", "int": "Int", "id": "ID"}
LOOKAHEAD_NAMES = {"flat": "Flat", "iw": "IW", "aiw": "AIW", "baiw": "BAIW", "caiw": "C-AIW"}
#: what a uniform twin chooses among (its report variant: "uniform among <this>")
CANDIDATE_NAMES = {"flat": "primitive successors", "iw": "IW(1) candidates", "aiw": "AIW(1) candidates",
                   "baiw": "BAIW(1) candidates", "caiw": "C-AIW(1) candidates"}
#: the block's ``untrained`` values besides false (:meth:`RGNNPolicy.twin_variants`)
TWIN_VALUES = (True, "uniform")
#: the lookaheads that abstract atoms in their novelty test (Section 3, Appendix B): the ones the
#: "Reduced Goals" switch changes
ABSTRACTING = ("aiw", "baiw", "caiw")
#: Table 5's switches (:func:`ablation_switches`): their values in the paper's full AIW-AD, and the
#: table's labels of the ablated ones (report variants)
SWITCH_DEFAULTS = {"tree_atoms": True, "goals": GOALS[0]}
SWITCH_NAMES = {"tree_atoms": "No Tree-Atoms", "goals": "Reduced Goals"}


def untrained_mode(config: dict, name: str = "<row>") -> bool | str:
    """The block's ``untrained`` value: False (a learned row), True (the untrained twin: initial
    weights, no update) or ``"uniform"`` (a uniform choice among the lookahead's candidates).

    Raises:
        ValueError: another value (names the block).
    """
    return untrained_value(config, name, TWIN_VALUES)


def ablation_switches(config: dict, name: str = "<row>") -> tuple[bool, str]:
    """The block's Appendix C ablation switches (Table 5), ``(tree_atoms, goals)``:

    * ``tree_atoms`` (bool, default true): the AD encoding's tree atoms ``P_E(o_s', o_s'')``, one per
      edge of the lookahead tree (Section 5, R^T_E); ``false`` is "No Tree-Atoms", the relation set
      R^T \\ R^T_E (:class:`~planarena.methods.rgnn_policies.encodings.NoTreeAtomsEncoder`).
    * ``goals`` (``full`` | ``reduced``, default ``full``): AIW keeps goal atoms whole in its
      novelty test (Section 3); ``reduced`` is "Reduced Goals": "AIW now also applies the
      abstracted novelty checks on atoms P(o1, ..., on) that match an atom P_g(o1, ..., on) in the
      goal", with the full AD relation set (a lookahead change, not an encoding one).

    Absent or null: the default (the paper's full AIW-AD).

    Raises:
        ValueError: one line naming ``methods.<name>.<key>``: a value that is not one of the
            switch's, ``tree_atoms: false`` with another encoding than AD (only AD has tree atoms),
            ``goals: reduced`` with a lookahead that abstracts nothing (``flat``, ``iw``).
    """
    tree = config.get("tree_atoms")
    tree = SWITCH_DEFAULTS["tree_atoms"] if tree is None else tree
    if tree is not True and tree is not False:
        raise ValueError(f"params: methods.{name}.tree_atoms={tree!r}; one of true, false")
    goals = config.get("goals")
    goals = SWITCH_DEFAULTS["goals"] if goals is None else goals
    if not isinstance(goals, str) or goals not in GOALS:
        raise ValueError(f"params: methods.{name}.goals={goals!r}; one of {', '.join(GOALS)}")
    encoding, kind = config.get("encoding", "ad"), config.get("lookahead", "aiw")
    if not tree and encoding != "ad":
        raise ValueError(f"params: methods.{name}.tree_atoms=false (No Tree-Atoms) needs encoding: ad, the only "
                         f"encoding with tree atoms (got {encoding!r})")
    if goals == "reduced" and kind not in ABSTRACTING:
        raise ValueError(f"params: methods.{name}.goals=reduced (Reduced Goals) needs an abstracting lookahead "
                         f"({', '.join(ABSTRACTING)}; got {kind!r})")
    return tree, goals


class RGNNPolicy(Method):
    """A width-based R-GNN policy (params block keys: ``lookahead``, ``encoding``, ``seeds``, and
    Table 5's switches ``tree_atoms`` and ``goals``, :func:`ablation_switches`)."""

    family = FAMILY
    device_param = "rgnn_policies.device"
    tasks = frozenset({"plan"})
    lockstep = True
    uses_params = ("rgnn_policies",)
    data_deps = ("problems",)

    @classmethod
    def twin_variants(cls, config: dict) -> tuple:
        """The floors generated for a learned row (``untrained`` values): its untrained twin (the
        same network at its initial weights) and the uniform choice among its lookahead's candidates
        (for a flat row: among the distinct unvisited primitive successors). A twin has none."""
        if config.get("untrained") or config.get("twin_of"):
            return ()
        return TWIN_VALUES

    @classmethod
    def report_traits(cls, config: dict, params: dict) -> ReportTraits:
        untrained = untrained_mode(config)
        if untrained:
            # a floor isolating learning: the row's lookahead, limits and caps, no update
            kind = config.get("lookahead", "aiw")
            variant = ("untrained twin" if untrained is True
                       else f"uniform among {CANDIDATE_NAMES.get(kind, kind + ' candidates')}")
            return twin_traits(cls.report_traits(row_config(config), params), str(config.get("twin_of") or ""),
                               variant)
        kind, enc = config.get("lookahead", "aiw"), config.get("encoding", "ad")
        info = (("Width-based R-GNN policies",
                 "greedy Q-value policies over lookahead candidates (Flat: primitive successors; IW: IW(1); AIW: "
                 "Abstracted IW(1); BAIW: base-abstracted; C-AIW: capacity-limited), input encodings AA "
                 "(aggregated actions), Ext (one R-GNN pass per candidate), AD (aggregated deltas, one pass for the "
                 "whole tree); DQN with lifted hindsight relabelling; no revisits, a cap on choices"),)
        if enc in ("int", "id"):
            info += (("Internal / Internal-Delta encodings (Appendix C, Table 6)",
                      "one R-GNN graph per transition s -> s' over shared object nodes: Int adds R^s' under a "
                      "duplicated predicate set, ID the delta atoms of s' (P+, P-, goal deltas) without a state "
                      "node; Q = MLP(sum_o f(o)) per graph (the readout is not in the paper)"),)
        off = [label for key, label in SWITCH_NAMES.items() if config.get(key) not in (None, SWITCH_DEFAULTS[key])]
        if off:
            info += (("AIW-AD ablations (Appendix C, Table 5)",
                      "No Tree-Atoms: AD without the tree atoms P_E; Reduced Goals: AIW also abstracts the atoms of "
                      "the goal in its novelty test"),)
        variant = f"{LOOKAHEAD_NAMES.get(kind, kind)}-{ENCODING_NAMES.get(enc, enc)}"
        horizon = int(_section(params).get("max_choices", {}).get("flat", 1000)) if kind == "flat" else None
        return ReportTraits(role="model", variant=" ".join([variant, *off]),
                            info=info, horizon=horizon, kind="policy" if kind == "flat" else "lookahead policy",
                            budget=_budget(params), ablations=_ablations(cls, config, params))

    def __init__(self, name, config, params, layout):
        splits = _section(params).get("splits") or get(params, "evaluation.splits")
        config = {"splits": list(splits), **config}
        super().__init__(name, config, params, layout)
        self.kind = config.get("lookahead", "aiw")
        self.encoding = config.get("encoding", "ad")
        if self.kind not in KINDS:
            raise ValueError(f"params: methods.{name}.lookahead={self.kind!r}; one of {', '.join(KINDS)}")
        if self.encoding not in ENCODING_NAMES:
            raise ValueError(f"params: methods.{name}.encoding={self.encoding!r}; one of {', '.join(ENCODING_NAMES)}")
        if self.encoding == "aa" and self.kind != "flat":
            raise ValueError(f"params: methods.{name}: the AA encoding scores ground actions, so it needs "
                             f"lookahead: flat (got {self.kind!r})")
        self.tree_atoms, self.goals = ablation_switches(config, name)
        self.untrained = untrained_mode(config, name)
        self._facts: dict = {}
        self._nets: dict = {}
        self.model_dir: Path | None = None

    # -- settings --------------------------------------------------------------------------------
    def section(self) -> dict:
        return _section(self.params)

    def train_config(self):
        from planarena.methods.rgnn_policies.train import TrainConfig

        return TrainConfig.from_params(self.section().get("train"))

    @property
    def device(self) -> str:
        return torch_device(self.section().get("device", "cpu"), "rgnn_policies.device")

    def max_choices(self) -> int:
        caps = self.section().get("max_choices") or {}
        return int(caps.get("flat" if self.kind == "flat" else "width", 1000))



    def _entries(self, domain: str) -> tuple[list, list, str]:
        """``(train, selection, source)`` of ``domain``: the problem entries the DQN trains on, those
        its checkpoints are scored on (Section 7, Training: "Model selection was based on validation
        coverage"; only when there are two or more checkpoints, ``train.eval_every`` <
        ``train.episodes``), and where the latter come from.

        The report counts every split but ``train`` as held out (:func:`planarena.config.is_held_out`,
        one rule for every method), so a split that selected the model and is then evaluated would
        enter the held-out sums with a number it was tuned on. The selection problems are therefore
        never an evaluated held-out split:

        * ``"validation split"``: the suite has a ``validation`` split and this block does not
          evaluate it (not in its ``splits``): the paper's protocol, a separate validation set;
        * ``"training problems"``: the suite has a ``validation`` split and this block evaluates it
          (the generated and SATr suites with the default ``rgnn_policies.splits``): the checkpoints
          are scored on the training problems themselves (fresh parses, so scoring does not touch
          the training problems' state repositories), and ``validation`` stays a held-out split
          that nothing was selected on. This keeps every training problem for training (the
          generated suite has 4-12 per domain at the default sizes) and needs no report change;
        * ``"largest training problems"``: no validation split (the IPC 2023 layout has only
          ``training/easy``): the ``validation_from_train`` largest training problems, held out of
          training, as the paper's Table 8 (69 train + 30 validation per IPC domain); never a test
          problem.
        """
        train = self.training_problems(domain)
        val = list(self.ps.select(domain=domain, split="validation"))
        if val:
            if "validation" in (self.config.get("splits") or ()):
                return train, list(train), "training problems"
            return train, val, "validation split"
        n = int(self.section().get("validation_from_train", 0) or 0)
        if n > 0 and len(train) > 1:
            ordered = sorted(train, key=lambda e: (e.objects, e.size or 0, e.problem))
            n = min(n, len(train) // 2)
            return ordered[:-n], ordered[-n:], "largest training problems"
        return train, [], "none"

    def _load(self, entries) -> list[tuple]:
        """``(pymimir problem, object types)`` of every entry, each a fresh parse (:func:`fresh_problem`)."""
        from planarena.methods.rgnn_policies.lookahead import object_types

        out = []
        for e in entries:
            f = self.ps.problem_file(e)
            out.append((fresh_problem(self.ps.domain_file(e.domain), f), object_types(f, self.ps.domain_file(e.domain))))
        return out

    def _cache(self):
        from planarena.methods.rgnn_policies.policy import LookaheadCache

        # a uniform twin reads no encoding: it needs the trees, not AD's / ID's deltas
        return LookaheadCache(self.kind, int(self.section().get("capacity", 1000)),
                              with_deltas=self.encoding in ("ad", "id") and self.untrained != "uniform",
                              goals=self.goals)

    def _network(self, domain_obj):
        from planarena.methods.rgnn_policies.encodings import PolicyNetwork

        m = self.section().get("model") or {}
        return PolicyNetwork(domain_obj, self.encoding, int(m.get("embedding_size", 32)), int(m.get("layers", 30)),
                             bool(m.get("depth_nodes", True)), float(m.get("depth_rank_weight", 1.0)),
                             tree_atoms=self.tree_atoms)

    def switches(self) -> dict:
        """This block's Table 5 switches that differ from the paper's full AIW-AD (``{}`` for every
        other row, so that their content keys and records stay what they were)."""
        out: dict = {}
        if not self.tree_atoms:
            out["tree_atoms"] = False
        if self.goals != SWITCH_DEFAULTS["goals"]:
            out["goals"] = self.goals
        return out

    # -- training --------------------------------------------------------------------------------
    def equivalent_lookahead(self, problems: list[tuple]) -> str:
        """The lookahead whose trees this block's lookahead reproduces exactly on ``problems``
        (``(pymimir problem, object types)`` pairs: the training and selection problems), so that
        training on them is the same computation:

        * ``baiw`` -> ``aiw`` when every object and constant has the same abstract type (all
          untyped, or one type): AIW's features are BAIW's with that type for the universal one;
        * ``caiw`` -> ``aiw`` when its capacity cannot bind: each kept novel state adds at least one
          novelty feature, and a problem has at most sum over fluent predicates P of
          n^arity(P) * max(arity(P), 1) features (n objects and constants), so with that bound at
          most ``capacity`` no depth ever holds more novel states than C-AIW keeps;
        * otherwise the block's own lookahead.
        """
        from planarena.methods.rgnn_policies.lookahead import UNIVERSAL

        if self.kind == "baiw":
            kinds = {t or UNIVERSAL for _, types in problems for t in types.values()}
            return "aiw" if len(kinds) <= 1 else self.kind
        if self.kind == "caiw":
            capacity = int(self.section().get("capacity", 1000))
            for p, _ in problems:
                n = len(p.get_objects()) + len(p.get_domain().get_constants())
                bound = sum(n ** pr.get_arity() * max(pr.get_arity(), 1)
                            for pr in p.get_domain().get_predicates() if pr.is_fluent())
                if bound > capacity:
                    return self.kind
            return "aiw"
        return self.kind

    def _unit_key(self, domain: str, seed: int, lookahead: str, entries: list) -> str:
        """Content key of one (domain, seed) training: everything it depends on, with the
        lookahead as :meth:`equivalent_lookahead` (so rows identical by construction share one
        trained model), the selection problems' and training problems' files, and the family's code."""
        import hashlib

        from planarena.methods.units import training_key

        section = self.section()
        files = [self.ps.domain_file(domain), *(self.ps.problem_file(e) for e in entries)]
        return training_key({"lookahead": lookahead, "encoding": self.encoding, "seed": seed, **self.switches(),
                             "capacity": section.get("capacity", 1000) if lookahead == "caiw" else None,
                             "model": section.get("model"), "train": section.get("train"),
                             "device": self.device,
                             "files": [(Path(f).name, hashlib.sha256(Path(f).read_bytes()).hexdigest()) for f in files]},
                            "planarena.methods.rgnn_policies", ("method", "train", "policy", "encodings", "lookahead"))

    def train(self, model_dir: Path) -> dict:
        """One Q-function per (domain, seed); ``facts.json`` per model (status, episodes, selected
        episode and its validation score, TD errors, parameters, lookahead counters).

        Each trained unit is also stored in a content-addressed cache
        (``data/cache/rgnn_policies/<key>``, :meth:`_unit_key`): a row whose training is the same
        computation as one already trained (``baiw`` / ``caiw`` where they reduce to ``aiw``,
        :meth:`equivalent_lookahead`) copies that model instead of training it again; its facts say
        ``shared_with`` (the lookahead it reduced to; the same bytes whether or not the cache had
        it) and it is charged the model's training time, as every row decoding it is."""
        import shutil

        if self.untrained:
            return self._train_twin(Path(model_dir))
        cfg = self.train_config()

        def fit(unit: tuple[str, int]) -> dict:
            import torch

            from planarena.methods.rgnn_policies.encodings import count_parameters
            from planarena.methods.rgnn_policies.train import scoring_points, train_policy

            domain, seed = unit
            torch.set_num_threads(1)
            train_entries, val_entries, selection = self._entries(domain)
            if scoring_points(cfg) < 2:  # a single checkpoint: nothing to select, no selection rollouts
                val_entries, selection = [], "none (one checkpoint)"
            # separate parses: selection on the training problems scores copies of them
            train, val = self._load(train_entries), self._load(val_entries)
            if not train:
                return {"status": "no data", "reason": f"no training problem of {domain}"}
            same_as = self.equivalent_lookahead(train + val)
            shared_with = same_as if same_as != self.kind else None
            shared = self.layout.cache / "rgnn_policies" / self._unit_key(domain, seed, same_as,
                                                                          [*train_entries, *val_entries])
            out = model_dir / domain / f"seed{seed}"
            if (shared / "facts.json").exists():
                shutil.copytree(shared, out, dirs_exist_ok=True, ignore=shutil.ignore_patterns("time.json"))
                info = {**json.loads((shared / "facts.json").read_text()), "shared_with": shared_with}
                atomic_write_json(out / "facts.json", info, default=float)
                seconds = json.loads((shared / "time.json").read_text())["train_time_s"]
                # no cache key in the facts: DVC tracks them, and a rerun that finds the unit in the
                # cache must write the same bytes as the run that trained it
                return {**info, "train_time_s": seconds}
            cache = self._cache()
            for p, types in train + val:
                cache.add(p, types)
            torch.manual_seed(seed)
            net = self._network(train[0][0].get_domain()).to(self.device)
            res = train_policy(net, cache, [p for p, _ in train], [p for p, _ in val], cfg, seed, self.kind == "flat")
            info = {"status": res.status, "episodes_run": res.episodes_run, "best_episode": res.best_episode,
                    "best_score": list(res.best) if res.best else None, "diverged_at": res.diverged_at,
                    "validation": res.validation, "td_errors": res.td_errors[-5:],
                    "parameters": count_parameters(net), "train_problems": len(train),
                    "selection": selection, "validation_problems": [e.problem for e in val_entries],
                    "lookahead": {k: round(v, 3) for k, v in cache.stats.items() if k != "seconds"},
                    "checkpoint": res.state is not None}
            tmp = shared.with_name(shared.name + ".tmp")
            shutil.rmtree(tmp, ignore_errors=True)
            save_unit(tmp, res.state, info)
            atomic_write_json(tmp / "time.json", {"train_time_s": res.seconds})
            info = {**info, "shared_with": shared_with}
            save_unit(out, res.state, info)
            shutil.rmtree(shared, ignore_errors=True)
            tmp.rename(shared)
            return {**info, "train_time_s": res.seconds}

        facts, times = train_units(fit, self.ps.domains, self.seeds(), self.jobs, f"train {self.name}",
                                   device=self.unit_device())
        atomic_write_json(Path(model_dir) / "facts.json", facts, default=float)
        return {"trained": True, "models": {d: {k: v.get("status") for k, v in f.items()}
                                            for d, f in facts["domains"].items()}, "unit_times_s": times}

    def _train_twin(self, model_dir: Path) -> dict:
        """The train stage of a twin: no DQN update, no rollout, no cache. ``untrained: true``
        writes each (domain, seed)'s initial weights as its ``model.pt``: ``torch.manual_seed(seed)``
        then the network on the domain of the first training problem, exactly as :meth:`train`
        initialises the row it mirrors (the first problem of the domain when it has no training
        problem), so evaluation loads it like a trained checkpoint. ``untrained: uniform`` builds no
        network and writes the facts only. Unit facts: ``status: untrained``, ``untrained``,
        ``episodes_run: 0``, ``updates: 0``, ``checkpoint`` (weights written), ``parameters``."""
        import time

        import torch

        from planarena.methods.rgnn_policies.encodings import count_parameters

        facts: dict = {"domains": {d: {} for d in self.ps.domains}}
        times: dict[str, float] = {}
        for domain in self.ps.domains:
            for seed in self.seeds():
                start = time.perf_counter()
                info = {"status": "untrained", "untrained": self.untrained, "episodes_run": 0, "updates": 0,
                        "best_episode": None, "diverged_at": None, "parameters": None, "checkpoint": False}
                state = None
                if self.untrained is True:
                    entries = self._entries(domain)[0] or self.ps.select(domain=domain)
                    torch.set_num_threads(1)
                    torch.manual_seed(seed)
                    net = self._network(self._load(entries[:1])[0][0].get_domain())
                    state = net.state_dict()
                    info.update(parameters=count_parameters(net), checkpoint=True)
                save_unit(model_dir / domain / f"seed{seed}", state, info)
                facts["domains"][domain][f"seed{seed}"] = info
                times[f"{domain}/seed{seed}"] = round(time.perf_counter() - start, 4)
        atomic_write_json(model_dir / "facts.json", facts, default=float)
        return {"trained": False, "untrained": self.untrained, "steps": 0,
                "reason": ("untrained twin: the initial weights, no DQN update" if self.untrained is True
                           else "uniform choice among the lookahead's candidates: no network"),
                "models": {d: {k: v["status"] for k, v in f.items()} for d, f in facts["domains"].items()},
                "unit_times_s": times, "train_time_s": round(sum(times.values()), 4)}

    def load(self, model_dir: Path) -> None:
        self.model_dir = Path(model_dir)
        f = self.model_dir / "facts.json"
        self._facts = json.loads(f.read_text()) if f.exists() else {"domains": {}}

    def _model(self, domain: str, seed: int, domain_obj):
        """``(network, facts)`` of (domain, seed), or an :class:`Attempt` for every task when there
        is no usable checkpoint."""
        key = (domain, seed)
        if key not in self._nets:
            import torch

            info = self._facts.get("domains", {}).get(domain, {}).get(f"seed{seed}")
            failure = unit_failure(info, domain, seed, progress="episode")
            if failure is not None:
                self._nets[key] = failure
            else:
                net = self._network(domain_obj)
                state = torch.load(self.model_dir / domain / f"seed{seed}" / "model.pt", weights_only=True)
                net.load_state_dict(state)
                self._nets[key] = (net.to(self.device).eval(), info)
        return self._nets[key]

    # -- planning --------------------------------------------------------------------------------
    def solve(self, task: PlanningTask, seed: int) -> Attempt:
        """Plan one task (:meth:`solve_batch`)."""
        return self.solve_batch([task], seed)[0]

    def solve_batch(self, tasks: list[PlanningTask], seed: int) -> list[Attempt]:
        """Run the greedy policy on every task (one domain) in lockstep; ``wall_time`` is each
        problem's own lookahead time plus its share of the batched forward passes; its time limit
        is checked against the same in CPU time (``extra.cpu_time_s``)."""
        import torch

        from planarena.methods.rgnn_policies.lookahead import object_types
        from planarena.methods.rgnn_policies.policy import greedy_episodes

        domains = {t.entry.domain for t in tasks}
        if len(domains) != 1:
            raise ValueError(f"solve_batch: tasks of one domain expected, got {sorted(domains)}")
        domain = domains.pop()
        torch.set_num_threads(1)
        problems = [fresh_problem(t.domain_file, t.problem_file) for t in tasks]
        if self.untrained == "uniform":  # no network: a seeded uniform draw per candidate
            from planarena.methods.rgnn_policies.policy import UniformChoice

            net, info = UniformChoice({p: uniform_seed(seed, t.entry.domain, t.entry.problem)
                                       for p, t in zip(problems, tasks)}), {}
        else:
            got = self._model(domain, seed, problems[0].get_domain())
            if isinstance(got, Attempt):
                return [Attempt(got.outcome, failure_reason=got.failure_reason) for _ in tasks]
            net, info = got
        cache = self._cache()
        for p, t in zip(problems, tasks):
            cache.add(p, object_types(t.problem_file, t.domain_file))
        episodes = greedy_episodes(net, cache, problems, self.max_choices(), [t.time_limit for t in tasks])
        # a uniform twin reads no encoding: its records are those of every uniform twin of the lookahead
        encoding = None if self.untrained == "uniform" else self.encoding
        extra = {"lookahead": self.kind, "encoding": encoding, "best_episode": info.get("best_episode"),
                 "parameters": info.get("parameters"), "diverged_at": info.get("diverged_at")}
        # Table 5's switches, where they differ from the full AIW-AD (a uniform twin reads no encoding)
        extra.update({k: v for k, v in self.switches().items() if k == "goals" or encoding is not None})
        if self.untrained:
            extra["untrained"] = self.untrained
        out = []
        for ep in episodes:
            plan = [str(a) for a in ep.plan] if ep.plan is not None else None
            out.append(Attempt(ep.outcome, plan, failure_reason=ep.reason, wall_time=ep.seconds,
                               extra={**extra, "choices": ep.choices, "plan_length": len(plan) if plan is not None else None,
                                      "time_per_decision_s": ep.decision_seconds, "cpu_time_s": round(ep.cpu_seconds, 4),
                                      **{f"lookahead_{k}": v for k, v in ep.lookahead.items()}}))
        return out


def _section(params: dict) -> dict:
    return get(params, "rgnn_policies", {}) or {}


def uniform_seed(seed: int, domain: str, problem: str) -> int:
    """The seed of a uniform twin's choices on one problem: the evaluation seed, the domain and the
    problem only (not the row, its encoding or the problems batched with it), so the uniform twins
    of two rows with the same lookahead make the same choices."""
    from planarena.core.io import derive_seed

    return derive_seed("rgnn_uniform", seed, domain, problem)


#: Section 7 "Training": "Each episode consisted of 32 optimization steps with a batch size of 32";
#: the paper gives no episode count, only the Boltzmann temperature's schedule "over 1000 episodes"
#: and a 12-hour limit per run: the budget assumes those 1,000 episodes (as profiles.paper does)
PAPER_TRAIN = {"episodes": 1000, "train_steps": 32, "batch": 32}


def _budget(params: dict) -> Budget:
    """One Q-function's DQN budget ((domain, seed) each): episodes x updates per episode, at
    ``batch`` replayed transitions per update (defaults: :data:`PAPER_TRAIN`, as TrainConfig's)."""
    t = {**PAPER_TRAIN, **(_section(params).get("train") or {})}
    steps, batch = int(t["episodes"]) * int(t["train_steps"]), int(t["batch"])
    paper_steps = PAPER_TRAIN["episodes"] * PAPER_TRAIN["train_steps"]
    return Budget(steps=steps, batch=batch, samples=steps * batch,
                  unit="DQN updates (episodes x updates per episode) x batch of replayed transitions",
                  paper_steps=paper_steps, paper_batch=PAPER_TRAIN["batch"],
                  paper_samples=paper_steps * PAPER_TRAIN["batch"], source="Section 7, Training",
                  note=f"{int(t['episodes'])} episodes x {int(t['train_steps'])} updates per (domain, seed); the "
                       "paper states 32 updates of batch 32 per episode and a 1,000-episode temperature schedule "
                       "(12 h limit), no episode count: 1,000 episodes assumed")


def _ablations(cls, config: dict, params: dict) -> tuple[tuple[str, str], ...]:
    """The paper's ablations of AIW-AD, declared from the main variant's side: the AD row against
    the same lookahead with another encoding (Ext: Tables 1 and 6; Int, ID: Table 6; AA for Flat:
    Table 3), the AIW row against the same encoding with another lookahead (IW: Table 1; BAIW,
    C-AIW, Flat: Table 3), and the full AD / AIW row against Table 5's "No Tree-Atoms" and "Reduced
    Goals" (:func:`ablation_switches`)."""
    from planarena.methods.ablations import counterparts, plain

    def view(c: dict) -> dict:
        c = {k: v for k, v in c.items() if not (k in ("tree_atoms", "goals") and v is None)}
        return plain(c, lookahead="aiw", encoding="ad", **SWITCH_DEFAULTS)

    me = view(config)
    out = []
    if me["encoding"] == "ad":
        out += [(name, f"encoding: AD vs {ENCODING_NAMES.get(v['encoding'], v['encoding'])}")
                for name, v in counterparts(cls, config, params, view, "encoding")]
    if me["lookahead"] == "aiw":
        out += [(name, f"lookahead: AIW vs {LOOKAHEAD_NAMES.get(v['lookahead'], v['lookahead'])}")
                for name, v in counterparts(cls, config, params, view, "lookahead")]
    if me["encoding"] == "ad" and me["tree_atoms"] is True:
        out += [(name, f"tree atoms: P_E vs {SWITCH_NAMES['tree_atoms']}")
                for name, _ in counterparts(cls, config, params, view, "tree_atoms")]
    if me["lookahead"] in ABSTRACTING and me["goals"] == SWITCH_DEFAULTS["goals"]:
        out += [(name, f"goals: goal atoms kept whole vs {SWITCH_NAMES['goals']}")
                for name, _ in counterparts(cls, config, params, view, "goals")]
    return tuple(out)


__all__ = ["FAMILY", "RGNNPolicy", "ablation_switches", "uniform_seed", "untrained_mode"]
