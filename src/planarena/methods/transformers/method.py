"""The SATr heuristic model as a registry method: ``satr_encoder_cl`` / ``satr_encoder_nocl``.

Source: ``../shared/papers/symmetry-aware-transformers.txt``: the encoder-only architecture
(Section 4, Figure 1), trained on h* samples of fully expanded training state spaces (Appendix E),
with or without the contrastive loss (Table 1's "Encoder (ours)" column and Table E.4's ablation),
and planning by **greedy heuristic guidance** (Section 5, Algorithm 4): from the current state,
apply the applicable action whose successor has the lowest predicted h; no cycle detection (the
paper's "minimally-supportive" strategy), stop at the goal or after ``horizon`` actions.

Train stage: one model per (domain, seed), independent units over ``jobs`` processes. Training
problems are the suite's ``train`` split; the checkpoint kept is the best on the ``validation``
split by greedy-guidance coverage, then fewer problems that ran into the horizon (Section E2's
order, without the criteria that only plan generators have), then the later step. A run whose
loss becomes NaN or spikes to a plateau is *diverged* (Figure E.1): its facts record the step; its
best checkpoint before the divergence, if any, is evaluated (as the paper's best checkpoints
are: Table E.9's diverged VisitAll encoders still have coverage in Table E.4), and records carry
``diverged_at``; without one every attempt is outcome ``diverged``. A domain none of whose
training problems has a state space within ``transformers.max_states`` gets no model: its
attempts are ``unsolved`` with that reason (the method's data assumption, not a harness error).

Evaluation: all problems of a (domain, split) decode together (:func:`planarena.search.decoding.
decode_lockstep` with beam width 1 and revisits allowed: Algorithm 4 exactly), every step's
successors of every problem scored in one batched forward pass; a problem whose greedy choice
returns to a state on its path stops there (``stop_on_cycle``: the deterministic policy would
repeat the cycle until the horizon, the same outcome). Object names are renamed at
random (seeded by the evaluation seed and the problem), as the paper does for every input.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from planarena.config import get
from planarena.core.io import atomic_write_json, derive_seed
from planarena.core.pddl import atom_indices, atom_text, goal_atoms, load_problem, static_atoms
from planarena.core.problemset import ProblemSet
from planarena.methods.base import Attempt, Method, PlanningTask, ReportTraits
from planarena.search.decoding import DecodeProblem, DecodeSettings, decode_lockstep

FAMILY = "symmetry-aware-transformers"


class ProblemTokens:
    """Token rows of one pymimir problem's states under one object renaming: static and goal rows
    once, each fluent atom's row once (by pymimir atom index), so a successor costs a lookup."""

    def __init__(self, vocab, problem, names: dict[str, int]):
        from planarena.methods.transformers.tokens import encode_atoms

        self.vocab, self.problem, self.names = vocab, problem, names
        self.fixed = encode_atoms(vocab, static_atoms(problem), goal_atoms(problem), names)
        self._rows: dict[tuple[int, int], np.ndarray] = {}

    def rows(self, state) -> np.ndarray:
        """``(N, 1 + m)`` token rows of ``state`` (fluent and derived atoms, statics, goal)."""
        from planarena.methods.transformers.tokens import encode_atoms

        fluent, derived = atom_indices(state)
        out = [self.fixed]
        for kind, indices in ((0, fluent), (1, derived)):
            for i in indices:
                row = self._rows.get((kind, i))
                if row is None:
                    text = atom_text(self.problem, i, derived=bool(kind))
                    row = self._rows[(kind, i)] = encode_atoms(self.vocab, [text], [], self.names)
                out.append(row)
        return np.concatenate(out)


class HeuristicScorer:
    """:class:`planarena.search.decoding.SuccessorScorer` of Algorithm 4: a successor's score is
    the model's h (lower is better); no per-beam context."""

    def __init__(self, model, tokens: Sequence[ProblemTokens], chunk: int = 256):
        self.model, self.tokens, self.chunk = model, list(tokens), chunk

    def start(self, problems, states):
        return None

    def score(self, ctx, beam_problem, successors, owner):
        import torch

        from planarena.methods.transformers.tokens import pad_batch

        which = beam_problem[owner]
        rows = [self.tokens[int(p)].rows(s) for p, s in zip(which, successors)]
        out = np.empty(len(rows), dtype=np.float64)
        with torch.no_grad():
            for lo in range(0, len(rows), self.chunk):
                ids, mask = pad_batch(rows[lo:lo + self.chunk], self.tokens[0].vocab.width)
                out[lo:lo + len(ids)] = self.model(torch.from_numpy(ids), torch.from_numpy(mask))[0].numpy()
        return out, None

    def select(self, cand_ctx, chosen):
        return None


class SATr(Method):
    """Symmetry-aware transformer configurations (params block keys: ``arch``: ``encoder``;
    ``contrastive``: true | false; ``seeds``; ``splits``). Sizes and schedules come from the
    ``transformers`` params section (:meth:`settings`)."""

    family = FAMILY
    tasks = frozenset({"plan"})
    lockstep = True
    uses_params = ("transformers",)
    data_deps = ("problems",)

    @classmethod
    def report_traits(cls, config: dict, params: dict) -> ReportTraits:
        horizon = int(get(params, "transformers.horizon", 100))
        how = "with" if config.get("contrastive", True) else "without"
        info = (("Symmetry-aware transformers",
                 "atom-level tokens, random object renaming, no positional encoding, shared layer weights, "
                 "no layer norm; the encoder plans by greedy heuristic guidance (Algorithm 4); "
                 "`*_cl` train with the contrastive loss (Rename-One), `*_nocl` without"),)
        return ReportTraits(role="model", variant=f"{config.get('arch', 'encoder')} {how} CL", info=info,
                            horizon=horizon)

    def __init__(self, name, config, params, layout):
        splits = get(params, "transformers.splits", None) or get(params, "evaluation.splits")
        config = {"splits": list(splits), **config}
        super().__init__(name, config, params, layout)
        self.arch = config.get("arch", "encoder")
        if self.arch != "encoder":
            raise ValueError(f"params: methods.{name}.arch={self.arch!r}; built so far: encoder")
        self.contrastive = bool(config.get("contrastive", True))
        self._ps: ProblemSet | None = None
        self._models: dict[tuple[str, int], Any] = {}
        self._facts: dict = {}
        self.model_dir: Path | None = None

    # -- settings --------------------------------------------------------------------------------
    def settings(self):
        """``(EncoderConfig, TrainConfig, max_objects, max_states, horizon)`` from ``transformers``."""
        from planarena.methods.transformers.model import EncoderConfig
        from planarena.methods.transformers.train import TrainConfig

        t = get(self.params, "transformers", {}) or {}
        enc = EncoderConfig(**(t.get("model") or {}))
        train = TrainConfig(**{**(t.get("train") or {}), "contrastive": self.contrastive})
        return enc, train, int(t.get("max_objects", 64)), int(t.get("max_states", 20000)), int(t.get("horizon", 100))

    @property
    def ps(self) -> ProblemSet:
        if self._ps is None:
            self._ps = ProblemSet(self.layout.problems)
        return self._ps

    def _seeds(self) -> list[int]:
        return [int(s) for s in (self.config.get("seeds") or get(self.params, "evaluation.seeds"))]

    # -- training --------------------------------------------------------------------------------
    def _validator(self, domain: str, vocab, max_objects: int, horizon: int, seed: int):
        """``validate(model) -> (coverage, -horizon hits)`` on the domain's validation split."""
        entries = self.ps.select(domain=domain, split="validation")
        problems = [load_problem(str(self.ps.domain_file(domain)), str(self.ps.problem_file(e))) for e in entries]
        if not problems:
            return None

        def validate(model) -> tuple:
            results = self._decode(model, problems, vocab, max_objects, horizon, seed, [float("inf")] * len(problems))
            solved = sum(r.outcome == "solved" for r in results)
            capped = sum("horizon" in (r.reason or "") for r in results)
            return (solved / len(results), -capped / len(results))

        return validate

    def train(self, model_dir: Path) -> dict:
        """One model per (domain, seed) (see the module docstring); ``facts.json`` per model:
        status, steps, divergence step, kept checkpoint, parameters, training data sizes."""
        from planarena.methods.transformers.data import expand
        from planarena.runner.executor import run_units

        enc_cfg, train_cfg, max_objects, max_states, horizon = self.settings()
        spaces: dict[str, list] = {}
        skipped: dict[str, list[str]] = {}
        for domain in self.ps.domains:
            spaces[domain], skipped[domain] = [], []
            for e in self.ps.select(domain=domain, split="train"):
                try:
                    spaces[domain].append(expand(self.ps.domain_file(domain), self.ps.problem_file(e), max_states))
                except Exception as exc:  # SkipProblem (too large, unsolvable) is a recorded reason
                    skipped[domain].append(f"{e.problem}: {exc}")

        def fit(unit: tuple[str, int]) -> dict:
            import torch

            from planarena.methods.transformers.model import SATrEncoder, count_parameters
            from planarena.methods.transformers.tokens import AtomVocabulary
            from planarena.methods.transformers.train import PairBatches, train_heuristic

            domain, seed = unit
            if not spaces[domain]:
                return {"status": "no data", "reason": f"no training problem of {domain} has a state space that "
                                                        f"can be expanded ({'; '.join(skipped[domain])})"}
            torch.set_num_threads(1)
            first = load_problem(str(self.ps.domain_file(domain)),
                                 str(self.ps.problem_file(self.ps.select(domain=domain, split="train")[0])))
            vocab = AtomVocabulary.of_domain(first, max_objects)
            torch.manual_seed(seed)
            model = SATrEncoder(vocab.size, vocab.width, enc_cfg)
            res = train_heuristic(model, PairBatches(vocab, spaces[domain]), train_cfg, seed,
                                  self._validator(domain, vocab, max_objects, horizon, seed))
            out = model_dir / domain / f"seed{seed}"
            out.mkdir(parents=True, exist_ok=True)
            info = {"status": res.status, "steps_run": res.steps_run, "diverged_at": res.diverged_at,
                    "best_step": res.best_step, "best_score": list(res.best_score) if res.best_score else None,
                    "final_loss": res.losses[-1] if res.losses else None, "parameters": count_parameters(model),
                    "train_problems": len(spaces[domain]), "train_states": sum(len(s.states) for s in spaces[domain]),
                    "skipped_problems": skipped[domain], "vocabulary": list(vocab.predicates),
                    "max_arity": vocab.max_arity, "max_objects": max_objects, "checkpoint": res.state is not None}
            if res.state is not None:
                torch.save(res.state, out / "model.pt")
            atomic_write_json(out / "facts.json", info, default=float)
            return {**info, "train_time_s": res.seconds}

        units = [(d, s) for d in self.ps.domains for s in self._seeds()]
        facts: dict = {"domains": {d: {} for d in self.ps.domains}}
        times: dict[str, float] = {}
        for (domain, seed), info in zip(units, run_units(fit, units, jobs=self.jobs, desc=f"train {self.name}")):
            times[f"{domain}/seed{seed}"] = info.pop("train_time_s", None)
            facts["domains"][domain][f"seed{seed}"] = info
        atomic_write_json(model_dir / "facts.json", facts, default=float)
        return {"trained": True, "models": {d: {k: v.get("status") for k, v in f.items()}
                                             for d, f in facts["domains"].items()}, "unit_times_s": times}

    def load(self, model_dir: Path) -> None:
        self.model_dir = Path(model_dir)
        f = self.model_dir / "facts.json"
        self._facts = json.loads(f.read_text()) if f.exists() else {"domains": {}}

    def _model(self, domain: str, seed: int):
        """``(model, vocab, facts)`` of (domain, seed), or an ``Attempt`` for every task when there
        is no usable checkpoint."""
        key = (domain, seed)
        if key not in self._models:
            import torch

            from planarena.methods.transformers.model import SATrEncoder
            from planarena.methods.transformers.tokens import AtomVocabulary

            info = self._facts.get("domains", {}).get(domain, {}).get(f"seed{seed}")
            if info is None:
                self._models[key] = Attempt("error", failure_reason=f"no trained model for {domain} (seed {seed}); run the train stage")
            elif info.get("status") == "diverged" and not info.get("checkpoint"):
                self._models[key] = Attempt("diverged", failure_reason=f"training diverged at step "
                                                                      f"{info.get('diverged_at')} before any checkpoint")
            elif info.get("status") == "no data":
                # the method's data assumption (fully expanded training state spaces) does not hold
                # at this profile: a limitation of the configuration, recorded as unsolved
                self._models[key] = Attempt("unsolved", failure_reason=f"no model: {info.get('reason')}")
            elif not info.get("checkpoint"):
                self._models[key] = Attempt("error", failure_reason=info.get("reason", "training failed"))
            else:
                vocab = AtomVocabulary(tuple(info["vocabulary"]), int(info["max_arity"]), int(info["max_objects"]))
                model = SATrEncoder(vocab.size, vocab.width, self.settings()[0])
                model.load_state_dict(torch.load(self.model_dir / domain / f"seed{seed}" / "model.pt", weights_only=True))
                self._models[key] = (model.eval(), vocab, info)
        return self._models[key]

    # -- planning --------------------------------------------------------------------------------
    def _decode(self, model, problems, vocab, max_objects, horizon, seed, limits):
        """Algorithm 4 over pymimir ``problems`` in lockstep, each under its seeded random renaming."""
        from planarena.methods.transformers.tokens import renaming

        tokens = []
        for p in problems:
            rng = np.random.default_rng(derive_seed(seed, "satr-renaming", p.get_name()))
            tokens.append(ProblemTokens(vocab, p, renaming([str(o) for o in p.get_objects()], max_objects, rng)))
        todo = [DecodeProblem(p, len(p.get_objects()), lim) for p, lim in zip(problems, limits)]
        settings = DecodeSettings(beam_width=1, horizon=horizon, revisit=True, stop_on_cycle=True)
        return decode_lockstep(todo, HeuristicScorer(model, tokens), settings)

    def solve(self, task: PlanningTask, seed: int) -> Attempt:
        """Greedy heuristic guidance of one task (:meth:`solve_batch`)."""
        return self.solve_batch([task], seed)[0]

    def solve_batch(self, tasks: list[PlanningTask], seed: int) -> list[Attempt]:
        """Algorithm 4 for every task (one domain) in lockstep; ``wall_time`` is each problem's
        share of the decoding time. A problem with more objects than object tokens is
        ``unsolved`` with that reason (the paper's fixed-vocabulary limit)."""
        import torch

        domains = {t.entry.domain for t in tasks}
        if len(domains) != 1:
            raise ValueError(f"solve_batch: tasks of one domain expected, got {sorted(domains)}")
        domain = domains.pop()
        got = self._model(domain, seed)
        if isinstance(got, Attempt):
            return [Attempt(got.outcome, failure_reason=got.failure_reason) for _ in tasks]
        model, vocab, info = got
        torch.set_num_threads(1)
        _, _, _, _, horizon = self.settings()
        attempts: list[Attempt | None] = [None] * len(tasks)
        batch, problems = [], []
        for k, task in enumerate(tasks):
            problem = load_problem(str(task.domain_file), str(task.problem_file))
            if len(problem.get_objects()) > vocab.max_objects:
                attempts[k] = Attempt("unsolved", failure_reason=f"{len(problem.get_objects())} objects but "
                                                                 f"max_objects={vocab.max_objects}")
                continue
            batch.append(k)
            problems.append(problem)
        extra = {k: info[k] for k in ("parameters", "best_step") if info.get(k) is not None}
        extra["diverged_at"] = info.get("diverged_at")  # None: did not diverge (report: Table E.9 counts)
        if batch:
            results = self._decode(model, problems, vocab, vocab.max_objects, horizon, seed,
                                   [tasks[k].time_limit for k in batch])
            for k, res in zip(batch, results):
                attempts[k] = Attempt(res.outcome, res.plan, failure_reason=res.reason, wall_time=res.time_s,
                                      extra={"steps": res.steps, "time_per_step_s": round(res.time_per_step_s, 5),
                                             "strategy": "greedy heuristic guidance (Algorithm 4)", **extra})
        return attempts  # type: ignore[return-value]


__all__ = ["FAMILY", "HeuristicScorer", "ProblemTokens", "SATr"]
