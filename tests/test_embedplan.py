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
    model = build_model(small_cfg(), 24, 24)
    res = train(model, t, train_rows, small_cfg(), seed=0)
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
