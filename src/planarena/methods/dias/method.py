"""DIAS (Differentiable Induction of Action Schemas) as a registry method (``dias``, task
``learn_schema``).

Source: Reiter, Gebler, Geffner, "Differentiable Learning of Lifted Action Schemas for Classical
Planning" (docs/papers/dias.md). One params block per setting of the paper: ``observation``
(``strips`` | ``strips_plus`` | ``names``: Table 1's three columns), ``noise`` (expected flipped
atoms per transition: Table 2) and ``effects`` (``strips``, or ``mlp``: the MLP-effects ablation of
Section 5.4 / Table 3, which yields no PDDL domain: its learned preconditions and MLP predict the
successors, :mod:`planarena.methods.dias.successors`, compared with the true domain's on the same
test states; nothing is planned with it).

Train stage: one model per (schema domain, seed) on ``data/schema/<domain>`` (walk transitions of the
small instance; a noise block reads the longer walk with N_min = 200 per action name, Appendix A.4.2),
trained as the paper's Appendix A.2.2 says (:mod:`planarena.methods.dias.train`);
the schemas are read off its parameters (Section 4.5) and written as a PDDL domain,
``data/models/<method>/<domain>/seed<seed>/domain.pddl`` (a DVC output). Evaluation is the
``learn_schema`` protocol (:mod:`planarena.protocols.schema`): successor sets against the true domain
on the BFS test states, and Fast Downward planning with the learned file.

Hyperparameters come from the ``dias`` params section (``model``, ``train``, then
``by_observation.<observation>``, ``slots``, ``alpha`` per domain, ``device``, ``noise`` for noise
blocks); a block's ``overrides`` win.

Untrained twin (docs/papers/dias.md#untrained-twin): a block with ``untrained: true`` and
``twin_of: <row>`` is that row's model at initialisation (the same settings, data, seeds and
``torch.manual_seed``, zero gradient steps), read out as schemas at the same threshold and measured
by the same protocol: a floor for what training adds.
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

from planarena.config import get, torch_device
from planarena.core.io import derive_seed
from planarena.core.pddl import parse_domain
from planarena.core.strips import Literal, Schema, StripsDomain
from planarena.datasets.schema import configured_domains
from planarena.methods.base import Budget, LearnedDomain, Method, ReportTraits, row_config, twin_traits, untrained_value
from planarena.methods.units import save_unit, train_units

FAMILY = "dias-action-schemas"
OBSERVATION_NAMES = {"strips": "full STRIPS actions", "strips_plus": "STRIPS+ actions", "names": "action names only"}


def _section(params: dict) -> dict:
    return get(params, "dias", {}) or {}


def resolved_settings(params: dict, config: dict, domain: str | None = None) -> dict:
    """The hyperparameters of one run of the block ``config``: the ``dias`` section's ``model`` and
    ``train``, then ``by_observation.<observation>``, the slots, the domain's ``alpha``, ``noise``
    for a noise block (Appendix A.4.2: batch 50, tau floor 0.1, threshold 0.75), the block's
    ``overrides`` last. Keys the params do not set are DiasConfig's defaults (Appendix A.2.2). A.4.2's
    N_min = 200 of the noise rows is a property of their training walk, not a training setting
    (``schema.noise_n_min``, :func:`planarena.datasets.schema.noise_bounds`)."""
    sec = _section(params)
    alpha = (sec.get("alpha") or {}).get(domain, sec.get("default_alpha", 1.0))
    by = (sec.get("by_observation") or {}).get(config.get("observation", "names")) or {}
    out = {**(sec.get("model") or {}), **(sec.get("train") or {}), **(by.get("model") or {}),
           **(by.get("train") or {}), "slots": sec.get("slots", 5),
           "alpha": alpha, "threshold": sec.get("threshold", 0.5), "device": sec.get("device", "cpu")}
    if float(config.get("noise", 0) or 0):
        out.update(sec.get("noise") or {})
    out.update(config.get("overrides") or {})
    return out


#: Appendix A.2.2: "batch size 200, and 10 000 gradient steps with stratified action-balanced
#: batches"; A.4.2 (noise runs): "reduce the batch size to 50" (the steps unchanged)
PAPER_STEPS, PAPER_BATCH, PAPER_NOISE_BATCH = 10_000, 200, 50


def _budget(config: dict, params: dict) -> Budget:
    """One model's budget (per schema domain and seed): gradient steps x action-balanced batch of
    transitions; DiasConfig's defaults (the paper's) where the params set none."""
    s = resolved_settings(params, config)
    steps, batch = int(s.get("steps", PAPER_STEPS)), int(s.get("batch", PAPER_BATCH))
    noisy = bool(float(config.get("noise", 0) or 0))
    paper_batch = PAPER_NOISE_BATCH if noisy else PAPER_BATCH
    return Budget(steps=steps, batch=batch, samples=steps * batch,
                  unit="gradient steps x action-balanced batch of transitions",
                  paper_steps=PAPER_STEPS, paper_batch=paper_batch, paper_samples=PAPER_STEPS * paper_batch,
                  source="Appendix A.4.2" if noisy else "Appendix A.2.2",
                  note="one model per (schema domain, seed)")


class Dias(Method):
    """DIAS on one observation variant (params block keys: ``observation``, ``noise``, ``effects``,
    ``seeds``, ``domains``)."""

    family = FAMILY
    device_param = "dias.device"
    tasks = frozenset({"learn_schema"})
    uses_params = ("dias",)
    data_deps = ("schema",)

    @classmethod
    def report_traits(cls, config: dict, params: dict) -> ReportTraits:
        obs = config.get("observation", "names")
        noise = float(config.get("noise", 0) or 0)
        variant = (OBSERVATION_NAMES.get(obs, obs) + (f", {noise:g} flips" if noise else "")
                   + (", MLP effects (Table 3)" if config.get("effects", "strips") == "mlp" else ""))
        info = (("DIAS (schema learning)",
                 "R-GCN object keys, per-action slot queries matched by a rectangular Sinkhorn with a slack row, "
                 "STRIPS preconditions / effects as softmax parameters over slot pairs; trained to predict s' from "
                 "(s, action label); schemas read off the parameters at threshold 0.5 (Section 4.5)"),)
        if untrained_mode(config):
            # the row's model at initialisation, read out and planned with like the row: a floor of
            # the row's kind ("search": LAMA on the learned domain), read against that row
            return twin_traits(cls.report_traits(row_config(config), params), str(config.get("twin_of") or ""))
        return ReportTraits(role="model", variant=variant, info=info, budget=_budget(config, params))

    def __init__(self, name, config, params, layout):
        super().__init__(name, config, params, layout)
        self.observation = config.get("observation", "names")
        if self.observation not in OBSERVATION_NAMES:
            raise ValueError(f"params: methods.{name}.observation={self.observation!r}; "
                             f"one of {', '.join(OBSERVATION_NAMES)}")
        self.noise = float(config.get("noise", 0) or 0)
        self.effects = config.get("effects", "strips")
        if self.effects not in ("strips", "mlp"):
            raise ValueError(f"params: methods.{name}.effects={self.effects!r}; one of strips, mlp")
        self.untrained = untrained_mode(config, name)
        self.model_dir: Path | None = None

    @property
    def plans_with_learned_domain(self) -> bool:
        """MLP effects (Table 3) give no PDDL domain: nothing to plan with."""
        return self.effects == "strips"

    # -- training --------------------------------------------------------------------------------
    def settings(self, domain: str) -> dict:
        """The resolved hyperparameters of one domain's run (:func:`resolved_settings`)."""
        return resolved_settings(self.params, self.config, domain)

    def domains(self) -> list[str]:
        from planarena.core.problemset import ProblemSet

        return configured_domains(self.params, self.config, ProblemSet(self.layout.schema).domains)

    def _train_key(self) -> str:
        """Content key of this row's training: everything a unit's run reads (the row's block, the
        ``dias`` params, the schema data, the family's code)."""
        from planarena.core.fingerprint import folder_hash
        from planarena.methods.units import training_key

        return training_key({"config": self.config, "dias": get(self.params, "dias", {}),
                             "schema": folder_hash(self.layout.schema)},
                            "planarena.methods.dias", ("method", "train", "model", "data"))

    def train(self, model_dir: Path) -> dict:
        """One model per (schema domain, seed): ``<domain>/seed<seed>/{model.pt, facts.json, domain.pddl}``.

        A run of the paper's size takes about an hour per unit on one core, so a learned row's
        training survives a kill: finished units wait in ``<cache>/dias/<key>.units`` until the
        stage ends (:func:`planarena.methods.units.train_units`), and each running unit
        checkpoints every :data:`~planarena.methods.dias.train.CHECKPOINT_EVERY` steps beside
        them; a rerun resumes both, with the results of an uninterrupted run."""
        root = self.layout.schema
        domains = self.domains()
        units = None if self.untrained else self.layout.cache / "dias" / f"{self._train_key()}.units"

        def fit(unit: tuple[str, int]) -> dict:
            domain, seed = unit
            return fit_unit(self, root, domain, seed, model_dir / domain / f"seed{seed}",
                            checkpoint=units / domain / f"seed{seed}.ckpt" if units else None)

        facts, times = train_units(fit, domains, self.seeds(), self.jobs, desc=f"train {self.name}",
                                   device=self.unit_device(), model_dir=model_dir if units else None, keep=units)
        from planarena.core.io import atomic_write_json

        atomic_write_json(model_dir / "facts.json", facts)
        if units is not None:   # every unit is in model_dir now: the kept copies have done their job
            shutil.rmtree(units, ignore_errors=True)
        twin = {"trained": False, "untrained": True, "steps": 0} if self.untrained else {}
        return {"trained": True, "observation": self.observation, "noise": self.noise, **twin,
                "parameters": max((f.get("parameters", 0) for d in facts["domains"].values() for f in d.values()),
                                  default=0),
                "train_time_s": round(sum(t or 0 for t in times.values()), 3), "unit_times_s": times}

    # -- evaluation ------------------------------------------------------------------------------
    def load(self, model_dir: Path) -> None:
        self.model_dir = Path(model_dir)

    def learned_domain(self, domain: str, seed: int) -> LearnedDomain:
        unit = self.model_dir / domain / f"seed{seed}"
        facts_file = unit / "facts.json"
        if not facts_file.exists():
            return LearnedDomain("error", failure_reason=f"{unit}: no trained model; run the train stage")
        facts = json.loads(facts_file.read_text())
        extra = {"observation": self.observation, "effects": self.effects, "noise": self.noise,
                 "arities": facts.get("arities"), "steps": facts.get("steps")}
        if self.untrained:
            extra["untrained"] = True
        if facts.get("diverged"):
            return LearnedDomain("diverged", failure_reason=f"training diverged at step {facts.get('diverged_at')}",
                                 extra=extra)
        if self.effects == "mlp":
            from planarena.methods.dias.successors import load_mlp_successors

            if not (unit / "preconditions.pddl").exists():
                return LearnedDomain("error", failure_reason=facts.get("reason") or "no learned preconditions written",
                                     extra=extra)
            return LearnedDomain("solved", successors=load_mlp_successors(unit, self.layout.schema, domain),
                                 extra=extra)
        if not (unit / "domain.pddl").exists():
            return LearnedDomain("error", failure_reason=facts.get("reason") or "no learned domain written", extra=extra)
        return LearnedDomain("solved", path=unit / "domain.pddl", extra=extra)


def untrained_mode(config: dict, name: str = "<row>") -> bool:
    """The block's ``untrained`` value: False (a learned row) or True (its untrained twin; DIAS has
    no other floor: it chooses among no candidates, so ``uniform`` is refused).

    Raises:
        ValueError: another value (names the block).
    """
    return untrained_value(config, name)


def learned_strips(name: str, predicates, schemas) -> StripsDomain:
    """The learned schemas (:class:`planarena.methods.dias.model.LearnedSchema`) as a STRIPS domain
    named ``name`` (the true domain's name: problems name it), parameters bound injectively
    (Section 3's assumption, written as inequalities)."""
    out = []
    for s in schemas:
        lit = lambda items, positive=True: tuple(Literal(p, tuple(args), positive) for p, args in items)  # noqa: E731
        out.append(Schema(name=s.name, parameters=tuple(s.parameters),
                          precondition=lit(s.pre_pos) + lit(s.pre_neg, False),
                          add=lit(s.add), delete=lit(s.delete), distinct=True))
    return StripsDomain(name=name, predicates=tuple(predicates), schemas=tuple(out))


def fit_unit(method: Dias, root: Path, domain: str, seed: int, out: Path, checkpoint: Path | None = None) -> dict:
    """Train one (domain, seed) model, write its learned domain and facts; never raises for a
    diverged run (the facts say so). ``checkpoint``: the run's checkpoint file
    (:func:`planarena.methods.dias.train.train`), removed once the outputs are written."""
    import torch

    from planarena.methods.dias.data import add_noise, known_arguments, load_domain
    from planarena.methods.dias.model import Vocab, derive
    from planarena.methods.dias.train import DiasConfig, TransitionData, train

    start = time.perf_counter()
    s = method.settings(domain)
    if method.untrained:  # the twin: the same initialisation, no gradient step
        s = {**s, "steps": 0}
    data = load_domain(root, domain, noise=bool(method.noise))
    cfg = DiasConfig.from_params({**s, "observation": method.observation, "effects": method.effects,
                                  "device": torch_device(s.get("device", "cpu"), "dias.device")})
    vocab = Vocab(predicates=data.predicates,
                  actions=tuple((a, n if method.observation == "strips" else None) for a, n in data.actions))
    slots = cfg.slots
    unary = torch.tensor([a == 1 for _, a in data.predicates])

    def tensors(t, tag: str) -> "TransitionData":
        A, A_next = t.A, t.A_next
        if method.noise and tag == "train":
            g = torch.Generator().manual_seed(derive_seed(seed, domain, "noise"))
            A, A_next = add_noise(A, method.noise / 2, unary, g), add_noise(A_next, method.noise / 2, unary, g)
        return TransitionData(A=A, A_next=A_next, action=t.action,
                              known=known_arguments(data, t, method.observation, slots))

    model, facts = train(cfg, vocab, tensors(data.train, "train"), tensors(data.validation, "validation"),
                         seed=derive_seed(seed, domain, "dias"), progress=False, checkpoint=checkpoint)
    facts.pop("seconds", None)  # wall time: not in a DVC-tracked file (train_time_s goes to the log)
    info = {**facts, "domain": domain, "seed": seed, "train_file": data.train_file,
            "train_transitions": len(data.train)}
    if method.untrained:
        info["untrained"] = True
    if not facts.get("diverged"):
        schemas = derive(model, vocab, cfg.threshold)
        name = parse_domain(root / domain / "domain.pddl").get_name()
        out.mkdir(parents=True, exist_ok=True)
        # MLP effects (Table 3): the schemas carry the learned preconditions only (no static effects);
        # written apart so that nothing takes them for a planning domain
        target = "preconditions.pddl" if method.effects == "mlp" else "domain.pddl"
        learned_strips(name, data.predicates, schemas).write(out / target)
        info["arities"] = {sch.name: len(sch.parameters) for sch in schemas}
    save_unit(out, None if facts.get("diverged") else model.state_dict(), info)
    if checkpoint is not None:
        Path(checkpoint).unlink(missing_ok=True)
    info["train_time_s"] = round(time.perf_counter() - start, 3)
    return info
