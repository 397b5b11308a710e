"""Floors that isolate learning (issue 47, item 5): every learned row has an untrained twin.

* Resolving params (every profile) gives each learned row (a ``"model"`` with a training budget) a
  twin: its own block with ``untrained`` and ``twin_of``, nothing else changed, running when the
  row runs, and named in params.yaml so that DVC has its stages (:func:`planarena.methods.with_twins`).
* A twin's report traits: a floor of its row's kind, ``twin_of`` the row, no budget.
* The front page's coverage table reads each learned row against its own twin (not another row's)
  and says whether it is above it; floors that solved the same attempts are tested once.
* The twin of each family owned here (state-centric LSTM and XGBoost, the symmetry-aware
  transformers, WL-GOOSE, EmbedPlan) trains nothing and writes records through its row's search /
  decoder (smoke-sized; the R-GNN and DIAS twins: ``tests/test_twins_rgnn_dias.py``).
"""

from __future__ import annotations

import copy
import json

import pytest
import yaml
from conftest import ROOT, only_domains

from planarena.config import ConfigError, Layout, resolve_profile
from planarena.methods import method_class, resolve, runs, twins_of, with_twins
from planarena.methods.base import Budget, ReportTraits

PROFILES = ("default", "full", "smoke", "paper")


def _raw() -> dict:
    return yaml.safe_load((ROOT / "params.yaml").read_text())


def _resolved(profile: str) -> dict:
    return resolve_profile({**_raw(), "profile": profile})


def _smoke_with_twins() -> dict:
    """The smoke profile's sizes with its twins on (the profile turns them off: ``run_twins``)."""
    return {**_resolved("smoke"), "run_twins": True}


def _learned(params: dict) -> dict[str, ReportTraits]:
    """The configured rows that learn, judged from their traits alone (a model with a budget)."""
    out = {}
    for name, block in params["methods"].items():
        if (block or {}).get("twin_of") or (block or {}).get("untrained"):
            continue
        cls, config = resolve(name, params)
        traits = cls.report_traits(config, params)
        if traits.role == "model" and traits.budget is not None:
            out[name] = traits
    return out


def _plain(config: dict, name: str) -> dict:
    return {"method": name, **config}


def test_run_twins_false_turns_every_twin_off_and_no_other_row():
    on, off = _resolved("default"), _resolved("smoke")
    assert on.get("run_twins") is True and off.get("run_twins") is False
    twins = {t for ts in twins_of(on).values() for t in ts}
    assert twins and not any(runs(t, off) for t in twins)
    assert all(runs(t, {**off, "run_twins": True}) == runs(twins_of_row, off)
               for twins_of_row, ts in twins_of(off).items() for t in ts)
    others = set(on["methods"]) - twins
    assert {m for m in others if runs(m, on)} == {m for m in others if runs(m, {**on, "run_twins": False})}


@pytest.mark.parametrize("profile", PROFILES)
def test_every_learned_row_has_an_untrained_twin(profile):
    params = _resolved(profile)
    raw_methods = _raw()["methods"]
    learned = _learned(params)
    assert {"wl_lstm_delta", "wl_xgb_delta", "embedplan_mlp", "satr_encoder_cl", "plangpt_nocl_greedy",
            "wl_goose", "aiw_ad", "dias_names"} <= set(learned)
    twins = twins_of(params)
    assert set(twins) == set(learned), set(learned) ^ set(twins)
    for row, row_traits in learned.items():
        assert twins[row], row
        _, row_config = resolve(row, params)
        for twin in twins[row]:
            cls, config = resolve(twin, params)
            assert config["twin_of"] == row and config["untrained"] in (True, "uniform", "noskip")
            # the row's block with `untrained` and `twin_of`: nothing else differs (`run` aside)
            rest = {k: v for k, v in config.items() if k not in ("untrained", "twin_of")}
            assert _plain(rest, rest.get("method", twin)) == _plain(row_config, row_config.get("method", row))
            # a twin runs with its row, except where the profile turns the twins off (smoke)
            assert runs(twin, params) == (runs(row, params) and params.get("run_twins", True) is not False)
            # every row a stage runs is a block a reader finds in params.yaml (and `planarena rows` lists)
            assert twin in raw_methods, f"{twin}: add `{twin}: {{twin_of: {row}}}` to params.yaml"
            t = cls.report_traits(config, params)
            assert (t.role, t.twin_of, t.kind, t.floor_kinds, t.budget) == ("floor", row, row_traits.kind,
                                                                           (row_traits.kind,), None)
            assert not t.ablations and not t.selected_on
    # the uniform floor is the lookahead policies' (and the flat R-GNN policies'), no one else's
    uniform = {row for row, ts in twins.items() if any(params["methods"][t]["untrained"] == "uniform" for t in ts)}
    assert uniform == {r for r in learned if params["methods"][r].get("method") == "rgnn_policy"}
    # EmbedPlan's untrained floor is embedplan_mlp's twin under its own name; the configured
    # no-skip floor (near chance, as the paper's Appendix D.6 reports) is a second one
    assert sorted(twins["embedplan_mlp"]) == ["embedplan_mlp_noskip", "embedplan_untrained"]


def test_twin_generation_recognises_completes_and_refuses():
    params = _resolved("default")
    base = copy.deepcopy(params)
    # idempotent: resolving resolved params changes nothing
    assert with_twins(params) == params
    # a learned row added with -S gets a twin (its method named), running when the row runs
    base["methods"]["my_goose"] = {"method": "wl_goose", "alpha": 2.0, "run": False}
    got = with_twins(base)["methods"]
    assert got["my_goose_untrained"] == {"method": "wl_goose", "alpha": 2.0, "untrained": True,
                                         "twin_of": "my_goose", "run": False}
    assert list(got).index("my_goose_untrained") == list(got).index("my_goose") + 1
    # a compact block is completed from its row; a key that would make it differ is refused
    raw = copy.deepcopy(base)
    raw["methods"] = {"wl_goose": {"method": "wl_goose", "alpha": 1.0},
                      "wl_goose_untrained": {"twin_of": "wl_goose", "run": False}}
    got = with_twins(raw)["methods"]
    assert got["wl_goose_untrained"] == {"method": "wl_goose", "alpha": 1.0, "untrained": True,
                                         "twin_of": "wl_goose", "run": False}
    raw["methods"]["wl_goose_untrained"]["alpha"] = 3.0
    with pytest.raises(ConfigError, match="wl_goose_untrained.*alpha"):
        with_twins(raw)
    raw["methods"]["wl_goose_untrained"] = {"twin_of": "fd_lama"}
    raw["methods"]["fd_lama"] = {}
    with pytest.raises(ConfigError, match="not a learned row"):
        with_twins(raw)
    raw["methods"] = {"wl_goose": {}, "wl_goose_untrained": {"method": "random_walk"}}
    with pytest.raises(ConfigError, match="not the untrained twin"):
        with_twins(raw)
    # floors and planners get none
    raw["methods"] = {"wl_identity": {"method": "state_centric", "model": "identity"}, "fd_lama": {},
                      "random_walk": {}, "embedplan_identity": {"method": "embedplan", "arch": "identity"}}
    assert with_twins(raw) == raw


def test_twin_records_are_never_the_rows(tmp_path):
    """The config fingerprint (which records a resumed run keeps) differs between a row and its
    twin, and so do the evaluate stage's inputs."""
    from planarena.runner.inputs import method_inputs
    from planarena.runner.stages import build_method, config_fingerprint

    params, layout = _smoke_with_twins(), Layout(root=tmp_path / "data")
    for row in ("wl_xgb_delta", "satr_encoder_cl", "wl_goose"):
        twin = twins_of(params)[row][0]
        a, b = build_method(row, params, layout), build_method(twin, params, layout)
        assert config_fingerprint(a, params, layout) != config_fingerprint(b, params, layout)
        assert (method_inputs("evaluate", row, params, layout)["params"]
                != method_inputs("evaluate", twin, params, layout)["params"])


# -- the front page -------------------------------------------------------------------------------

BUDGET = Budget(steps=10, batch=2)
TRAITS = {
    "pol": ReportTraits(kind="policy", budget=BUDGET),
    "pol_untrained": ReportTraits(role="floor", kind="policy", floor_kinds=("policy",), twin_of="pol"),
    "other": ReportTraits(kind="policy", budget=BUDGET),
    "other_untrained": ReportTraits(role="floor", kind="policy", floor_kinds=("policy",), twin_of="other"),
    "walk": ReportTraits(role="floor", kind="policy", floor_kinds=("policy",)),
    "walk_novisit": ReportTraits(role="floor", kind="policy", floor_kinds=("policy",)),
}


def _coverage(solved: dict[str, set[str]], domains=("bw",)):
    from test_report import entry, rec

    from planarena.report.records import instance_index
    from planarena.report.sections import headline

    manifest = [entry(d, "validation", f"{d}{i}") for d in domains for i in range(10)]
    records = [rec(m, e.domain, "validation", e.problem, 13, "solved" if e.problem in won else "unsolved")
               for m, won in solved.items() for e in manifest]
    [table] = headline.coverage_tables(records, instance_index(manifest, records), TRAITS, seed=0)
    return table


def test_each_learned_row_is_read_against_its_own_twin():
    from planarena.report.sections import headline

    every = {f"bw{i}" for i in range(10)}
    t = _coverage({"pol": every, "pol_untrained": {"bw3"}, "other": {"bw0", "bw1"},
                   "other_untrained": {"bw0", "bw1", "bw2"}, "walk": {"bw0"}, "walk_novisit": {"bw0"}})
    floors = {m: [f for f, _, _ in tests] for m, tests in t.floor_tests.items()}
    # its own twin first, no other row's twin; the two walks solved the same: tested once
    assert floors == {"pol": ["pol_untrained", "walk"], "other": ["other_untrained", "walk"]}
    assert t.merged == {"walk_novisit": {"walk": {"held-out"}}, "walk": {"walk_novisit": {"held-out"}}}
    frame = headline.render_table(t, TRAITS).set_index("method")
    assert frame.loc["pol", headline.TWIN_COLUMN].startswith("yes (p=")
    assert frame.loc["pol", "above floor"].startswith("yes (p=")
    assert frame.loc["other", headline.TWIN_COLUMN] == "at twin (p=1.00)"
    assert frame.loc["other", "above floor"].startswith("at floor at this budget")
    assert frame.loc["walk_novisit", "above floor"] == "= `walk` everywhere (same attempts solved: tested once)"
    assert frame.loc["pol_untrained", headline.TWIN_COLUMN] == "–"
    assert headline.TWIN_COLUMN in headline.DESCRIPTION
    # a twin that solved what a walk solved stands for it in its row's tests
    t = _coverage({"pol": every, "pol_untrained": {"bw0"}, "walk": {"bw0"}, "walk_novisit": {"bw1"}})
    assert [f for f, _, _ in t.floor_tests["pol"]] == ["pol_untrained", "walk_novisit"]
    assert t.merged["walk"] == {"pol_untrained": {"held-out"}}
    assert headline.format_twin(t, TRAITS, "pol").startswith("yes (p=")


def test_a_row_without_twin_records_says_so_and_floors_merge_per_domain():
    from planarena.report.sections import headline

    solved = {"pol": {f"bw{i}" for i in range(10)} | {f"gr{i}" for i in range(10)},
              "walk": {"bw0", "gr0", "gr1"}, "walk_novisit": {"bw0", "gr0"}}
    t = _coverage(solved, domains=("bw", "gr"))
    frame = headline.render_table(t, TRAITS).set_index("method")
    assert frame.loc["pol", headline.TWIN_COLUMN] == "no twin records"
    # identical on bw only: one test there, both walks on gr and pooled
    assert t.merged["walk_novisit"] == {"walk": {"bw"}}
    assert [f for f, _, _ in t.floor_tests["pol"]] == ["walk", "walk_novisit"]
    assert [f for f, _, _ in t.domain_floor_tests["pol"]["bw"]] == ["walk"]
    assert [f for f, _, _ in t.domain_floor_tests["pol"]["gr"]] == ["walk", "walk_novisit"]


def test_primitive_walks_are_no_floor_of_lookahead_policies():
    params = _resolved("default")
    cls, config = resolve("random_walk", params)
    assert "lookahead policy" not in cls.report_traits(config, params).floor_kinds


# -- each family's twin runs without training -----------------------------------------------------


@pytest.fixture(scope="module")
def smoke(tmp_path_factory):
    """Smoke-sized Blocksworld, one seed: problems, reference plans, trajectories, WL cache."""
    from planarena.datasets.reference_plans import run_plan_stage, run_trajectories_stage
    from planarena.datasets.suites import run_stage as generate
    from planarena.features.wl import run_stage as embed_wl

    params = only_domains(_smoke_with_twins(), "blocksworld")
    params["jobs"] = 1
    params["evaluation"]["seeds"] = [13]
    layout = Layout(root=tmp_path_factory.mktemp("twins") / "data")
    generate(params, layout)
    run_plan_stage(params, layout)
    run_trajectories_stage(params, layout)
    embed_wl(params, layout)
    return params, layout


def _refuse(*args, **kwargs):
    raise AssertionError("a twin must not train")


@pytest.mark.parametrize("twin", ["wl_lstm_delta_untrained", "wl_xgb_delta_untrained", "satr_encoder_cl_untrained",
                                  "satr_encdec_cl_greedy_untrained", "plangpt_nocl_greedy_untrained",
                                  "wl_goose_untrained"])
def test_a_twin_trains_nothing_and_plans_like_its_row(smoke, twin, monkeypatch):
    from planarena.core.io import read_jsonl
    from planarena.core.problemset import ProblemSet
    from planarena.methods.state_centric.lstm import LSTMTransitionModel
    from planarena.methods.state_centric.xgb import XGBTransitionModel
    from planarena.methods.transformers import train as satr_train
    from planarena.methods.wl_goose import method as goose
    from planarena.runner.stages import run_evaluate_stage, run_train_stage

    params, layout = smoke
    for target, name in ((LSTMTransitionModel, "fit"), (XGBTransitionModel, "fit"), (satr_train, "train_heuristic"),
                         (satr_train, "train_generator"), (goose, "fit_ridge")):
        monkeypatch.setattr(target, name, _refuse)
    params = {**params, "methods": {**params["methods"], twin: {**params["methods"][twin], "run": True}}}
    row = params["methods"][twin]["twin_of"]
    info = run_train_stage(params, layout, twin)
    assert info["status"] == "ok" and info["trained"] is False and info["untrained"] is True, info
    assert "train_time_s" not in json.loads((layout.models / twin / "train.json").read_text())
    run_evaluate_stage(params, layout, twin)
    recs = read_jsonl(layout.results / f"{twin}.jsonl")
    plan = [r for r in recs if r["extra"].get("task", "plan") == "plan"]
    method = method_class(params["methods"][twin]["method"])(row, resolve(row, params)[1], params, layout)
    splits = method.config.get("splits") or params["evaluation"]["splits"]
    ps = ProblemSet(layout.problems)
    assert len(plan) == sum(e.split in splits for e in ps.entries) and plan
    assert {r["outcome"] for r in plan} <= {"solved", "unsolved", "timeout"}, {r["failure_reason"] for r in plan}
    assert all(r["validated"] for r in plan if r["outcome"] == "solved")
    assert all("train_time_s" not in r["extra"] for r in plan)
    if params["methods"][twin]["method"] == "state_centric":  # they rank successors too (XGBoost: uniformly)
        rank = [r for r in recs if r["extra"].get("task") == "rank_successors"]
        assert rank and all(0 <= r["extra"]["hit@1"] <= r["extra"]["hit@5"] <= 1 for r in rank)
    print(twin, [(r["problem"], r["outcome"], r["failure_reason"], len(r["plan"] or [])) for r in plan])
    # deterministic: a second evaluation from scratch writes the same plans
    (layout.results / f"{twin}.jsonl").unlink()
    run_evaluate_stage(params, layout, twin)
    again = [r for r in read_jsonl(layout.results / f"{twin}.jsonl") if r["extra"].get("task", "plan") == "plan"]
    assert [(r["problem"], r["outcome"], r["plan"]) for r in again] == [(r["problem"], r["outcome"], r["plan"])
                                                                         for r in plan]


def test_state_centric_twins_score_candidate_pools_without_training(tmp_path, monkeypatch):
    """The pool protocol of the state-centric twins: the LSTM at its initial weights per pool task,
    XGBoost's uniform random scores (near the chance level of the pool), nothing fitted."""
    from conftest import smoke_profile_params

    from planarena.datasets import acp
    from planarena.methods.state_centric.lstm import LSTMTransitionModel
    from planarena.methods.state_centric.xgb import XGBTransitionModel
    from planarena.runner.stages import build_method

    for target in (LSTMTransitionModel, XGBTransitionModel):
        monkeypatch.setattr(target, "fit", _refuse)
    params = smoke_profile_params()
    params["evaluation"]["seeds"] = [13]
    params["acp"]["domains"] = ["blocksworld"]
    params["transition_models"]["pool"] = {**params["transition_models"]["pool"], "protocols": ["interpolation"]}
    layout = Layout(tmp_path / "data")
    acp.run_stage(params, layout)
    for twin in ("wl_xgb_delta_untrained", "wl_lstm_delta_untrained"):
        method = build_method(twin, params, layout)
        facts = method._train_pool(tmp_path / twin, method._model_class(), method.pool_model_params(), {})
        assert facts["status"] == "ok" and {r["status"] for r in facts["runs"].values()} == {"ok"}, facts
        (tmp_path / twin).mkdir(exist_ok=True)   # the train stage's model folder
        (tmp_path / twin / "facts.json").write_text(json.dumps({"pool": facts}, default=float))
        method.load(tmp_path / twin)
        recs = list(method.pool_records(set(), "fp", {}))
        assert recs and all(r["outcome"] == "solved" for r in recs)
        assert all(0 <= r["extra"]["hit@1"] <= r["extra"]["hit@5"] <= 1 for r in recs)
        again = list(_reloaded(twin, params, layout, tmp_path / twin).pool_records(set(), "fp", {}))
        assert [r["extra"]["hit@5"] for r in again] == [r["extra"]["hit@5"] for r in recs]   # seeded
        if "xgb" in twin:
            assert all(r["extra"]["inputs"].startswith("none") for r in recs)


def _reloaded(name, params, layout, model_dir):
    from planarena.runner.stages import build_method

    fresh = build_method(name, params, layout)
    fresh.load(model_dir)
    return fresh
