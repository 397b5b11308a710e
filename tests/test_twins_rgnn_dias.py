"""Floors that isolate learning for the width-based R-GNN policies and DIAS.

Every learned row gets an untrained twin (``untrained: true``: the same search, lookahead, limits
and caps, the network at the initial weights its trained row starts from, no update), and a
lookahead policy also a uniform floor (``untrained: uniform``: a seeded uniform choice among the
same lookahead's candidates, no network). A DIAS twin is the model at initialisation read out as
schemas and measured like any run. The reviewer's finding that motivates them: after 12 DQN updates
``aiw_ext`` and ``iw_ext`` were "above floor" against the primitive random walk, i.e. IW(1) jumps
with an untrained scorer, not learning.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from conftest import generated_smoke_suite, smoke_profile_params
from planarena.config import Layout
from planarena.core.io import JsonlWriter, read_jsonl
from planarena.methods.base import ReportTraits

ROWS = ("aiw_ext", "flat_aa")


def _twins(params: dict, rows=ROWS) -> dict:
    """``params`` with the untrained twin and the uniform floor of each row (the learned row's
    block + ``untrained`` + ``twin_of``, as the params resolution generates them)."""
    m = params["methods"]
    for row in rows:
        m[f"{row}_untrained"] = {**m[row], "untrained": True, "twin_of": row}
        m[f"{row}_uniform"] = {**m[row], "untrained": "uniform", "twin_of": row}
    return params


@pytest.fixture(scope="module")
def suite(tmp_path_factory):
    """Smoke-sized generated Gripper and VisitAll (1-2 problems per split), one seed, in-process."""
    return generated_smoke_suite(tmp_path_factory.mktemp("twins"), "gripper", "visitall",
                                 params=_twins(smoke_profile_params()))


def _no_training(monkeypatch):
    """Make any DQN update, and (for the uniform floor) any network, fail loudly."""
    import planarena.methods.rgnn_policies.train as train_mod

    def refuse(*args, **kwargs):
        raise AssertionError("a twin must not train")

    monkeypatch.setattr(train_mod, "train_policy", refuse)
    monkeypatch.setattr(train_mod, "_train_policy", refuse)


@pytest.mark.parametrize("row", ROWS)
def test_rgnn_twins_run_end_to_end_without_training(suite, row, monkeypatch):
    """The untrained twin and the uniform floor of ``aiw_ext`` and ``flat_aa``: the train stage makes
    no DQN update (train.json: ``untrained``, steps 0; each unit 0 episodes), the uniform floor
    builds no network, and the evaluate stage writes one validated plan record per problem of the
    row's splits, through the row's own lockstep code and choice cap."""
    from planarena.methods.rgnn_policies import encodings
    from planarena.runner.stages import run_evaluate_stage, run_train_stage

    params, layout = suite
    _no_training(monkeypatch)
    cap = params["rgnn_policies"]["max_choices"]["flat" if row == "flat_aa" else "width"]
    for twin, mode in ((f"{row}_untrained", True), (f"{row}_uniform", "uniform")):
        if mode == "uniform":
            def no_network(*args, **kwargs):
                raise AssertionError("the uniform floor must not build a network")

            monkeypatch.setattr(encodings.PolicyNetwork, "__init__", no_network)
        info = run_train_stage(params, layout, twin)
        assert info["status"] == "ok" and info["untrained"] == mode and info["steps"] == 0 and not info["trained"]
        facts = json.loads((layout.models / twin / "facts.json").read_text())["domains"]
        units = [u for d in facts.values() for u in d.values()]
        assert units and all(u["episodes_run"] == 0 and u["updates"] == 0 and u["untrained"] == mode for u in units)
        weights = list((layout.models / twin).rglob("model.pt"))
        assert (len(weights) == len(units)) if mode is True else not weights
        rows = read_jsonl(run_evaluate_stage(params, layout, twin))
        plans = [r for r in rows if r["extra"].get("task", "plan") == "plan"]
        assert len(plans) == 6   # 2 domains x 3 held-out splits x 1 seed
        assert all(r["outcome"] in ("solved", "unsolved", "timeout") for r in plans)
        assert all(r["extra"]["untrained"] == mode and r["extra"]["choices"] <= cap for r in plans)
        assert all(r["validated"] for r in plans if r["outcome"] == "solved")


def test_untrained_twin_holds_the_rows_initial_weights(suite, monkeypatch):
    """The twin's ``model.pt`` is exactly the network the trained row starts DQN from (captured by
    replacing ``train_policy``), per seed; seeds 13 and 14 give different weights."""
    import planarena.methods.rgnn_policies.train as train_mod
    from planarena.methods.rgnn_policies.train import TrainResult
    from planarena.runner.stages import build_method

    params, layout = suite
    params = {**params, "evaluation": {**params["evaluation"], "seeds": [13, 14]}}
    start: dict = {}

    def capture(net, cache, problems, validation, cfg, seed, flat):
        domain = "gripper" if "gripper" in str(problems[0].get_domain().get_name()) else "other"
        start[domain, seed] = {k: v.detach().clone() for k, v in net.state_dict().items()}
        return TrainResult(state=start[domain, seed], best=(0.0, 0, 0.0), best_episode=0)

    monkeypatch.setattr(train_mod, "train_policy", capture)
    row = build_method("aiw_ext", params, layout)
    # a cache key of its own: the captured "model" must not stand for a trained one elsewhere
    monkeypatch.setattr(type(row), "_unit_key", lambda self, domain, seed, *a: f"capture-{domain}-{seed}")
    twin = build_method("aiw_ext_untrained", params, layout)
    tmp = layout.root.parent / "init-models"
    twin.train(tmp / "twin")
    row.train(tmp / "row")
    for seed in (13, 14):
        got = torch.load(tmp / "twin" / "gripper" / f"seed{seed}" / "model.pt", weights_only=True)
        want = start["gripper", seed]
        assert got.keys() == want.keys() and all(torch.equal(got[k], want[k]) for k in got)
    a = torch.load(tmp / "twin" / "gripper" / "seed13" / "model.pt", weights_only=True)
    b = torch.load(tmp / "twin" / "gripper" / "seed14" / "model.pt", weights_only=True)
    assert any(not torch.equal(a[k], b[k]) for k in a)


def _spanner(tmp_path: Path):
    """A Spanner-like problem with many choices per state (three men, a chain of links)."""
    from test_rgnn_policies import DOMAIN

    dom = tmp_path / "domain.pddl"
    dom.write_text(DOMAIN)
    prob = tmp_path / "p.pddl"
    prob.write_text("""(define (problem three-men) (:domain spanners)
  (:objects bob alice carl - man s1 s2 - spanner l0 l1 l2 l3 l4 - location)
  (:init (at bob l0) (at alice l1) (at carl l2) (at s1 l3) (at s2 l4)
         (link l0 l1) (link l1 l2) (link l2 l3) (link l3 l4) (link l1 l3) (link l0 l2))
  (:goal (and (carrying bob s2))))
""")
    return dom, prob


@pytest.mark.parametrize("kind", ["aiw", "flat"])
def test_uniform_choices_are_seeded_per_problem(tmp_path, kind):
    """The uniform floor: same seed -> the same plan (whatever it is batched with), other seeds ->
    other plans; it only ever picks an unvisited candidate of the lookahead, so its plans are
    valid."""
    from planarena.core.pddl import fresh_problem
    from planarena.core.validation import validate_plan
    from planarena.methods.rgnn_policies.lookahead import object_types
    from planarena.methods.rgnn_policies.method import uniform_seed
    from planarena.methods.rgnn_policies.policy import LookaheadCache, UniformChoice, greedy_episodes

    dom, prob = _spanner(tmp_path)

    def run(seed: int, batch: int = 1):
        problems = [fresh_problem(dom, prob) for _ in range(batch)]
        cache = LookaheadCache(kind, with_deltas=False)
        for p in problems:
            cache.add(p, object_types(prob, dom))
        # the first problem is named "p" alone or in a batch: its draws must not change
        chooser = UniformChoice({p: uniform_seed(seed, "spanner", f"p{i}" if i else "p")
                                 for i, p in enumerate(problems)})
        eps = greedy_episodes(chooser, cache, problems, 40, [30.0] * batch)
        return [tuple(str(a) for a in e.plan) if e.plan is not None else (e.outcome, e.choices) for e in eps]

    first = run(13)[0]
    assert run(13)[0] == first == run(13, batch=3)[0]
    plans = {run(s)[0] for s in range(13, 25)}
    assert len(plans) > 1   # other seeds, other choices (outcomes or choice counts differ)
    solved = [p for p in plans if p and p[0].startswith("(")]
    assert solved and all(validate_plan(dom, prob, list(p)).valid for p in solved)


def test_twin_fingerprints_and_config_checks(suite):
    """A twin's records can never pass for the learned row's (its config fingerprint differs, and
    the two twins' differ); ``untrained`` and ``twin_of`` are accepted keys, another ``untrained``
    value is refused."""
    from planarena.methods.rgnn_policies.method import RGNNPolicy
    from planarena.runner.stages import build_method, config_fingerprint

    params, layout = suite
    prints = {n: config_fingerprint(build_method(n, params, layout), params, layout)
              for n in ("aiw_ext", "aiw_ext_untrained", "aiw_ext_uniform")}
    assert len(set(prints.values())) == 3
    # a lockstep row's records depend on its batch (test below), a per-problem row's do not
    other = {**params, "evaluation": {**params["evaluation"], "lockstep_batch": 3, "jobs": 7}}
    for name, lockstep in (("aiw_ext", True), ("random_walk", False)):
        method = build_method(name, params, layout)
        assert method.lockstep is lockstep
        assert (config_fingerprint(method, other, layout) != config_fingerprint(method, params, layout)) is lockstep
    with pytest.raises(ValueError, match="untrained"):
        RGNNPolicy("bad", {"lookahead": "aiw", "encoding": "ext", "untrained": "sometimes"}, params, layout)


def test_rgnn_twin_report_traits():
    """Twins are floors of their row's kind, mirroring it (``twin_of``), with no budget; the learned
    rows get both twins (``twin_variants``), a twin none."""
    from planarena.methods.rgnn_policies.method import RGNNPolicy

    params = smoke_profile_params()
    for row, kind, candidates in (("aiw_ext", "lookahead policy", "AIW(1) candidates"),
                                  ("iw_ad", "lookahead policy", "IW(1) candidates"),
                                  ("flat_aa", "policy", "primitive successors")):
        config = params["methods"][row]
        learned = RGNNPolicy.report_traits(config, params)
        assert learned.role == "model" and learned.twin_of == "" and learned.budget is not None
        assert RGNNPolicy.twin_variants(config) == (True, "uniform")
        for mode, variant in ((True, "untrained twin"), ("uniform", f"uniform among {candidates}")):
            twin_config = {**config, "untrained": mode, "twin_of": row}
            t = RGNNPolicy.report_traits(twin_config, params)
            assert isinstance(t, ReportTraits)
            assert (t.role, t.twin_of, t.kind, t.floor_kinds, t.budget, t.variant) == \
                ("floor", row, kind, (kind,), None, variant)
            assert t.horizon == learned.horizon and t.ablations == ()
            assert RGNNPolicy.twin_variants(twin_config) == ()
        # the twins are no ablation counterparts of the learned rows
        with_twins = _twins(smoke_profile_params(), rows=(row,))
        assert all(not name.endswith(("_untrained", "_uniform"))
                   for name, _ in RGNNPolicy.report_traits(config, with_twins).ablations)


# -- DIAS -----------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def schema_layout(tmp_path_factory) -> Layout:
    """Smoke-profile schema data (Blocks-3: a 4-block walk instance, 5/6/7-block test problems)."""
    from planarena.datasets import schema as schema_data

    layout = Layout(root=tmp_path_factory.mktemp("schema-twins") / "data")
    schema_data.run_stage(smoke_profile_params(), layout)
    return layout


def test_dias_twin_is_the_model_at_initialisation_and_is_measured(schema_layout, tmp_path, monkeypatch):
    """The DIAS twin trains no step (facts: ``untrained``, steps 0), its weights are those a learned
    row starts from (a learned run whose optimiser steps do nothing ends where the twin is), and
    the learn_schema protocol measures its read-out schemas like any run's."""
    from planarena.methods.dias.method import Dias
    from planarena.protocols import schema as protocol
    from planarena.runner.stages import EvalContext

    params = smoke_profile_params()
    params["jobs"] = 1
    base = {"observation": "strips", "seeds": [13], "max_test_problems": 1,
            "overrides": {"steps": 4, "eval_every": 4}}   # the learned run below: a few (void) steps
    twin_cfg = {**base, "untrained": True, "twin_of": "dias_strips"}
    params["methods"] = {"dias_strips": base, "dias_strips_untrained": twin_cfg}
    twin = Dias("dias_strips_untrained", twin_cfg, params, Layout(root=schema_layout.root))
    info = twin.train(tmp_path / "twin")
    assert info["untrained"] is True and info["steps"] == 0 and info["trained"] is False
    unit = tmp_path / "twin" / "blocks3" / "seed13"
    facts = json.loads((unit / "facts.json").read_text())
    assert facts["untrained"] is True and facts["steps"] == 0 and facts["steps_run"] == 0
    assert (unit / "domain.pddl").exists()

    monkeypatch.setattr(torch.optim.AdamW, "step", lambda self, closure=None: None)
    row = Dias("dias_strips", base, params, Layout(root=schema_layout.root))
    row.train(tmp_path / "row")
    still = torch.load(tmp_path / "row" / "blocks3" / "seed13" / "model.pt", weights_only=True)
    assert json.loads((tmp_path / "row" / "blocks3" / "seed13" / "facts.json").read_text())["steps_run"] > 0
    init = torch.load(unit / "model.pt", weights_only=True)
    assert init.keys() == still.keys() and all(torch.equal(init[k], still[k]) for k in init)

    twin.load(tmp_path / "twin")
    out = tmp_path / "twin.jsonl"
    with JsonlWriter(out) as w:
        ctx = EvalContext(method=twin, settings=params["evaluation"], seeds=[13], problems=None,
                          fingerprint="x", train_info={}, train_facts={}, kept=[], writer=w)
        protocol.run(ctx)
    schema_row, *plans = read_jsonl(out)
    assert schema_row["extra"]["task"] == "learn_schema" and schema_row["outcome"] == "solved"
    assert schema_row["extra"]["untrained"] is True and schema_row["extra"]["steps"] == 0
    assert schema_row["extra"]["test_states"] == 20   # 1 test problem x 20 states
    for key in ("precision", "recall", "sound", "complete"):
        assert key in schema_row["extra"]
    assert len(plans) == 1 and all(r["extra"]["task"] == "plan" for r in plans)


def test_a_killed_dias_training_keeps_its_finished_units_and_resumes_the_running_one(schema_layout, tmp_path,
                                                                                      monkeypatch):
    """Seed 13 finishes, seed 14 is killed after its checkpoint at step 5: the rerun trains seed 13
    no more, resumes seed 14 at step 5, and both models are those of an uninterrupted training."""
    import planarena.methods.dias.train as dias_train
    from planarena.methods.dias.method import Dias

    params = smoke_profile_params()
    params["jobs"] = 1
    base = {"observation": "strips", "seeds": [13, 14], "overrides": {"steps": 8, "eval_every": 4}}
    params["methods"] = {"dias_strips": base}
    monkeypatch.setattr(dias_train, "CHECKPOINT_EVERY", 5)
    real, calls = dias_train.tau_schedule, []

    def schedule(step, *args):
        calls.append(step)
        if kill_at and len(calls) == kill_at:
            raise KeyboardInterrupt("killed")
        return real(step, *args)

    monkeypatch.setattr(dias_train, "tau_schedule", schedule)
    kill_at = None
    clean = Dias("dias_strips", base, params, Layout(root=schema_layout.root))
    clean.train(tmp_path / "clean")
    assert calls == [0, *range(8)] * 2
    row = Dias("dias_strips", base, params, Layout(root=schema_layout.root))
    units = schema_layout.cache / "dias" / f"{row._train_key()}.units"
    assert not units.exists()   # removed once the clean run's stage ended
    calls.clear()
    kill_at = 9 + 1 + 7          # seed 13's 9 calls, then seed 14's start and steps 0-6: killed at step 6
    with pytest.raises(KeyboardInterrupt):
        row.train(tmp_path / "row")
    assert (units / "blocks3" / "seed13" / "unit.json").exists() and (units / "blocks3" / "seed14.ckpt").exists()
    calls.clear()
    kill_at = None
    row.train(tmp_path / "row")
    assert calls == [0, 5, 6, 7]   # seed 13 not trained again; seed 14 from its checkpoint
    assert not units.exists()
    for seed in (13, 14):
        a = torch.load(tmp_path / "clean" / "blocks3" / f"seed{seed}" / "model.pt", weights_only=True)
        b = torch.load(tmp_path / "row" / "blocks3" / f"seed{seed}" / "model.pt", weights_only=True)
        assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
        fa, fb = (json.loads((tmp_path / d / "blocks3" / f"seed{seed}" / "facts.json").read_text())
                  for d in ("clean", "row"))
        assert fa == fb


def test_dias_twin_traits_and_checks(tmp_path):
    from planarena.methods.dias.method import Dias

    params = smoke_profile_params()
    config = params["methods"]["dias_names"]
    assert Dias.twin_variants(config) == (True,)
    learned = Dias.report_traits(config, params)
    assert learned.role == "model" and learned.budget is not None and learned.twin_of == ""
    twin_config = {**config, "untrained": True, "twin_of": "dias_names"}
    t = Dias.report_traits(twin_config, params)
    assert (t.role, t.twin_of, t.kind, t.floor_kinds, t.budget, t.variant) == \
        ("floor", "dias_names", "search", ("search",), None, "untrained twin")
    assert Dias.twin_variants(twin_config) == ()
    with pytest.raises(ValueError, match="untrained"):
        Dias("bad", {**config, "untrained": "uniform"}, params, Layout(root=tmp_path))


@pytest.mark.parametrize("encoding", ["ad", "ext"])
def test_network_policy_plan_does_not_depend_on_its_lockstep_batch(tmp_path, encoding):
    """An R-GNN policy's choices, outcome and choice count for a problem alone equal those for the
    same problem in a batch of three here (the batched forward pass scores each problem's candidates
    as its own pass does, up to float rounding). Not in general: the rounding depends on the batch,
    and an untrained network's near-tied Q-values can then pick another action (`flat_aa_untrained`
    on a 49-cell VisitAll), so ``evaluation.lockstep_batch`` is part of a lockstep method's config
    fingerprint (test_runner)."""
    import torch

    from planarena.core.pddl import fresh_problem
    from planarena.methods.rgnn_policies.lookahead import object_types
    from planarena.methods.rgnn_policies.policy import LookaheadCache, PolicyNetwork, greedy_episodes

    dom, prob = _spanner(tmp_path)
    other = tmp_path / "q.pddl"   # another problem of the domain in the batch: another goal and graph
    other.write_text(prob.read_text().replace("(problem three-men)", "(problem other)")
                     .replace("(carrying bob s2)", "(carrying carl s1)").replace(" (link l0 l2)", ""))

    def run(files):
        problems = [fresh_problem(dom, f) for f in files]
        cache = LookaheadCache("aiw", with_deltas=encoding == "ad")
        for p, f in zip(problems, files):
            cache.add(p, object_types(f, dom))
        torch.manual_seed(3)
        net = PolicyNetwork(problems[0].get_domain(), encoding, 8, 2)
        eps = greedy_episodes(net, cache, problems, 40, [30.0] * len(files))
        return [(e.outcome, e.choices, tuple(str(a) for a in e.plan) if e.plan is not None else None) for e in eps]

    alone, other_alone = run([prob])[0], run([other])[0]
    together = run([prob, other, prob])
    assert together == [alone, other_alone, alone]
    assert alone[1] > 1   # the episode made several choices: the batch had the chance to matter
