"""State-centric WL/FSF models on EmbedPlan's candidate-pool Hit@k protocols (planarena.methods.state_centric.pool):
encodings of the ACP corpus, the shared pool ranking, training and records of the method."""

from __future__ import annotations

import copy
import json

import numpy as np
import pytest

pytest.importorskip("xgboost")

from conftest import smoke_profile_params  # noqa: E402

from planarena.config import Layout  # noqa: E402
from planarena.core.records import ResultRecord  # noqa: E402
from planarena.datasets import acp  # noqa: E402
from planarena.protocols.pool import pool_ranks  # noqa: E402
from planarena.methods.state_centric.pool import (  # noqa: E402
    NOT_APPLICABLE,
    encode_domain,
    pool_scores,
    split_validation,
    training_trajectories,
)
from planarena.protocols.pool import build_corpus, protocol_tasks  # noqa: E402
from planarena.report.hitk import pool_summary, pool_table  # noqa: E402
from planarena.runner.stages import build_method  # noqa: E402


@pytest.fixture(scope="module")
def acp_workspace(tmp_path_factory):
    """The smoke profile's ACP datasets (blocksworld and ferry, 3 problems each), one seed."""
    tmp = tmp_path_factory.mktemp("state_pool")
    params = smoke_profile_params()
    params["evaluation"]["seeds"] = [13]
    layout = Layout(tmp / "data")
    acp.run_stage(params, layout)
    corpus = build_corpus(layout.acp, None, ["blocksworld", "ferry"])
    return params, layout, corpus


def test_structure_only_corpus_has_no_text_embeddings(acp_workspace):
    _, _, corpus = acp_workspace
    t = corpus.table
    assert t.state_emb.shape == (len(t.state_problem), 0)
    assert len(t) > 0 and set(corpus.domains) == {"blocksworld", "ferry"}


def test_fsf_oracle_target_ranks_the_true_successor_first(acp_workspace):
    """With v = phi(s') (an oracle model), Euclidean scoring puts s' first in every pool: FSF gives
    distinct Blocksworld states distinct vectors, so there are no ties to break."""
    _, layout, corpus = acp_workspace
    phi = encode_domain("fsf", corpus, layout.acp, "blocksworld")
    rows = corpus.domain_rows("blocksworld")
    lo, n = phi.lo, phi.states.shape[0]
    for pid in corpus.problem_ids("blocksworld"):  # injective on each problem's states
        mine = phi.states[corpus.table.state_problem[lo:lo + n] == pid]
        assert len(np.unique(mine, axis=0)) == len(mine)
    assert phi.states.shape[1] == phi.facts["fsf_slots"] + 1
    targets = phi.phi(corpus.table.s2[rows])
    ranks, sizes, _ = pool_ranks(corpus.table, rows, pool_scores(targets, phi, "euclidean"),
                                 pool_size=128, distractors="problem", seed=0)
    per_problem = np.bincount(corpus.table.state_problem)  # the 4-block problem has 125 states
    assert (ranks == 0).all() and (sizes == np.minimum(128, per_problem[corpus.trans_problem[rows]])).all()
    assert ((corpus.table.state_domain[corpus.table.s2[rows]] == 0) & (corpus.table.s2[rows] >= lo)).all()


def test_scorers_see_the_same_pools_for_the_same_seed(acp_workspace):
    """pool_ranks is the shared core: two methods with the same seed score the same candidates."""
    _, _, corpus = acp_workspace
    rows = corpus.domain_rows("ferry")[:50]
    seen = []

    def spy(b, cand):
        seen.append(cand.copy())
        return np.zeros(cand.shape)

    pool_ranks(corpus.table, rows, spy, pool_size=16, distractors="domain", seed=5)
    pool_ranks(corpus.table, rows, spy, pool_size=16, distractors="domain", seed=5)
    assert np.array_equal(seen[0], seen[1])
    assert (seen[0][:, 0] == corpus.table.s2[rows]).all()


def test_fsf_has_no_design_for_ferry(acp_workspace):
    _, layout, corpus = acp_workspace
    with pytest.raises(ValueError, match="FSF has no design for ferry"):
        encode_domain("fsf", corpus, layout.acp, "ferry")


def test_wl_vocabulary_comes_from_train_rows_and_is_reloaded(acp_workspace, tmp_path):
    _, layout, corpus = acp_workspace
    task = next(t for t in protocol_tasks(corpus, "extrapolation", 13) if t.train_key == "blocksworld")
    f = tmp_path / "fg.json"
    phi = encode_domain("wl", corpus, layout.acp, "blocksworld", task.train_rows, {}, f)
    assert f.exists() and phi.facts["dim"] == phi.states.shape[1] > 0
    again = encode_domain("wl", corpus, layout.acp, "blocksworld", wl_file=f)  # no rows: loads f
    assert np.array_equal(again.states, phi.states)
    every = encode_domain("wl", corpus, layout.acp, "blocksworld", corpus.domain_rows("blocksworld"), {})
    assert phi.facts["wl_colours"] <= every.facts["wl_colours"]
    with pytest.raises(ValueError, match="no training transitions"):
        encode_domain("wl", corpus, layout.acp, "blocksworld", np.zeros(0, np.int64), {})
    trajs = training_trajectories(phi, corpus, task.train_rows[:3])
    assert all(s.shape == (2, phi.states.shape[1]) and g.shape == (phi.states.shape[1],) for s, g in trajs)


def test_wl_pool_candidates_carry_the_query_goal(acp_workspace):
    """In a domain-wide pool (Interpolation), a candidate drawn from another problem is embedded
    with the query's goal. The two 5-block problems share their states: the same state of the other
    problem must get exactly the query problem's phi, not its own goal's."""
    _, layout, corpus = acp_workspace
    phi = encode_domain("wl", corpus, layout.acp, "blocksworld", corpus.domain_rows("blocksworld"), {})
    from planarena.datasets.acp import load_domain_dataset

    probs = {p.problem: p for p in load_domain_dataset(layout.acp, "blocksworld")}
    five = [pid for pid in corpus.problem_ids("blocksworld") if corpus.problems[pid][1].startswith("blocksworld-5-")]
    q, other = five[:2]
    first = {pid: int(np.searchsorted(corpus.table.state_problem, pid)) for pid in (q, other)}
    sq, so = probs[corpus.problems[q][1]].states, probs[corpus.problems[other][1]].states
    where = {tuple(st): i for i, st in enumerate(sq)}
    j = next(j for j, st in enumerate(so) if tuple(st) in where)
    row_other, row_q = first[other] + j, first[q] + where[tuple(so[j])]
    got = phi.candidates(np.array([[row_other, row_q]]), np.array([q]))
    np.testing.assert_array_equal(got[0, 0], phi.phi(row_q))   # under the query's goal: the same vector
    np.testing.assert_array_equal(got[0, 1], phi.phi(row_q))   # own-problem candidates unchanged
    assert not np.array_equal(phi.phi(row_other), phi.phi(row_q))  # with its own goal it differed
    fsf = encode_domain("fsf", corpus, layout.acp, "blocksworld")
    assert fsf.embed_with_goal is None  # FSF state vectors hold no goal


def test_split_validation_is_seeded_and_disjoint():
    rows = np.arange(100, 200)
    tr, va = split_validation(rows, 0.1, 13)
    assert len(va) == 10 and not set(tr) & set(va) and set(tr) | set(va) == set(rows)
    assert np.array_equal(va, split_validation(rows, 0.1, 13)[1])
    assert len(split_validation(rows[:5], 0.1, 13)[1]) == 0


def _pool_method(params, layout, name, tmp_path):
    method = build_method(name, params, layout)
    facts = method._train_pool(tmp_path / name, method._model_class(), method.pool_model_params(), {})
    (tmp_path / name / "facts.json").write_text(json.dumps({"pool": facts}, default=float))
    method.load(tmp_path / name)
    return method, facts


def test_wl_xgb_delta_pool_records_beat_chance(acp_workspace, tmp_path):
    params, layout, _ = acp_workspace
    method, facts = _pool_method(params, layout, "wl_xgb_delta", tmp_path)
    assert facts["status"] == "ok"
    statuses = {k: v["status"] for k, v in facts["runs"].items()}
    assert statuses and set(statuses.values()) == {"ok"}, {k: v for k, v in facts["runs"].items() if v["status"] != "ok"}
    recs = [ResultRecord.from_dict(r) for r in method.pool_records(set(), "fp", {})]
    got = {(r.extra["protocol"], r.domain) for r in recs}
    assert got == {(p, d) for p in ("interpolation", "plan_variant", "extrapolation") for d in ("blocksworld", "ferry")}
    for r in recs:
        assert r.outcome == "solved" and r.problem == "wl" and r.extra["inputs"] == "state, goal"
        assert "acc@5" not in r.extra and 0 <= r.extra["hit@1"] <= r.extra["hit@5"] <= r.extra["hit@10"] <= 1
    interp = [r.extra["hit@5"] for r in recs if r.extra["protocol"] == "interpolation"]
    assert np.mean(interp) > 4 * 5 / 128  # far above the chance level of a 128-pool
    # resumable: records already done are not produced again
    done = {(r.extra["protocol"], r.domain, r.split, r.problem, r.seed) for r in recs}
    assert list(method.pool_records(done, "fp", {})) == []
    # the table puts it beside other methods with no Acc@k and no published EmbedPlan value
    summary = pool_summary(recs)
    assert (summary["published MPNet (Tables 1, 20)"] == "–").all()
    assert (pool_table(recs)["Acc@5"] == "–").all()


def test_fsf_lstm_pool_skips_ferry_and_transfer_protocols(acp_workspace, tmp_path):
    params = copy.deepcopy(acp_workspace[0])
    params["transition_models"]["pool"] = {"protocols": ["extrapolation", "cross_domain"]}
    params["transition_models"]["lstm"] = {"max_epochs": 3, "patience": 2, "hidden": 16, "embed": 8}
    method, facts = _pool_method(params, acp_workspace[1], "fsf_lstm_delta", tmp_path)
    runs = facts["runs"]
    assert runs["cross_domain"] == {"status": "not applicable", "reason": NOT_APPLICABLE["cross_domain"]}
    assert runs["extrapolation/ferry/seed13"]["status"] == "skipped"
    assert "FSF has no design" in runs["extrapolation/ferry/seed13"]["reason"]
    assert runs["extrapolation/blocksworld/seed13"]["status"] == "ok"
    recs = list(method.pool_records(set(), "fp", {}))
    assert [(r["extra"]["protocol"], r["domain"]) for r in recs] == [("extrapolation", "blocksworld")]
    assert recs[0]["extra"]["history"].startswith("none")


def test_untrained_pool_model_is_an_error_record_not_a_crash(acp_workspace, tmp_path):
    params = copy.deepcopy(acp_workspace[0])
    params["transition_models"]["pool"] = {"protocols": ["extrapolation"]}
    method = build_method("wl_xgb_delta", params, acp_workspace[1])
    method.load(tmp_path / "nothing")
    recs = list(method.pool_records(set(), "fp", {}))
    assert recs and all(r["outcome"] == "error" and "run the train stage" in r["failure_reason"] for r in recs)


def test_pool_off_without_acp_data(tmp_path):
    params = smoke_profile_params()
    method = build_method("wl_xgb_delta", params, Layout(tmp_path / "data"))
    facts = method._train_pool(tmp_path / "m", None, {}, {})
    assert facts["status"] == "off" and "acp_data" in facts["reason"]
    assert list(method.pool_records(set(), "fp", {})) == []
