"""The SATr encoder as a registry method on a smoke-sized suite: train per (domain, seed) with
checkpoint selection, plan by greedy heuristic guidance (Algorithm 4), validate every plan."""

from __future__ import annotations

import json

import pytest
from conftest import only_domains

pytest.importorskip("torch")

from planarena.core.io import read_jsonl  # noqa: E402
from planarena.core.problemset import ProblemSet  # noqa: E402
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
        assert r["extra"]["strategy"].startswith("greedy heuristic guidance")
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
