"""EmbedPlan ("Textual Planning with Explicit Latent Transitions"; docs/papers/embedplan.md):
transition models over frozen sentence embeddings, evaluated by pool Hit@k under the six protocols
of its Appendix A.

One registered class, ``embedplan``; params blocks choose the transition network
(``arch: mlp | hyper``), the identity floor (``arch: identity``: z' = z_s in the sentence encoder's
space, nothing to train) or an untrained floor (:data:`UNTRAINED_VALUES`): ``untrained: true``, the
same residual network with random weights (Appendix D.6's words: "we evaluated the transition
function with randomly initialized weights"; the generated twin), or ``untrained: noskip``, the same
random weights without the identity skip ``z_s`` of Eq. 27 (near chance, the level Appendix D.6
reports; configured, never generated). Data: the ACPBench-domain datasets (stage ``acp_data``)
embedded by every encoder of ``acp.encoders`` (stage ``embed_acp``); protocols and seeds from the
``embedplan`` params block. The method has no ``plan`` task: it enters the Hit@k leaderboard only.

Train stage: for every (encoder, protocol, seed, task of :func:`planarena.protocols.pool.protocol_tasks`)
one model, saved as ``<model_dir>/<encoder slug>/<protocol>/<train_key>/seed<k>.pt`` with its
facts in ``facts.json``. A diverged run keeps its best weights and is recorded as ``diverged``.
Evaluate stage: one result record per (encoder, protocol, train key, test domain, seed) with
``hit@1/5/10`` (pool of ``embedplan.pool_size``), ``acc@1/5/10`` (action disambiguation over every
applicable ground action) and the teacher-forced ``plan_mean_hit@5`` / ``plan_exact_hit@5``.
"""

from __future__ import annotations

import json
from pathlib import Path

from planarena.config import get
from planarena.core.io import atomic_write_json, without_times
from planarena.methods.base import Budget, Method, ReportTraits, row_config, twin_traits, untrained_value
from planarena.methods.units import lost_unit

FAMILY = "embedplan-latent-transitions"

#: the block's ``untrained`` values besides false (:func:`untrained_mode`): ``True``, the untrained
#: twin (the residual network of Appendix B.1.3, Eq. 27, at its initial weights: what Appendix D.6
#: says it evaluated), and ``"noskip"``, the same initial weights predicting without the identity skip
#: (``z' = FFN([z_s; z_a])``), which ranks near chance (5/128 = 3.9 % Hit@5), the level D.6 and
#: Table 4 report for the paper's untrained baseline. With the skip, random weights leave the
#: prediction near the current state's own latent, a strong heuristic in the candidate pools, so the
#: ``True`` twin scores well above chance (docs/papers/embedplan.md#two-untrained-floors).
UNTRAINED_VALUES = (True, "noskip")
#: what each untrained value is, as the report names it (``True``'s "" keeps it the paper's floor:
#: the published columns set the paper's untrained row beside it)
UNTRAINED_VARIANTS = {True: "", "noskip": "untrained, no skip (~chance, as D.6 reports)"}


def untrained_mode(config: dict, name: str = "<row>") -> bool | str:
    """The block's ``untrained`` value: False (a learned row, or the identity floor), True (the
    residual network at its initial weights, Appendix D.6) or ``"noskip"`` (those weights without
    the identity skip of Eq. 27; see :data:`UNTRAINED_VALUES`).

    Raises:
        ValueError: another value, or ``noskip`` with ``arch: identity`` (which has no skip to drop);
            the message names the block.
    """
    value = untrained_value(config, name, UNTRAINED_VALUES)
    if value == "noskip" and config.get("arch") == "identity":
        raise ValueError(f"params: methods.{name}.untrained=noskip needs arch mlp or hyper (the identity floor "
                         "has no skip connection to drop)")
    return value


#: Appendix B.2.3, Table 6 ("Max Epochs | 400", "Early Stopping Patience | 100"); its batch size
#: row lists the values explored ("64, 128"), not the one chosen: no paper batch
PAPER_MAX_EPOCHS = 400


def _hyper(shared: dict) -> dict:
    """``embedplan.model`` + the block's ``model_params`` over EmbedPlanConfig's defaults (no
    validation: report_traits must not raise where the train stage reports the error)."""
    from dataclasses import MISSING, fields

    from planarena.methods.embedplan.model import EmbedPlanConfig

    return {**{f.name: f.default for f in fields(EmbedPlanConfig) if f.default is not MISSING}, **shared}


def _budget(shared: dict, params: dict) -> Budget:
    """One model's budget (per encoder, protocol, training task and seed): epochs x batch; the
    transitions per epoch depend on the protocol's data (samples None)."""
    p = _hyper(shared)
    cap = get(params, "embedplan.max_train_transitions", None)
    return Budget(steps=int(p["max_epochs"]), batch=int(p["batch_size"]),
                  unit="epochs (at most) over a protocol's training transitions x batch of transitions",
                  paper_steps=PAPER_MAX_EPOCHS, source="Appendix B.2.3, Table 6",
                  note=f"early stopping, patience {p['patience']} (paper: 100)"
                       + (f"; at most {cap} training transitions per model" if cap else ""))


def _ablations(cls, config: dict, params: dict) -> tuple[tuple[str, str], ...]:
    """Appendix G's ablations, declared from the paper's final configuration: the residual MLP
    against the hypernetwork (G.1), and the action-disambiguation loss against none (G.2:
    ``action_weight: 0``), each with the same other settings."""
    from planarena.methods.ablations import counterparts, plain

    base = get(params, "embedplan.model", {}) or {}

    def view(c: dict) -> dict:
        v = plain(c, untrained=False)
        p = _hyper({**base, **(v.pop("model_params", None) or {}), **({"arch": v["arch"]} if "arch" in v else {})})
        v.update(p)  # every hyperparameter, arch and action_weight included
        v["untrained"] = bool(v["untrained"])
        return v

    me, out = view(config), []
    if me["arch"] == "mlp":
        out += [(name, f"architecture: MLP vs {'HyperNetwork' if v['arch'] == 'hyper' else v['arch']}")
                for name, v in counterparts(cls, config, params, view, "arch") if v["arch"] != "identity"]
    if float(me["action_weight"]) > 0:
        out += [(name, "action-disambiguation loss: with vs without")
                for name, v in counterparts(cls, config, params, view, "action_weight")
                if float(v["action_weight"]) == 0]
    return tuple(out)


class EmbedPlan(Method):
    """EmbedPlan residual-MLP / hypernetwork transition model, or one of its untrained floors.

    Config (``methods.<name>``): ``arch`` (``mlp``/``hyper``), ``untrained`` (``false``, ``true``: the
    residual network at its initial weights, Appendix D.6; ``noskip``: those weights without the
    identity skip of Eq. 27, near chance; :data:`UNTRAINED_VALUES`),
    ``model_params`` (overrides of ``embedplan.model``, see
    :class:`planarena.methods.embedplan.model.EmbedPlanConfig`), ``protocols`` (default ``embedplan.protocols``),
    ``seeds`` (default ``evaluation.seeds``).
    """

    family = FAMILY
    tasks = frozenset({"rank_successors"})
    stochastic = True
    successor_protocols = ("pool",)
    uses_params = ("acp", "embedplan", "embed_text")
    data_deps = ("acp", "embeddings/acp")
    #: training runs on this torch device (Hit@k evaluation stays on the CPU)
    device_param = "embedplan.device"

    @classmethod
    def twin_variants(cls, config: dict) -> tuple:
        """The untrained twin of a trained network (``arch: mlp | hyper``); none for the identity
        floor or a twin (docs/concepts.md#untrained-twins). Only ``True`` is generated: the
        ``noskip`` floor (:data:`UNTRAINED_VALUES`) is configured by its own block, e.g.
        ``embedplan_mlp_noskip: {method: embedplan, arch: mlp, untrained: noskip, twin_of: embedplan_mlp}``
        (a generated twin would need its own ``methods`` key in params.yaml for DVC's stages)."""
        shared_arch = config.get("arch", "mlp")
        if config.get("untrained") or config.get("twin_of") or shared_arch == "identity":
            return ()
        return (True,)

    @classmethod
    def report_traits(cls, config: dict, params: dict) -> ReportTraits:
        """The untrained floor, or the trained network ``arch`` (picks the published column). The
        untrained network is its row's twin (:func:`twin_traits`, ``twin_of`` from its block); with
        ``untrained: true`` it is the paper's own floor by Appendix D.6's definition (no variant:
        the published columns set the paper's floor beside it), with ``untrained: noskip`` the
        variant :data:`UNTRAINED_VARIANTS` names (never raises: the stages report a bad value)."""
        if config.get("untrained"):
            value = config.get("untrained")
            noskip = isinstance(value, str) and value.strip().lower() == "noskip"
            return twin_traits(cls.report_traits(row_config(config), params), str(config.get("twin_of") or ""),
                               UNTRAINED_VARIANTS["noskip" if noskip else True])
        shared = {**(get(params, "embedplan.model", {}) or {}), **(config.get("model_params") or {})}
        arch = config.get("arch", shared.get("arch", "mlp"))
        floor = bool(config.get("untrained")) or arch == "identity"
        note = "EmbedPlan (state, action) ranks by cosine similarity to its predicted latent."
        # trained networks are read against the identity floor of their encoder (z' = z_s); the
        # untrained network is a floor of its own (the paper's)
        group = "" if config.get("untrained") else "text encoding"
        variant = "" if config.get("untrained") else str(arch)  # "identity": not the paper's floor
        return ReportTraits(role="floor" if floor else "model", variant=variant,
                            notes=(("pool", note),), floor_group=group,
                            budget=None if floor else _budget(shared, params),
                            ablations=() if floor else _ablations(cls, config, params))

    # -- configuration -----------------------------------------------------------------------

    def _cfg(self):
        from planarena.methods.embedplan.model import EmbedPlanConfig

        shared = dict(get(self.params, "embedplan.model", {}) or {})
        shared.update(self.config.get("model_params") or {})
        shared["arch"] = self.config.get("arch", shared.get("arch", "mlp"))
        return EmbedPlanConfig.from_dict(shared)

    def _untrained_mode(self) -> bool | str:
        """The block's ``untrained`` value (:func:`untrained_mode`, validated)."""
        return untrained_mode({**self.config, "arch": self._cfg().arch}, self.name)

    def _untrained(self) -> bool:
        """Nothing to train: an untrained floor (random weights, with or without the skip) or the
        identity floor."""
        return bool(self._untrained_mode()) or self._cfg().arch == "identity"

    def _protocols(self) -> list[str]:
        from planarena.protocols.pool import PROTOCOLS

        protos = list(self.config.get("protocols") or get(self.params, "embedplan.protocols", PROTOCOLS))
        bad = [p for p in protos if p not in PROTOCOLS]
        if bad:
            raise ValueError(f"params: methods.{self.name}.protocols has unknown {bad}; valid: {list(PROTOCOLS)}")
        return protos


    def _corpora(self):
        """``(encoder name, slug, Corpus)`` per encoder of ``acp.encoders``."""
        from planarena.datasets.acp import domains_available
        from planarena.features.text.acp import acp_encoders
        from planarena.features.text.encoder import encoder_slug
        from planarena.protocols.pool import build_corpus

        have = set(domains_available(self.layout.acp))
        domains = [d for d in get(self.params, "acp.domains") if d in have]
        if not domains:
            raise FileNotFoundError(f"{self.layout.acp}: no ACP datasets for acp.domains; run acp_data")
        for enc in acp_encoders(self.params):
            slug = encoder_slug(enc)
            yield enc, slug, build_corpus(self.layout.acp, self.layout.embeddings / "acp" / slug, domains)

    def _new_model(self, corpus, seed: int):
        """The network at its initial weights for ``seed``; the ``noskip`` floor gets the same
        weights and predicts without the identity skip (:func:`build_model`'s ``skip``)."""
        import torch

        from planarena.methods.embedplan.model import build_model

        torch.manual_seed(seed)
        d = corpus.table.state_emb.shape[1]
        return build_model(self._cfg(), d, corpus.table.action_emb.shape[1],
                           skip=self._untrained_mode() != "noskip")

    # -- train -------------------------------------------------------------------------------

    def train(self, model_dir: Path) -> dict:
        """Train one model per (encoder, protocol, seed, task); see the module docstring.

        The models are independent units run through :func:`planarena.core.executor.run_units`
        (``jobs`` processes, one compute thread each: the same weights for any ``jobs``). Wall
        times go to the train log (``*_s`` keys of the result), never into ``facts.json`` or the
        ``seed<k>.json`` files, which are DVC outputs.
        """
        import torch

        from planarena.methods.embedplan.model import count_parameters, train
        from planarena.protocols.pool import protocol_tasks
        from planarena.core.executor import run_units

        cfg = self._cfg()
        untrained = self._untrained()
        facts: dict = {"arch": cfg.arch, "untrained": untrained, "encoders": {}}
        if self._untrained_mode() == "noskip":
            facts["skip"] = False  # Eq. 27 without z_s (UNTRAINED_VALUES)
        times: dict[str, float] = {}
        params_count = None
        for enc, slug, corpus in self._corpora():
            enc_facts: dict = {"counts": corpus.counts, "runs": {}}
            units = []
            for protocol in self._protocols():
                for seed in self.seeds():
                    for task in protocol_tasks(corpus, protocol, seed, get(self.params, "embedplan.test_fraction", 0.2),
                                               get(self.params, "embedplan.max_train_transitions", None)):
                        key = f"{protocol}/{task.train_key}/seed{seed}"
                        if task.skipped:
                            enc_facts["runs"][key] = {"status": "skipped", "reason": task.skipped}
                            continue
                        if params_count is None:
                            params_count = count_parameters(self._new_model(corpus, seed))
                        if untrained:
                            enc_facts["runs"][key] = {"status": "ok", "untrained": True,
                                                      "train_transitions": int(len(task.train_rows))}
                            continue
                        units.append((key, protocol, task, seed))

            def fit(unit, corpus=corpus, slug=slug) -> dict:
                key, protocol, task, seed = unit
                model = self._new_model(corpus, seed)
                res = train(model, corpus.table, task.train_rows, cfg, seed,
                            device=self.torch_device())
                out = model_dir / slug / protocol / task.train_key
                out.mkdir(parents=True, exist_ok=True)
                torch.save(model.state_dict(), out / f"seed{seed}.pt")
                full = res.to_dict()
                atomic_write_json(out / f"seed{seed}.json", without_times(full), indent=1)
                full.pop("history")
                return {**full, "train_transitions": int(len(task.train_rows))}

            for (key, *_), run in zip(units, run_units(fit, units, jobs=self.jobs, desc=f"train {self.name} ({slug})",
                                                         device=self.unit_device(), on_failure=lost_unit)):
                times[f"{slug}/{key}"] = run.pop("train_time_s", None)
                enc_facts["runs"][key] = run
            facts["encoders"][slug] = enc_facts
        facts["parameters"] = params_count
        atomic_write_json(model_dir / "facts.json", facts, indent=1)
        return {"parameters": params_count, "train_time_s": round(float(sum(times.values())), 3),
                "runs": sum(len(e["runs"]) for e in facts["encoders"].values()),
                "counts": {s: e["counts"] for s, e in facts["encoders"].items()},
                "unit_times_s": times}

    def load(self, model_dir: Path) -> None:
        self.model_dir = model_dir
        f = model_dir / "facts.json"
        self._facts = json.loads(f.read_text()) if f.exists() else {}

    # -- evaluate ----------------------------------------------------------------------------

    def pool_records(self, done: set, fingerprint: str, train_facts: dict):
        """Yield one :class:`ResultRecord` (as dict) per (encoder, protocol, train key, test domain,
        seed) not in ``done`` (keys ``(protocol, domain, split, problem, seed)``), through the shared
        loop :func:`planarena.protocols.pool.task_records`; adds Acc@1/5/10 over every applicable
        ground action (the action-disambiguation view of the same model)."""
        import torch

        from planarena.methods.embedplan.model import evaluate_rows, project_states
        from planarena.protocols.pool import (
            PoolModel,
            hit_metrics,
            protocol_tasks,
            task_records,
        )

        pool = int(get(self.params, "embedplan.pool_size", 128))
        pessimistic = bool(get(self.params, "embedplan.pessimistic_ties", False))
        untrained = self._untrained()
        noskip = self._untrained_mode() == "noskip"
        facts = getattr(self, "_facts", {}) or {}
        for enc, slug, corpus in self._corpora():
            runs = ((facts.get("encoders") or {}).get(slug) or {}).get("runs") or {}
            for protocol in self._protocols():
                for seed in self.seeds():
                    for task in protocol_tasks(corpus, protocol, seed, get(self.params, "embedplan.test_fraction", 0.2),
                                               get(self.params, "embedplan.max_train_transitions", None)):
                        if task.skipped:
                            continue
                        run = runs.get(f"{protocol}/{task.train_key}/seed{seed}", {})

                        def load(corpus=corpus, slug=slug, protocol=protocol, task=task, seed=seed, run=run):
                            model, outcome, reason = self._new_model(corpus, seed), "solved", None
                            weights = getattr(self, "model_dir", self.layout.models / self.name) / slug / protocol / task.train_key / f"seed{seed}.pt"
                            if not untrained:
                                if not weights.exists():
                                    outcome, reason = "error", f"no trained model {weights}; run the train stage"
                                else:
                                    model.load_state_dict(torch.load(weights, weights_only=True))
                                    if run.get("status") == "diverged":
                                        outcome, reason = "diverged", "training loss became non-finite"
                            model.eval()
                            latents = project_states(model, corpus.table) if outcome != "error" else None

                            def rank(test):
                                res = evaluate_rows(model, corpus.table, test.rows, pool_size=pool,
                                                    distractors=test.distractors, seed=seed,
                                                    pessimistic_ties=pessimistic, latents=latents)
                                return res.rank, res.pool, hit_metrics(res, test.scored)

                            return PoolModel(outcome, reason, rank, extra={
                                "encoder": enc, "inputs": "state, action", "pool_size": pool,
                                **({"untrained": "noskip"} if noskip else {}),
                                **{k: run[k] for k in ("epochs", "best_epoch", "stopped") if k in run}})

                        yield from task_records(self, task, protocol, seed, slug, done, fingerprint, train_facts, load)
