"""The SATr encoder as a registry method on a smoke-sized suite: train per (domain, seed) with
checkpoint selection, plan by greedy heuristic guidance (Algorithm 4), validate every plan."""

from __future__ import annotations

import json

import pytest
from conftest import only_domains

pytest.importorskip("torch")

from planarena.core.io import read_jsonl  # noqa: E402
from planarena.core.problemset import ProblemEntry, ProblemSet  # noqa: E402
from planarena.core.validation import validate_plan  # noqa: E402
from planarena.datasets.suites import run_stage as generate  # noqa: E402
from planarena.runner.stages import run_evaluate_stage, run_train_stage  # noqa: E402


@pytest.fixture(scope="module")
def suite(tmp_path_factory):
    import yaml
    from conftest import ROOT

    from planarena.config import Layout, resolve_profile

    doc = yaml.safe_load((ROOT / "params.yaml").read_text())
    doc["profile"] = "smoke"
    params = only_domains(resolve_profile(doc), "gripper", "logistics")
    params["jobs"] = 2
    params["evaluation"]["seeds"] = [13, 14]
    layout = Layout(root=tmp_path_factory.mktemp("satr") / "data")
    generate(params, layout)
    return params, layout


def test_train_guide_validate(suite):
    params, layout = suite
    name = "satr_encoder_cl"
    params["transformers"]["max_states"] = 5000
    info = run_train_stage(params, layout, name)
    assert info["status"] == "ok", info
    facts = json.loads((layout.models / name / "facts.json").read_text())["domains"]
    for seed in ("seed13", "seed14"):
        g = facts["gripper"][seed]
        assert g["status"] == "ok" and g["checkpoint"] and g["steps_run"] == params["transformers"]["train"]["steps"]
        assert g["best_step"] in (15, 30) and g["parameters"] > 0 and g["train_states"] > 0
        # Logistics state spaces exceed max_states: no model, with the reason
        assert facts["logistics"][seed]["status"] == "no data" and "max_states" in facts["logistics"][seed]["reason"]
    run_evaluate_stage(params, layout, name)
    recs = [r for r in read_jsonl(layout.results / f"{name}.jsonl") if r["extra"]["task"] == "plan"]
    ps = ProblemSet(layout.problems)
    held_out = [e for e in ps.entries if e.split in params["transformers"]["splits"]]
    assert len(recs) == 2 * len(held_out)  # every held-out problem, both seeds
    for r in recs:
        if r["domain"] == "logistics":
            assert r["outcome"] == "unsolved" and r["failure_reason"].startswith("no model:")
            continue
        assert r["outcome"] in ("solved", "unsolved", "timeout")
        assert r["extra"]["strategy"] == "guidance" and r["extra"]["model"] == "SATr encoder with CL"
        assert r["extra"]["steps"] <= params["transformers"]["horizon"]
        if r["outcome"] == "solved":  # Algorithm 4 applies applicable actions only: every plan validates
            e = next(e for e in ps.entries if e.key == (r["domain"], r["split"], r["problem"]))
            assert r["validated"] and validate_plan(ps.domain_file(e.domain), ps.problem_file(e), r["plan"]).valid
    # resuming writes nothing new
    before = len(read_jsonl(layout.results / f"{name}.jsonl"))
    run_evaluate_stage(params, layout, name)
    assert len(read_jsonl(layout.results / f"{name}.jsonl")) == before


def test_problem_with_more_objects_than_tokens_is_unsolved_with_the_reason(suite):
    params, layout = suite
    params = json.loads(json.dumps(params))
    params["transformers"]["max_states"] = 5000
    params["methods"]["satr_small_vocab"] = {"method": "satr", "arch": "encoder", "contrastive": False}
    params["transformers"]["max_objects"] = 8   # gripper: 2 rooms, 2 grippers, robot + balls
    run_train_stage(params, layout, "satr_small_vocab")
    run_evaluate_stage(params, layout, "satr_small_vocab")
    recs = read_jsonl(layout.results / "satr_small_vocab.jsonl")
    big = [r for r in recs if r["domain"] == "gripper" and r["objects"] > 8]
    assert big and all(r["outcome"] == "unsolved" and "max_objects=8" in r["failure_reason"] for r in big)


def test_unknown_arch_names_the_param(suite):
    from planarena.runner.stages import build_method

    params, layout = suite
    params = json.loads(json.dumps(params))
    params["methods"]["satr_x"] = {"method": "satr", "arch": "decoder"}
    with pytest.raises(ValueError, match=r"methods.satr_x.arch='decoder'"):
        build_method("satr_x", params, layout)
    params["methods"]["satr_y"] = {"method": "satr", "arch": "encdec", "decoding": "beam"}
    with pytest.raises(ValueError, match=r"methods.satr_y.decoding='beam'"):
        build_method("satr_y", params, layout)


@pytest.mark.parametrize("arch", ["encdec", "plangpt"])
def test_plan_generators_train_once_per_model_and_decode_with_each_strategy(suite, arch):
    """The three decoding blocks of one (architecture, loss) share one trained model (the second
    and third train stages copy it from data/cache/transformers); each block decodes every held-out
    problem with its strategy; every solved plan validates; applicable-filtered and regrounding
    plans never contain an inapplicable or malformed action."""
    params, layout = suite
    params = json.loads(json.dumps(params))
    params["transformers"]["max_states"] = 5000
    names = {}
    for strategy in ("greedy", "applicable", "regrounding"):
        names[strategy] = f"gen_{arch}_{strategy}"
        params["methods"][names[strategy]] = {"method": "satr", "arch": arch, "contrastive": True, "decoding": strategy}
    infos = {s: run_train_stage(params, layout, n) for s, n in names.items()}
    assert "from_cache" not in infos["greedy"] and infos["applicable"]["from_cache"] == infos["regrounding"]["from_cache"]
    same = [(layout.models / n / "gripper" / "seed13" / "model.pt").read_bytes() for n in names.values()]
    assert same[0] == same[1] == same[2]
    facts = json.loads((layout.models / names["greedy"] / "facts.json").read_text())["domains"]["gripper"]["seed13"]
    assert facts["status"] == "ok" and facts["from_state_space"] > 0 and facts["checkpoint"]
    ps = ProblemSet(layout.problems)
    held_out = [e for e in ps.entries if e.split in params["transformers"]["splits"]]
    for strategy, name in names.items():
        run_evaluate_stage(params, layout, name)
        recs = [r for r in read_jsonl(layout.results / f"{name}.jsonl") if r["extra"]["task"] == "plan"]
        assert len(recs) == 2 * len(held_out)
        for r in recs:
            if r["domain"] == "logistics":   # no state space within max_states and no reference plans here
                assert r["outcome"] == "unsolved" and r["failure_reason"].startswith("no model:")
                continue
            assert r["extra"]["strategy"] == strategy and r["extra"]["model"].endswith("with CL")
            assert r["extra"]["tokens"] <= params["transformers"]["max_tokens"]
            if strategy != "greedy":
                assert r["extra"]["failure"] not in ("inapplicable", "malformed", "eos_before_goal")
            if r["outcome"] == "solved":
                assert r["validated"]
    # every row decoding the shared model is charged that model's training time, per (domain, seed)
    times = {s: {(r["domain"], r["seed"]): r["extra"]["train_time_s"]
                 for r in read_jsonl(layout.results / f"{n}.jsonl") if r["domain"] == "gripper"}
             for s, n in names.items()}
    assert times["greedy"] == times["applicable"] == times["regrounding"]
    assert all(t > 0 for t in times["greedy"].values()) and len(times["greedy"]) == 2


def test_train_problems_keeps_the_k_smallest_training_problems_and_its_own_model(suite):
    """``methods.<m>.train_problems: k`` (Method.training_problems): the k smallest training
    problems (objects, then name), nested in k; a model of its own (not the cache of the full
    training set); a bad value is one line naming the block."""
    from planarena.config import ConfigError
    from planarena.runner.stages import build_method

    params, layout = suite
    params = json.loads(json.dumps(params))
    params["transformers"]["max_states"] = 5000
    params["methods"]["few"] = {"method": "satr", "arch": "encdec", "contrastive": False, "decoding": "greedy",
                                "train_problems": 1}
    params["methods"]["all"] = {"method": "satr", "arch": "encdec", "contrastive": False, "decoding": "greedy"}
    few, every = build_method("few", params, layout), build_method("all", params, layout)
    assert few._train_key() != every._train_key()

    class Suite:  # four training problems, listed out of size order
        entries = [ProblemEntry("d", "train", p, f"d/train/{p}.pddl", "n", n, n, None, "test")
                   for p, n in (("p8", 8), ("p2", 2), ("p6b", 6), ("p6a", 6))]

        def select(self, domain, split):
            return [e for e in self.entries if e.split == split]

    for k, want in ((1, ["p2"]), (2, ["p2", "p6a"]), (3, ["p2", "p6a", "p6b"]), (9, ["p2", "p6a", "p6b", "p8"])):
        few.config["train_problems"], few._ps = k, Suite()
        assert [e.problem for e in few.training_problems("d")] == want
    every._ps = Suite()
    assert [e.problem for e in every.training_problems("d")] == ["p8", "p2", "p6b", "p6a"]  # no cut: the set's order
    few.config["train_problems"] = 1
    info = run_train_stage(params, layout, "few")
    assert info["status"] == "ok" and "from_cache" not in info
    facts = json.loads((layout.models / "few" / "facts.json").read_text())["domains"]["gripper"]["seed13"]
    assert facts["train_problems"] == 1
    params["methods"]["few"]["train_problems"] = 0
    with pytest.raises(ConfigError, match="methods.few.train_problems"):
        build_method("few", params, layout).training_problems("gripper")


def test_device_param_names_itself_when_it_cannot_be_used(suite):
    """``transformers.device``: cpu (default), cuda[:N] or auto (the paper profile: the GPU when
    torch sees one); the same code runs on either (models and batches move to the device)."""
    import torch

    from planarena.config import ConfigError
    from planarena.runner.stages import build_method

    params, layout = suite
    params = json.loads(json.dumps(params))
    for value, expected in (("tpu", "expected cpu, cuda, cuda:N or auto"),
                            *((("cuda", "no CUDA device is available"),) if not torch.cuda.is_available() else ())):
        params["transformers"]["device"] = value
        with pytest.raises(ConfigError, match=rf"`transformers.device` = '{value}'.*{expected}"):
            build_method("satr_encoder_cl", params, layout).settings()
    params["transformers"]["device"] = "auto"
    assert build_method("satr_encoder_cl", params, layout).settings().device == ("cuda" if torch.cuda.is_available() else "cpu")


def test_select_with_names_the_decoding_of_checkpoint_selection(suite, monkeypatch):
    """``transformers.select_with`` decides which decoding strategy scores the validation problems
    of checkpoint selection: ``own`` (default) scores every strategy (one checkpoint each),
    ``greedy`` is Section E2's; the encoder always plans by Algorithm 4; an unknown strategy names
    the param. An ``<EOS>`` before the goal and a cycle count in the cap's tier: a checkpoint that
    stops early no longer outranks one that runs to the cap."""
    from types import SimpleNamespace

    from planarena.runner.stages import build_method

    params, layout = suite
    params = json.loads(json.dumps(params))
    params["methods"]["gen_sel"] = {"method": "satr", "arch": "encdec", "contrastive": False, "decoding": "greedy"}
    params["methods"]["enc_sel"] = {"method": "satr", "arch": "encoder", "contrastive": False}
    seen = []
    failures = ["token_cap"]

    def fake_plan(self, model, tokens, problems, seed, limits, strategy, stats=None):
        seen.append((self.arch, strategy))
        return [SimpleNamespace(outcome="solved", failure=None, reason=None),
                SimpleNamespace(outcome="unsolved", failure=failures[0], reason=None)]

    from planarena.methods.transformers.method import SATr
    monkeypatch.setattr(SATr, "_plan", fake_plan)
    monkeypatch.setattr(SATr, "_validation_batch", lambda self, d, s, t: None)
    score = (0.5, -0.5, -0.0, -0.0)
    gen = build_method("gen_sel", params, layout)
    assert gen._validator("gripper", 13, None)(None) == {s: score for s in ("greedy", "applicable", "regrounding")}
    assert seen[-3:] == [("encdec", "greedy"), ("encdec", "applicable"), ("encdec", "regrounding")]
    assert build_method("enc_sel", params, layout)._validator("gripper", 13, None)(None) == score
    assert seen[-1] == ("encoder", "greedy")
    for failure in ("eos_before_goal", "cycle"):   # the same tier as the cap
        failures[0] = failure
        assert gen._validator("gripper", 13, None)(None)["greedy"] == score
    failures[0] = "inapplicable"
    assert gen._validator("gripper", 13, None)(None)["greedy"] == (0.5, -0.0, -0.5, -0.0)
    for select_with, expected in (("greedy", "greedy"), ("regrounding", "regrounding")):
        params["transformers"]["select_with"] = select_with
        for name, arch in (("gen_sel", "encdec"), ("enc_sel", "encoder")):
            m = build_method(name, params, layout)
            assert m._validator("gripper", 13, None)(None) == (0.5, -0.0, -0.5, -0.0)
            assert seen[-1] == (arch, expected if arch == "encdec" else "greedy")
    params["transformers"]["select_with"] = "beam"
    with pytest.raises(ValueError, match=r"transformers.select_with='beam'"):
        build_method("gen_sel", params, layout)


def test_select_strategies_validates_only_the_strategies_named(suite, monkeypatch):
    """``transformers.select_strategies`` (under ``select_with: own``): only the named strategies
    decode the validation problems (in STRATEGIES order); a row decoding with another strategy, or
    an unknown name, is refused naming the param; the untrained twin and the encoder are not bound
    by it."""
    from types import SimpleNamespace

    from planarena.runner.stages import build_method

    params, layout = suite
    params = json.loads(json.dumps(params))
    params["transformers"]["select_strategies"] = ["regrounding", "applicable"]
    params["methods"]["gen_app"] = {"method": "satr", "arch": "encdec", "contrastive": False, "decoding": "applicable"}
    params["methods"]["gen_greedy"] = {"method": "satr", "arch": "encdec", "contrastive": False, "decoding": "greedy"}
    params["methods"]["gen_twin"] = {"method": "satr", "arch": "encdec", "contrastive": False, "decoding": "greedy",
                                     "untrained": True, "twin_of": "gen_greedy"}
    params["methods"]["enc"] = {"method": "satr", "arch": "encoder", "contrastive": False}
    seen = []

    def fake_plan(self, model, tokens, problems, seed, limits, strategy, stats=None):
        seen.append(strategy)
        return [SimpleNamespace(outcome="solved", failure=None, reason=None)]

    from planarena.methods.transformers.method import SATr
    monkeypatch.setattr(SATr, "_plan", fake_plan)
    monkeypatch.setattr(SATr, "_validation_batch", lambda self, d, s, t: None)
    assert set(build_method("gen_app", params, layout)._validator("gripper", 13, None)(None)) == {"applicable", "regrounding"}
    assert seen == ["applicable", "regrounding"]
    with pytest.raises(ValueError, match=r"methods.gen_greedy decodes with greedy.*select_strategies"):
        build_method("gen_greedy", params, layout)
    build_method("gen_twin", params, layout)
    build_method("enc", params, layout)
    params["transformers"]["select_strategies"] = ["beam"]
    with pytest.raises(ValueError, match=r"transformers.select_strategies=\['beam'\]"):
        build_method("gen_app", params, layout)
