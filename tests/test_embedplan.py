"""EmbedPlan model, losses, pool Hit@k / Acc@k and the six protocols, on synthetic tables."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from planarena.methods.embedplan.model import (  # noqa: E402
    EmbedPlanConfig,
    build_model,
    count_parameters,
    evaluate_rows,
    predict,
    project_states,
    train,
)
from planarena.protocols.pool import (  # noqa: E402  # noqa: E402
    PROTOCOLS,
    Corpus,
    TransitionTable,
    hit_metrics,
    plan_metrics,
    protocol_tasks,
    rank_of_true,
    sample_pools,
)


def synthetic_table(n_problems=4, states_per_problem=60, n_actions=6, dim=24, seed=0, n_domains=1):
    """State i of a problem sits on a circle (Fourier features of i / n, randomly projected, plus a
    problem offset); action j moves it to (i + j + 1) mod n, a rotation a model can learn and
    apply to (state, action) pairs it has not seen. Action j has the same embedding in every
    problem (plus a little noise)."""
    rng = np.random.default_rng(seed)
    n = n_problems * states_per_problem
    i = np.arange(states_per_problem)[:, None]
    k = np.arange(1, 5)[None, :]
    phase = 2 * np.pi * i * k / states_per_problem
    feats = np.concatenate([np.cos(phase), np.sin(phase)], axis=1)  # (n_states, 8)
    proj = rng.normal(size=(8, dim))
    state_emb = np.concatenate([feats @ proj + 0.3 * rng.normal(size=dim) for _ in range(n_problems)])
    state_emb = state_emb.astype(np.float32)
    act = rng.normal(size=(n_actions, dim))
    action_emb = np.concatenate([act + 0.05 * rng.normal(size=act.shape) for _ in range(n_problems)])
    action_emb = action_emb.astype(np.float32)
    s, a, s2, off, app, succ = [], [], [], [0], [], []
    for p in range(n_problems):
        base, abase = p * states_per_problem, p * n_actions
        for i in range(states_per_problem):
            acts = list(range(n_actions))
            for j in acts:
                s.append(base + i)
                a.append(abase + j)
                s2.append(base + (i + j + 1) % states_per_problem)
                app.extend(abase + k for k in acts)
                succ.extend(base + (i + k + 1) % states_per_problem for k in acts)
                off.append(len(app))
    problem = np.repeat(np.arange(n_problems), states_per_problem)
    return TransitionTable(
        state_emb=state_emb, action_emb=action_emb, s=np.array(s), a=np.array(a), s2=np.array(s2),
        app_offsets=np.array(off), app_actions=np.array(app), app_successors=np.array(succ),
        state_problem=problem, state_domain=problem * n_domains // n_problems,
    )


def small_cfg(**kw):
    base = dict(proj_hidden=32, proj_layers=2, hidden=64, layers=2, max_epochs=40, warmup_epochs=2,
                patience=40, batch_size=64, max_actions=6, lr=2e-3)
    base.update(kw)
    return EmbedPlanConfig(**base)


def test_config_rejects_unknown_keys_and_arch():
    with pytest.raises(ValueError, match="unknown EmbedPlan hyperparameters"):
        EmbedPlanConfig.from_dict({"hiddn": 3})
    with pytest.raises(ValueError, match="arch"):
        EmbedPlanConfig.from_dict({"arch": "transformer"})


def test_default_model_has_about_500k_parameters_with_minilm_width():
    # B.1.3: "Both are lightweight (500K trainable parameters)"; MiniLM is 384-d
    for arch in ("mlp", "hyper"):
        n = count_parameters(build_model(EmbedPlanConfig(arch=arch), 384, 384))
        assert 350_000 <= n <= 700_000, (arch, n)


def test_residual_mlp_output_is_state_plus_update():
    model = build_model(small_cfg(), 24, 24)
    with torch.no_grad():
        for p in model.trans.ffn.parameters():
            p.zero_()
        zs, za = torch.randn(5, 128), torch.randn(5, 128)
        assert torch.allclose(model.transition(zs, za), zs)  # Eq. 27 residual


def test_rank_of_true_ties_random_and_pessimistic():
    scores = np.array([[0.5, 0.9, 0.5, 0.5, 0.1]])  # true = col 0; 1 better, 2 tied
    assert rank_of_true(scores, 0, None, pessimistic=True)[0] == 3
    assert rank_of_true(scores, 0, None, pessimistic=False)[0] == 1  # optimistic without rng
    rng = np.random.default_rng(0)
    draws = [rank_of_true(scores, 0, rng)[0] for _ in range(300)]
    assert set(draws) == {1, 2, 3}
    assert abs(np.mean(draws) - 2.0) < 0.2  # uniform over the tied positions


def test_sample_pools_true_first_distractors_from_same_problem_no_duplicates():
    t = synthetic_table()
    rows = np.arange(0, len(t), 7)
    pools = sample_pools(t, rows, 32, "problem", np.random.default_rng(1))
    assert (pools[:, 0] == t.s2[rows]).all()
    for j, i in enumerate(rows):
        p = pools[j]
        assert len(set(p.tolist())) == 32
        assert (t.state_problem[p] == t.state_problem[t.s2[i]]).all()
    # a pool larger than the problem is padded with -1 and never repeats a state
    big = sample_pools(t, rows[:3], 128, "problem", np.random.default_rng(1))
    assert ((big >= 0).sum(1) == 60).all()
    dom = sample_pools(t, rows[:50], 128, "domain", np.random.default_rng(1))
    assert len(np.unique(t.state_problem[dom[dom >= 0]])) > 1
    with pytest.raises(ValueError, match="distractors"):
        sample_pools(t, rows, 8, "galaxy", np.random.default_rng(0))


def test_vectorised_action_accuracy_matches_a_loop():
    t = synthetic_table(n_problems=2, states_per_problem=20)
    model = build_model(small_cfg(), 24, 24)
    model.eval()
    rows = np.arange(0, len(t), 3)
    res = evaluate_rows(model, t, rows, pool_size=16, seed=3, pessimistic_ties=True)
    z = project_states(model, t)
    for j, i in enumerate(rows):
        app = t.applicable(int(i))
        preds = predict(model, t, np.full(len(app), t.s[i]), app)
        sc = preds @ z[t.s2[i]]
        true = sc[list(app).index(t.a[i])]
        assert res.action_rank[j] == (sc > true).sum() + ((sc == true).sum() - 1)
    assert (res.n_actions == 6).all()


def test_training_learns_and_beats_untrained():
    t = synthetic_table()
    rows = np.arange(len(t))
    rng = np.random.default_rng(0)
    test = rng.choice(rows, 200, replace=False)
    train_rows = np.setdiff1d(rows, test)
    torch.manual_seed(0)
    untrained = build_model(small_cfg(), 24, 24).eval()
    base = hit_metrics(evaluate_rows(untrained, t, test, pool_size=32, seed=0))
    torch.manual_seed(0)
    cfg = small_cfg(max_epochs=12)   # Hit@5 1.0 vs the untrained 0.45 already (40 epochs: 3x the time)
    model = build_model(cfg, 24, 24)
    res = train(model, t, train_rows, cfg, seed=0)
    assert res.status == "ok" and res.epochs >= 1 and res.parameters == count_parameters(model)
    m = hit_metrics(evaluate_rows(model, t, test, pool_size=32, seed=0))
    assert m["hit@5"] > base["hit@5"] + 0.3, (base, m)
    assert m["acc@1"] > base["acc@1"], (base, m)


def test_training_is_deterministic_for_a_seed():
    t = synthetic_table(n_problems=2, states_per_problem=20)
    cfg = small_cfg(max_epochs=3)
    outs = []
    for _ in range(2):
        torch.manual_seed(5)
        m = build_model(cfg, 24, 24)
        train(m, t, np.arange(len(t)), cfg, seed=5)
        outs.append(project_states(m, t))
    # same seed, same weights up to float summation order (torch's CPU kernels may split reductions
    # differently across threads: ~1e-7)
    np.testing.assert_allclose(outs[0], outs[1], rtol=0, atol=1e-5)


def test_diverged_training_is_an_outcome_not_a_crash():
    t = synthetic_table(n_problems=2, states_per_problem=20)
    t.state_emb[:] = np.nan
    cfg = small_cfg(max_epochs=3)
    m = build_model(cfg, 24, 24)
    res = train(m, t, np.arange(len(t)), cfg, seed=0)
    assert res.status == "diverged" and res.stopped == "diverged"


def test_plan_metrics_mean_and_exact():
    hit = np.array([True, True, False, True])
    m = plan_metrics(hit, [np.array([0, 1]), np.array([2, 3])])
    assert m["plan_mean_hit@5"] == pytest.approx(0.75)
    assert m["plan_exact_hit@5"] == pytest.approx(0.5)


# ---------------------------------------------------------------------------------------------
# protocols
# ---------------------------------------------------------------------------------------------


def synthetic_corpus(n_domains=3, problems=4):
    t = synthetic_table(n_problems=n_domains * problems, states_per_problem=20, n_domains=n_domains)
    domains = [f"d{i}" for i in range(n_domains)]
    probs = [(domains[p // problems], f"p{p}") for p in range(n_domains * problems)]
    trans_problem = t.state_problem[t.s]
    plans = []
    for pid in range(len(probs)):
        rows = np.nonzero(trans_problem == pid)[0]
        n_plans = 1 if pid % problems == 0 else 3   # first problem of each domain: unique plan
        for k in range(n_plans):
            plans.append((pid, rows[k * 5:(k + 1) * 5]))
    return Corpus(table=t, domains=domains, problems=probs, trans_problem=trans_problem, plans=plans)


def test_protocols_partition_as_appendix_a():
    c = synthetic_corpus()
    tp = c.trans_problem
    for seed in (13, 14):
        (interp,) = [x for x in protocol_tasks(c, "interpolation", seed) if x.train_key == "d0"]
        te = interp.tests[0].rows
        assert not set(te) & set(interp.train_rows)
        assert abs(len(te) / (len(te) + len(interp.train_rows)) - 0.2) < 0.02
        assert interp.tests[0].distractors == "domain" and not interp.tests[0].plans

        (ext,) = [x for x in protocol_tasks(c, "extrapolation", seed) if x.train_key == "d1"]
        assert not set(tp[ext.train_rows]) & set(tp[ext.tests[0].rows])  # disjoint problems
        assert ext.tests[0].distractors == "problem" and ext.tests[0].plans

        (pv,) = [x for x in protocol_tasks(c, "plan_variant", seed) if x.train_key == "d0"]
        assert 0 not in set(tp[pv.tests[0].rows])  # unique-plan problem excluded
        assert set(tp[pv.tests[0].rows]) <= set(tp[pv.train_rows])  # same problems, other plans

        (md,) = protocol_tasks(c, "multi_domain", seed)
        assert sorted(t.domain for t in md.tests) == c.domains
        exts = {x.train_key: x for x in protocol_tasks(c, "extrapolation", seed)}
        np.testing.assert_array_equal(np.sort(md.train_rows),
                                      np.sort(np.concatenate([exts[d].train_rows for d in c.domains])))

    cross = protocol_tasks(c, "cross_domain", 13)
    assert len(cross) == 3 and all(len(x.tests) == 2 for x in cross)
    for x in cross:
        assert all(t.domain != x.train_key for t in x.tests)
    loo = protocol_tasks(c, "leave_one_out", 13)
    dom = c.trans_domain
    for x in loo:
        held = x.tests[0].domain
        assert x.train_key == f"without-{held}"
        assert c.domains.index(held) not in set(dom[x.train_rows])
    # seeded: same seed -> same partition; other seed -> another partition
    a = protocol_tasks(c, "extrapolation", 13)[0].tests[0].rows
    b = protocol_tasks(c, "extrapolation", 13)[0].tests[0].rows
    np.testing.assert_array_equal(a, b)
    assert set(PROTOCOLS) == {"interpolation", "plan_variant", "extrapolation", "multi_domain",
                              "cross_domain", "leave_one_out"}
    with pytest.raises(ValueError, match="unknown protocol"):
        protocol_tasks(c, "zero_shot", 13)


def test_single_domain_transfer_protocols_are_skipped_with_reason():
    c = synthetic_corpus(n_domains=1)
    (x,) = protocol_tasks(c, "cross_domain", 13)
    assert x.skipped and "two or more domains" in x.skipped


def test_max_train_caps_training_rows_only():
    """`embedplan.max_train_transitions` keeps a seeded sample of the training rows of large tasks
    (pooled domains) and never touches the test sets."""
    c = synthetic_corpus()
    full = {t.train_key: t for t in protocol_tasks(c, "leave_one_out", 13)}
    cap = min(len(t.train_rows) for t in full.values()) - 1
    capped = {t.train_key: t for t in protocol_tasks(c, "leave_one_out", 13, max_train=cap)}
    again = {t.train_key: t for t in protocol_tasks(c, "leave_one_out", 13, max_train=cap)}
    for key, t in capped.items():
        assert len(t.train_rows) == cap and set(t.train_rows) <= set(full[key].train_rows)
        assert np.array_equal(t.train_rows, again[key].train_rows)
        assert [x.rows.tolist() for x in t.tests] == [x.rows.tolist() for x in full[key].tests]
    small = protocol_tasks(c, "interpolation", 13, max_train=10**6)
    assert [t.train_rows.tolist() for t in small] == [t.train_rows.tolist() for t in protocol_tasks(c, "interpolation", 13)]


# ---------------------------------------------------------------------------------------------
# the untrained floors (Appendix D.6): the residual network at its initial weights, and the same
# weights without the identity skip of Eq. 27 (`untrained: noskip`)
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("arch", ["mlp", "hyper"])
def test_noskip_network_is_the_same_weights_minus_the_identity_skip(arch):
    """B.1.3, Eq. 27 (MLP) and Eq. 29 (hypernetwork, which adds z_s too): for one seed,
    ``skip=False`` draws the same parameters and predicts exactly the residual prediction minus z_s."""
    torch.manual_seed(7)
    res = build_model(small_cfg(arch=arch), 24, 24).eval()
    torch.manual_seed(7)
    nos = build_model(small_cfg(arch=arch), 24, 24, skip=False).eval()
    for (k, a), (k2, b) in zip(res.state_dict().items(), nos.state_dict().items()):
        assert k == k2 and torch.equal(a, b), k
    zs, za = torch.randn(9, 128), torch.randn(9, 128)
    with torch.no_grad():
        torch.testing.assert_close(nos.transition(zs, za), res.transition(zs, za) - zs)
    # a model saved from a residual network loads into the skipless one (no extra state)
    nos.load_state_dict(res.state_dict())


def test_untrained_residual_floor_is_a_noisy_identity_and_noskip_ranks_at_chance():
    """Why the untrained twin is far above chance, and that the `noskip` floor is not. On the
    synthetic table successors lie next to their source state (as one action's effects leave most of
    a state's sentences unchanged), so ranking candidates by closeness to z_s (the identity
    predictor) is a strong heuristic. The residual network at random weights predicts
    z_s + FFN(...) with ||FFN|| ~ ||z_s||: it inherits much of that heuristic. Without the skip the
    same weights rank at chance (5/32 here), the level Appendix D.6 reports (5/128 = 3.9 %)."""
    t = synthetic_table()
    rows = np.arange(len(t))
    pool, chance = 32, 5 / 32
    hits = {"identity": [], "residual": [], "noskip": []}
    for seed in range(6):
        for kind in hits:
            torch.manual_seed(seed)
            model = build_model(small_cfg(), 24, 24, skip=kind != "noskip").eval()
            if kind == "identity":
                model.transition = lambda zs, za: zs  # z' = z_s in the same random projection
            res = evaluate_rows(model, t, rows, pool_size=pool, distractors="problem", seed=seed)
            hits[kind].append(hit_metrics(res)["hit@5"])
    m = {k: float(np.mean(v)) for k, v in hits.items()}
    assert m["identity"] > m["residual"] > chance + 0.2, m
    assert abs(m["noskip"] - chance) < 0.05, m


def test_noskip_floor_block_traits_validation_and_twins(tmp_path):
    """`untrained: noskip` is a configured floor of the embedplan class (not a generated twin):
    its traits name it, bad values are refused, and the twin generator leaves its block alone."""
    from planarena.config import Layout
    from planarena.methods import with_twins
    from planarena.methods.embedplan.method import EmbedPlan, untrained_mode

    params = {"embedplan": {"model": {}}, "evaluation": {"seeds": [0]}}
    row = {"method": "embedplan", "arch": "mlp"}
    noskip = {**row, "untrained": "noskip", "twin_of": "embedplan_mlp"}
    t_res = EmbedPlan.report_traits({**row, "untrained": True, "twin_of": "embedplan_mlp"}, params)
    t_nos = EmbedPlan.report_traits(noskip, params)
    assert (t_res.role, t_res.twin_of, t_res.variant) == ("floor", "embedplan_mlp", "")  # the paper's floor
    assert (t_nos.role, t_nos.twin_of, t_nos.budget) == ("floor", "embedplan_mlp", None)
    assert "no skip" in t_nos.variant
    assert EmbedPlan.twin_variants(row) == (True,) and EmbedPlan.twin_variants(noskip) == ()
    assert untrained_mode(noskip) == "noskip" and untrained_mode({**row, "untrained": True}) is True
    with pytest.raises(ValueError, match="untrained"):
        untrained_mode({**row, "untrained": "paper"}, "x")
    with pytest.raises(ValueError, match="arch mlp or hyper"):
        untrained_mode({"arch": "identity", "untrained": "noskip"}, "x")
    got = with_twins({**params, "methods": {"embedplan_mlp": row, "embedplan_mlp_noskip": noskip}})["methods"]
    assert got["embedplan_mlp_noskip"] == noskip
    assert got["embedplan_mlp_untrained"] == {**row, "untrained": True, "twin_of": "embedplan_mlp"}
    # the method: nothing to train, a skipless network
    m = EmbedPlan("embedplan_mlp_noskip", noskip, params, Layout(tmp_path / "data"))
    assert m._untrained()
    net = m._new_model(synthetic_corpus(n_domains=1), seed=0)
    assert net.trans.skip is False
    assert EmbedPlan("r", row, params, Layout(tmp_path / "data"))._new_model(synthetic_corpus(n_domains=1), 0).trans.skip


def test_noskip_floor_records_rank_at_chance_and_the_twin_above(tmp_path, monkeypatch):
    """Both floors through the method's train/evaluate path (untrained: no weights written) on a
    synthetic corpus of 2 domains x 2 problems of 60 states (Extrapolation: within-problem pools of
    60): the `noskip` records sit at their pools' random-ranker Hit@5, the residual twin's far above."""
    from planarena.config import Layout
    from planarena.methods.embedplan.method import EmbedPlan

    t = synthetic_table(n_problems=4, states_per_problem=60, n_domains=2)
    trans_problem = t.state_problem[t.s]
    plans = [(pid, np.nonzero(trans_problem == pid)[0][:5]) for pid in range(4)]
    corpus = Corpus(table=t, domains=["d0", "d1"], problems=[(f"d{p // 2}", f"p{p}") for p in range(4)],
                    trans_problem=trans_problem, plans=plans)
    monkeypatch.setattr(EmbedPlan, "_corpora", lambda self: iter([("fake", "fake", corpus)]))
    params = {"embedplan": {"model": {"proj_hidden": 32, "proj_layers": 2, "hidden": 64}},
              "evaluation": {"seeds": [0]}}
    out = {}
    for value in (True, "noskip"):
        config = {"method": "embedplan", "arch": "mlp", "untrained": value, "twin_of": "embedplan_mlp",
                  "protocols": ["extrapolation"], "seeds": list(range(4))}
        m = EmbedPlan(f"floor_{value}", config, params, Layout(tmp_path / "data"))
        m.train(tmp_path / str(value))
        assert not list((tmp_path / str(value)).rglob("*.pt"))
        m.load(tmp_path / str(value))
        recs = [r["extra"] for r in m.pool_records(set(), "fp", {})]
        assert len(recs) == 8 and all(("untrained" in x) == (value == "noskip") for x in recs)
        out[value] = (np.mean([x["hit@5"] for x in recs]), np.mean([x["hit_chance@5"] for x in recs]))
    (res, chance), (nos, chance2) = out[True], out["noskip"]
    assert chance == chance2 == pytest.approx(5 / 60, abs=1e-5)  # records round to 6 places
    assert res > chance + 0.15, out
    assert abs(nos - chance) < 0.04, out
