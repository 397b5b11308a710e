"""DIAS model and training (``planarena.methods.dias.model`` / ``.train``): the slack-row Sinkhorn
(Algorithm 1), the transition graph (Section 4.1), eq. 5/8/9 on hand-set parameters, PCGrad
(eq. 19-20), seeding, and end-to-end learning of exact schemas on two tiny synthetic domains
generated here:

* ``walk``: a robot on a directed graph of 5 nodes; ``move(?x1 ?x2)``: pre ``at(?x1)``,
  ``edge(?x1 ?x2)``; add ``at(?x2)``, ``visited(?x2)``; del ``at(?x1)`` (full STRIPS actions);
* ``toggle``: 4 lamps; ``on(?x1)`` (pre not ``lit``, add ``lit``) and ``off(?x1)`` (pre ``lit``, del
  ``lit``) (action names only).

DIAS maximises preconditions (eq. 11), so the expected schema is the *maximal* one consistent with
the data (every lifted atom over the arguments that is true, resp. false, in every pre-state), which
the tests compute from the transitions and check against the hand-written true schema.
"""

from __future__ import annotations

import math

import pytest
import torch

from planarena.methods.dias.model import (DiasModel, LearnedSchema, Vocab, build_graph, derive, edge_type_names,
                                          log_p_pre, sinkhorn_slack, successor, successor_bce)
from planarena.methods.dias.train import DiasConfig, TransitionData, pcgrad, tau_schedule, train


# ---------------------------------------------------------------------------------------------
# synthetic domains


def walk_domain(n: int = 5, steps: int = 80, seed: int = 0) -> tuple[Vocab, TransitionData]:
    g = torch.Generator().manual_seed(seed)
    vocab = Vocab((("at", 1), ("visited", 1), ("edge", 2)), (("move", 2),))
    edges = {(i, (i + 1) % n) for i in range(n)} | {(0, 2), (3, 1)}

    def adj(pos: int, vis: set) -> torch.Tensor:
        A = torch.zeros(3, n, n)
        A[0, pos, pos] = 1
        for v in vis:
            A[1, v, v] = 1
        for i, j in edges:
            A[2, i, j] = 1
        return A

    pos, vis = 0, {0}
    As, Ns, known = [], [], []
    for _ in range(steps):
        succ = sorted(j for i, j in edges if i == pos)
        y = succ[int(torch.randint(len(succ), (1,), generator=g))]
        As.append(adj(pos, vis))
        vis = vis | {y}
        Ns.append(adj(y, vis))
        known.append([pos, y])
        pos = y
    return vocab, TransitionData(torch.stack(As), torch.stack(Ns), torch.zeros(steps, dtype=torch.long),
                                 torch.tensor(known))


def toggle_domain(n: int = 4, steps: int = 60, seed: int = 0, slots: int = 1) -> tuple[Vocab, TransitionData, torch.Tensor]:
    """Returns the vocab, the names-only data (``known`` all -1) and the true arguments (N, 1)."""
    g = torch.Generator().manual_seed(seed)
    vocab = Vocab((("lit", 1),), (("on", 1), ("off", 1)))
    state = torch.zeros(n, dtype=torch.bool)
    state[0] = True
    As, Ns, acts, args = [], [], [], []
    for _ in range(steps):
        x = int(torch.randint(n, (1,), generator=g))
        A = torch.zeros(1, n, n)
        A[0, range(n), range(n)] = state.float()
        acts.append(1 if state[x] else 0)
        state = state.clone()
        state[x] = ~state[x]
        N = torch.zeros(1, n, n)
        N[0, range(n), range(n)] = state.float()
        As.append(A)
        Ns.append(N)
        args.append([x])
    data = TransitionData(torch.stack(As), torch.stack(Ns), torch.tensor(acts), torch.full((steps, slots), -1))
    return vocab, data, torch.tensor(args)


def maximal_schemas(vocab: Vocab, data: TransitionData, args: torch.Tensor) -> list[LearnedSchema]:
    """The maximal-precondition, minimal-effect schema per action consistent with the data, given the
    true arguments ``args`` (N, arity)."""
    out = []
    for a, (name, arity) in enumerate(vocab.actions):
        rows = (data.action == a).nonzero()[:, 0]
        lits: dict[str, list] = {"pre_pos": [], "pre_neg": [], "add": [], "delete": []}
        for r, (pred, parity) in enumerate(vocab.predicates):
            pairs = [(i, i) for i in range(arity)] if parity == 1 else [(i, j) for i in range(arity) for j in range(arity)]
            for i, j in pairs:
                s = data.A[rows, r, args[rows, i], args[rows, j]]
                t = data.A_next[rows, r, args[rows, i], args[rows, j]]
                lit = (pred, (f"?x{i + 1}",) if parity == 1 else (f"?x{i + 1}", f"?x{j + 1}"))
                for key, hit in (("pre_pos", (s == 1).all()), ("pre_neg", (s == 0).all()),
                                 ("add", ((s == 0) & (t == 1)).any()), ("delete", ((s == 1) & (t == 0)).any())):
                    if hit:
                        lits[key].append(lit)
        out.append(LearnedSchema(name, tuple(f"?x{k + 1}" for k in range(arity)),
                                 *(tuple(lits[k]) for k in ("pre_pos", "pre_neg", "add", "delete"))))
    return out


def _contains(big: LearnedSchema, small: LearnedSchema) -> bool:
    return all(set(getattr(small, k)) <= set(getattr(big, k)) for k in ("pre_pos", "pre_neg", "add", "delete"))


# ---------------------------------------------------------------------------------------------
# Sinkhorn (Algorithm 1)


def test_sinkhorn_rectangular_rows_one_columns_at_most_one():
    C = torch.tensor([[1.0, 0.0, 2.0, -1.0], [0.5, 3.0, 0.0, 0.0]], dtype=torch.float64)
    S = sinkhorn_slack(C, iters=500, tol=1e-7)
    assert S.dtype == torch.float32 and S.shape == (2, 4)
    assert torch.allclose(S.sum(-1), torch.ones(2), atol=1e-5)
    cols = S.sum(-2)
    assert (cols <= 1 + 1e-6).all()
    # the slack row absorbs the remaining column mass: O - M = 2 in total
    assert math.isclose(float((1 - cols).sum()), 2.0, abs_tol=1e-4)
    # batched over leading dims gives the same per-matrix result
    Sb = sinkhorn_slack(torch.stack([C, C]).float(), iters=500, tol=1e-7)
    assert torch.allclose(Sb[1], S, atol=1e-6)


def test_sinkhorn_square_columns_exact_rows_converge():
    """M = O: the slack row must vanish, which Sinkhorn reaches only as O(1/T); columns are exact
    after every iteration (the last update is the column one), rows approach 1."""
    C = torch.tensor([[0.3, -1.0, 0.8], [1.2, 0.1, -0.4], [0.0, 0.5, 0.2]])
    errs = []
    for T in (10, 100, 2000):
        S = sinkhorn_slack(C, iters=T, tol=0.0)
        assert (S.sum(-2) <= 1 + 1e-6).all()
        errs.append(float((S.sum(-1) - 1).abs().max()))
    assert errs[0] > errs[1] > errs[2] and errs[2] < 1e-3


def test_sinkhorn_masks_and_peaked_logits():
    C = torch.tensor([[1.0, 0.0, 2.0, -1.0], [0.5, 3.0, 0.0, 0.0]], requires_grad=True)
    col = torch.tensor([False, True, False, False])
    S = sinkhorn_slack(C, iters=500, tol=1e-7, mask=col[None, :])
    assert (S[:, 1] == 0).all()
    assert torch.allclose(S.sum(-1), torch.ones(2), atol=1e-5)
    # a fully masked row is zero; the others stay row-stochastic; gradients stay finite
    mask = torch.tensor([[True] * 4, [False, True, False, False]])
    S = sinkhorn_slack(C, iters=500, tol=1e-7, mask=mask)
    assert (S[0] == 0).all() and math.isclose(float(S[1].sum().detach()), 1.0, abs_tol=1e-5)
    (S * torch.arange(8.0).view(2, 4)).sum().backward()
    assert torch.isfinite(C.grad).all() and (C.grad[0] == 0).all()
    # strongly peaked logits: close to a (partial) permutation (square: rows converge as O(1/T))
    P = sinkhorn_slack(20.0 * torch.eye(3)[[2, 0, 1]], iters=2000, tol=1e-7)
    assert torch.allclose(P, torch.eye(3)[[2, 0, 1]], atol=1e-3)
    Q = sinkhorn_slack(torch.tensor([[0.0, 15.0, 0.0, 0.0], [0.0, 0.0, 0.0, 15.0]]), iters=5000, tol=1e-9)
    assert torch.allclose(Q, torch.tensor([[0.0, 1, 0, 0], [0, 0, 0, 1]]), atol=1e-3)


# ---------------------------------------------------------------------------------------------
# transition graph (Section 4.1)


def _edges_by_name(edge_index, edge_type, names):
    out = {n: set() for n in names}
    for (s, d), t in zip(edge_index.t().tolist(), edge_type.tolist()):
        out[names[t]].add((s, d))
    return out


def test_graph_of_hand_written_transition():
    vocab = Vocab((("clear", 1), ("on", 2)), (("stack", 2),))
    A = torch.zeros(1, 2, 3, 3)
    A[0, 0, 0, 0] = A[0, 0, 1, 1] = 1          # clear(0), clear(1)
    A[0, 1, 1, 2] = 1                           # on(1, 2)
    N = A.clone()
    N[0, 1, 0, 1] = 1                           # adds on(0, 1)
    N[0, 0, 1, 1] = 0                           # deletes clear(1)
    known = torch.tensor([[0, -1]])             # stack's first argument is object 0
    names = edge_type_names(vocab, 2)
    assert len(names) == 2 * (3 * 2 + 1 * 2)
    ei, et = build_graph(A, N, torch.tensor([0]), known, vocab.A)
    got = {k: v for k, v in _edges_by_name(ei, et, names).items() if v}
    assert got == {
        "s:clear": {(0, 0), (1, 1)}, "s:on": {(1, 2)}, "add:on": {(0, 1)}, "del:clear": {(1, 1)},
        "arg:stack:1": {(0, 0)},
        "~s:clear": {(0, 0), (1, 1)}, "~s:on": {(2, 1)}, "~add:on": {(1, 0)}, "~del:clear": {(1, 1)},
        "~arg:stack:1": {(0, 0)},
    }
    # a batch of two: the second transition's nodes are offset by O
    ei2, et2 = build_graph(torch.cat([A, A]), torch.cat([N, N]), torch.tensor([0, 0]), torch.cat([known, known]), 1)
    got2 = _edges_by_name(ei2, et2, names)
    assert got2["s:on"] == {(1, 2), (4, 5)} and got2["~add:on"] == {(1, 0), (4, 3)}


def test_vocab_rejects_other_arities():
    with pytest.raises(ValueError, match="between"):
        Vocab((("clear", 1), ("between", 3)), (("a", 1),))
    with pytest.raises(ValueError, match="arity"):
        DiasModel(Vocab((("p", 1),), (("a", None),)), observation="strips")


# ---------------------------------------------------------------------------------------------
# eq. 3-9 on hand-set parameters


def _stack_model() -> DiasModel:
    """stack(?x1 ?x2): pre clear(x1) clear(x2) ontable(x1); add on(x1 x2); del clear(x2) ontable(x1)."""
    vocab = Vocab((("clear", 1), ("ontable", 1), ("on", 2)), (("stack", 2),))
    model = DiasModel(vocab, observation="strips")
    pre = torch.zeros(1, 3, 2, 2, 3)
    eff = torch.zeros(1, 3, 2, 2, 3)
    pre[..., 0] = eff[..., 0] = 30.0
    for r, i, j in ((0, 0, 0), (0, 1, 1), (1, 0, 0)):
        pre[0, r, i, j] = torch.tensor([0.0, 30.0, 0.0])
    eff[0, 2, 0, 1] = torch.tensor([0.0, 30.0, 0.0])
    for r, i, j in ((0, 1, 1), (1, 0, 0)):
        eff[0, r, i, j] = torch.tensor([0.0, 0.0, 30.0])
    with torch.no_grad():
        model.P_pre.copy_(pre)
        model.P_eff.copy_(eff)
    return model


def _blocks_state(atoms, O=3):
    A = torch.zeros(1, 3, O, O)
    for r, i, j in atoms:
        A[0, r, i, j] = 1
    return A


def test_crisp_schema_predicts_successor_and_checks_preconditions():
    model = _stack_model()
    # clear(0) ontable(0) clear(1) on(1,2) ontable(2)
    A = _blocks_state([(0, 0, 0), (1, 0, 0), (0, 1, 1), (2, 1, 2), (1, 2, 2)])
    N = _blocks_state([(0, 0, 0), (2, 0, 1), (2, 1, 2), (1, 2, 2)])
    S = torch.eye(3)[[0, 1]][None]                              # x1 = 0, x2 = 1
    act = torch.tensor([0])
    for tau in (0.0, 1.0):
        A_hat, lpp, _ = model.predict(A, S, act, tau)
        assert torch.allclose(A_hat, N, atol=1e-5) and float(lpp.exp().detach()) > 1 - 1e-5
    with torch.no_grad():
        out = model(A, N, act, torch.tensor([[0, 1]]), tau=0.0)
    assert float(out.l_adj) < 1e-4 and float(out.p_pre) > 1 - 1e-5
    assert float(out.n) == 3 * 9 + 2 * (2 + 2 + 4)             # eq. 12: R O^2 + 2 sum_r M^|p_r|
    # x2 = 2 is not clear: violated precondition, p_pre ~ 0 at tau = 0, the geometric mean at tau = 1
    S_bad = torch.eye(3)[[0, 2]][None]
    A_hat, lpp0, _ = model.predict(A, S_bad, act, 0.0)
    assert float(lpp0.exp()) < 1e-6 and torch.allclose(A_hat, A, atol=1e-5)
    _, lpp1, _ = model.predict(A, S_bad, act, 1.0)
    assert math.isclose(float(lpp1) * 27, float(lpp0), rel_tol=1e-5) and 0.3 < float(lpp1.exp()) < 0.9


def test_log_space_bce_equals_bce_of_eq5():
    g = torch.Generator().manual_seed(3)
    A = (torch.rand(4, 2, 3, 3, generator=g) > 0.5).float()
    N = (torch.rand(4, 2, 3, 3, generator=g) > 0.5).float()
    Pa, Pd = torch.rand(4, 2, 3, 3, generator=g) * 0.9, torch.rand(4, 2, 3, 3, generator=g) * 0.9
    lpp = torch.log(torch.rand(4, generator=g) * 0.9 + 0.05)
    A_hat = successor(A, lpp.exp(), Pa, Pd)
    ref = torch.nn.functional.binary_cross_entropy(A_hat, N, reduction="none").sum(dim=(1, 2, 3))
    assert torch.allclose(successor_bce(A, N, Pa, Pd, lpp), ref, rtol=1e-4)
    pos = torch.zeros(1, 2, 3, 3)
    assert torch.allclose(log_p_pre(A[:1], pos, pos, 0.0), torch.zeros(1))


def test_unary_off_diagonal_fixed_without_nans():
    vocab = Vocab((("lit", 1), ("link", 2)), (("a", None),))
    model = DiasModel(vocab, slots=3, d=8, layers=1)
    p = model.pre_logits().softmax(-1)
    assert torch.isfinite(p).all()
    off = ~torch.eye(3, dtype=torch.bool)
    assert (p[0, 0][off] == torch.tensor([1.0, 0, 0])).all()            # unary, off-diagonal
    assert (p[0, 1][off][:, 0] < 1).all()                               # binary: learnable everywhere
    p[..., 1].sum().backward()
    assert (model.P_pre.grad[0, 0][off] == 0).all() and torch.isfinite(model.P_pre.grad).all()


# ---------------------------------------------------------------------------------------------
# training pieces


def test_pcgrad_projection_and_cap():
    gm = torch.tensor([1.0, 0.0])
    # opposing: aux projected onto the normal plane of main, then capped at ||g_main|| = 1
    assert torch.allclose(pcgrad(gm, torch.tensor([-1.0, 1.0]), 0.5), torch.tensor([1.0, 0.5]))
    assert torch.allclose(pcgrad(gm, torch.tensor([-3.0, 2.0]), 1.0), torch.tensor([1.0, 1.0]))
    # not opposing: no projection; norm sqrt(2) > 1 is capped to 1
    r = 1 / math.sqrt(2)
    assert torch.allclose(pcgrad(gm, torch.tensor([1.0, 1.0]), 1.0), torch.tensor([1 + r, r]))
    # small aux: added as is, times alpha; zero aux adds nothing
    assert torch.allclose(pcgrad(gm, torch.tensor([0.1, 0.2]), 2.0), torch.tensor([1.2, 0.4]))
    assert torch.equal(pcgrad(gm, torch.zeros(2), 1.0), gm)


def test_pcgrad_granularity_projects_per_tensor_or_per_coordinate():
    """``flat`` keeps an auxiliary coordinate that opposes the main one when the whole vectors agree;
    ``tensor`` projects each parameter's slice; ``element`` drops every opposing coordinate. The
    norm cap is on the whole vector in each case."""
    gm = torch.tensor([1.0, 0.0, 1.0, -1.0])
    ga = torch.tensor([0.5, 0.5, 1.0, 0.2])          # agrees overall (dot 1.3), opposes coordinate 4
    assert torch.allclose(pcgrad(gm, ga, 1.0), gm + ga)
    # element: coordinate 4 dropped; |g~aux| = 1.22 < |gm| = 1.73, no cap
    assert torch.allclose(pcgrad(gm, ga, 1.0, "element"), gm + torch.tensor([0.5, 0.5, 1.0, 0.0]))
    # tensor: slices (2, 2); the second slice (1, -1) . (1, 0.2) = 0.8 >= 0 is kept; a slice that
    # opposes is projected: (0, 1) . (0, -1) < 0 -> the aux slice loses its main component
    assert torch.allclose(pcgrad(gm, ga, 1.0, "tensor", [2, 2]), gm + ga)
    gm2, ga2 = torch.tensor([1.0, 0.0, 0.0, 1.0]), torch.tensor([1.0, 0.0, 0.5, -1.0])
    assert torch.allclose(pcgrad(gm2, ga2, 1.0, "tensor", [2, 2]), gm2 + torch.tensor([1.0, 0.0, 0.5, 0.0]))
    with pytest.raises(ValueError, match="granularity 'rows'"):
        pcgrad(gm, ga, 1.0, "rows")
    with pytest.raises(ValueError, match="sizes"):
        pcgrad(gm, ga, 1.0, "tensor")
    with pytest.raises(ValueError, match="pcgrad 'rows'"):
        DiasConfig(pcgrad="rows")


def test_tau_schedule_and_config():
    assert tau_schedule(0) == 1.0 and math.isclose(tau_schedule(500), 0.1) and tau_schedule(5000, floor=0.1) == 0.1
    with pytest.raises(ValueError, match="effects"):
        DiasConfig(effects="linear")
    with pytest.raises(ValueError, match="unknown key"):
        DiasConfig.from_params({"d": 16, "lr_max": 1})


def test_balanced_batch_is_stratified_and_seeded():
    vocab, data, _ = toggle_domain(steps=60)
    counts = torch.bincount(data.action, minlength=2)
    assert counts[0] != counts[1]
    b1 = data.balanced_batch(21, torch.Generator().manual_seed(5))
    b2 = data.balanced_batch(21, torch.Generator().manual_seed(5))
    c = torch.bincount(b1.action, minlength=2).tolist()
    assert sorted(c) == [10, 11] and torch.equal(b1.A, b2.A) and torch.equal(b1.action, b2.action)


def test_mark_known_keeps_seen_slots_active():
    vocab, data, args = toggle_domain(slots=2)
    model = DiasModel(vocab, slots=2, d=8, layers=1, observation="strips_plus")
    known = data.known.clone()
    known[:, 0] = args[:, 0]
    model.mark_known(data.action, known)
    assert model.forced.tolist() == [[True, False], [True, False]]
    with torch.no_grad():
        model.w.fill_(-5.0)
    assert [s.parameters for s in derive(model, vocab)] == [("?x1",), ("?x1",)]


# ---------------------------------------------------------------------------------------------
# end to end


WALK_CFG = DiasConfig(observation="strips", batch=32, steps=300, eval_every=100, tau_steps=50, lr=2e-2)


def test_full_strips_learns_the_exact_schema():
    vocab, data = walk_domain()
    expected = maximal_schemas(vocab, data, data.known)
    true = LearnedSchema("move", ("?x1", "?x2"), (("at", ("?x1",)), ("edge", ("?x1", "?x2"))), (),
                         (("at", ("?x2",)), ("visited", ("?x2",))), (("at", ("?x1",)),))
    assert _contains(expected[0], true)
    model, facts = train(WALK_CFG, vocab, data, data, seed=0, progress=False)
    assert not facts["diverged"] and facts["steps_run"] == 300 and len(facts["validation"]) == 3
    got = derive(model, vocab, WALK_CFG.threshold)
    assert [(s.name, s.parameters) for s in got] == [("move", ("?x1", "?x2"))]
    assert {k: set(getattr(got[0], k)) for k in ("pre_pos", "pre_neg", "add", "delete")} == \
        {k: set(getattr(expected[0], k)) for k in ("pre_pos", "pre_neg", "add", "delete")}


def test_names_only_learns_toggle():
    """Action names only, one slot per action (= the true arity; with more slots than the arity the
    spare slot's activation needs far more steps than a unit test affords to settle)."""
    vocab, data, args = toggle_domain(n=4, slots=1)
    cfg = DiasConfig(observation="names", slots=1, d=16, layers=2, batch=32, steps=150, eval_every=150,
                     tau_steps=50, lr=2e-2, sinkhorn_iters=30)
    model, facts = train(cfg, vocab, data, None, seed=0, progress=False)
    assert not facts["diverged"] and facts["validation"] == []
    # sigma(w) per (action, slot) logged at every eval step: the one slot is kept (> 1/2) by the end
    (step, act), = facts["slot_activation"]
    assert step == 150 and len(act) == 2 and all(len(row) == 1 and row[0] > 0.5 for row in act), act
    expected = maximal_schemas(vocab, data, args)
    assert expected == [LearnedSchema("on", ("?x1",), (), (("lit", ("?x1",)),), (("lit", ("?x1",)),), ()),
                        LearnedSchema("off", ("?x1",), (("lit", ("?x1",)),), (), (), (("lit", ("?x1",)),))]
    assert derive(model, vocab) == expected


def test_same_seed_same_run_and_divergence_does_not_raise():
    vocab, data = walk_domain(steps=30)
    cfg = DiasConfig(observation="strips", batch=16, steps=40, eval_every=20, tau_steps=50, lr=2e-2)
    (m1, f1), (m2, f2) = (train(cfg, vocab, data, data, seed=7, progress=False) for _ in range(2))
    for k, v in m1.state_dict().items():
        assert torch.equal(v, m2.state_dict()[k]), k
    f1.pop("seconds"), f2.pop("seconds")
    assert f1 == f2 and derive(m1, vocab) == derive(m2, vocab)
    m3, _ = train(cfg, vocab, data, None, seed=8, progress=False)
    assert not torch.equal(m1.P_pre, m3.P_pre)
    # names-only (R-GCN, node noise, Sinkhorn) is seeded as well
    tv, td, _ = toggle_domain(n=4, slots=2)
    ncfg = DiasConfig(observation="names", slots=2, d=8, layers=2, batch=8, steps=5, eval_every=5, sinkhorn_iters=10)
    (n1, g1), (n2, g2) = (train(ncfg, tv, td, td, seed=3, progress=False) for _ in range(2))
    assert all(torch.equal(v, n2.state_dict()[k]) for k, v in n1.state_dict().items())
    assert g1["validation"] == g2["validation"]
    # a non-finite loss stops training and is reported, not raised
    bad = TransitionData(torch.full_like(data.A, float("nan")), data.A_next, data.action, data.known)
    _, f = train(cfg, vocab, bad, None, seed=0, progress=False)
    assert f["diverged"] and f["diverged_at"] == 0 and f["steps_run"] == 0


def test_a_killed_run_resumes_from_its_checkpoint_to_the_uninterrupted_result(tmp_path, monkeypatch):
    """A names-only run (R-GCN, node noise, Sinkhorn: every random stream in use) killed after its
    checkpoint at step 5 resumes there and ends with the parameters and facts of a run that was
    never killed; a checkpoint written under another seed is not read."""
    import planarena.methods.dias.train as dias_train

    tv, td, _ = toggle_domain(n=4, slots=2)
    cfg = DiasConfig(observation="names", slots=2, d=8, layers=2, batch=8, steps=12, eval_every=4, sinkhorn_iters=10)
    m0, f0 = train(cfg, tv, td, td, seed=3, progress=False)
    ckpt = tmp_path / "unit.ckpt"
    real = dias_train.tau_schedule

    def killed_at_7(step, *args):
        if step == 7:
            raise KeyboardInterrupt("killed")
        return real(step, *args)

    monkeypatch.setattr(dias_train, "tau_schedule", killed_at_7)
    with pytest.raises(KeyboardInterrupt):
        train(cfg, tv, td, td, seed=3, progress=False, checkpoint=ckpt, checkpoint_every=5)
    seen = []

    def counted(step, *args):
        seen.append(step)
        return real(step, *args)

    monkeypatch.setattr(dias_train, "tau_schedule", counted)
    assert ckpt.exists() and torch.load(ckpt, weights_only=False)["step"] == 5
    m1, f1 = train(cfg, tv, td, td, seed=3, progress=False, checkpoint=ckpt, checkpoint_every=5)
    assert seen == [0, *range(5, 12)]   # the schedule's start, then steps 5-11 only: resumed, not rerun
    monkeypatch.setattr(dias_train, "tau_schedule", real)
    assert all(torch.equal(v, m1.state_dict()[k]) for k, v in m0.state_dict().items())
    f0.pop("seconds"), f1.pop("seconds")
    assert f1 == f0 and f1["steps_run"] == 12 and len(f1["slot_activation"]) == 3
    # the file now holds step 10 of seed 3: a seed-4 run ignores it and is its own fresh run
    m4, _ = train(cfg, tv, td, td, seed=4, progress=False)
    m5, _ = train(cfg, tv, td, td, seed=4, progress=False, checkpoint=ckpt, checkpoint_every=50)
    assert all(torch.equal(v, m5.state_dict()[k]) for k, v in m4.state_dict().items())


def test_mlp_effects_train_and_predict_successors():
    vocab, data = walk_domain()
    cfg = DiasConfig(observation="strips", effects="mlp", mlp_hidden=32, batch=32, steps=300, eval_every=300,
                     tau_steps=50, lr=2e-2)
    model, facts = train(cfg, vocab, data, None, seed=0, progress=False)
    assert not facts["diverged"]
    schemas = derive(model, vocab)
    assert schemas[0].add == () and schemas[0].delete == () and ("at", ("?x1",)) in schemas[0].pre_pos
    pred = model.mlp_successors(data.A[:10], 0, data.known[:10])
    assert pred.shape == data.A[:10].shape
    assert torch.equal(pred > 0.5, data.A_next[:10] > 0.5)
    one = model.mlp_successors(data.A[0], 0, data.known[0].tolist())
    assert torch.allclose(one, pred[:1])
    with pytest.raises(ValueError):
        model.mlp_successors(data.A[0], 0, [[0, 1, 2]])


WALK_DOMAIN_PDDL = """(define (domain walk)
  (:requirements :strips)
  (:predicates (at ?x) (visited ?x) (edge ?x ?y))
  (:action move :parameters (?x1 ?x2)
    :precondition (and (at ?x1) (edge ?x1 ?x2))
    :effect (and (at ?x2) (visited ?x2) (not (at ?x1)))))
"""


def _walk_problem(tmp_path, n: int = 5):
    edges = sorted({(i, (i + 1) % n) for i in range(n)} | {(0, 2), (3, 1)})
    init = " ".join(f"(edge n{i} n{j})" for i, j in edges)
    path = tmp_path / "p1.pddl"
    path.write_text(f"(define (problem p1) (:domain walk) (:objects {' '.join(f'n{i}' for i in range(n))})\n"
                    f"  (:init (at n0) (visited n0) {init}) (:goal (at n4)))\n")
    return path


def _atoms(vocab: Vocab, A: torch.Tensor) -> frozenset[str]:
    out = set()
    for r, i, j in (A > 0.5).nonzero().tolist():
        pred, arity = vocab.predicates[r]
        out.add(f"({pred} n{i})" if arity == 1 else f"({pred} n{i} n{j})")
    return frozenset(out)


def test_mlp_effects_successor_model_matches_the_true_domain(tmp_path):
    """Appendix A.4.1 "Evaluation": the learned preconditions ground the applicable actions of a test
    state, the MLP predicts each grounding's successor; the protocol compares them with the true
    domain's (Table 3's precision / recall): an MLP that fits the walk predicts every successor."""
    from planarena.methods.dias.method import learned_strips
    from planarena.methods.dias.successors import MlpSuccessors
    from planarena.protocols.schema import successor_counts

    vocab, data = walk_domain()
    cfg = DiasConfig(observation="strips", effects="mlp", mlp_hidden=32, batch=32, steps=300, eval_every=300,
                     tau_steps=50, lr=2e-2)
    model, _ = train(cfg, vocab, data, None, seed=0, progress=False)
    pre = learned_strips("walk", vocab.predicates, derive(model, vocab)).write(tmp_path / "preconditions.pddl")
    assert "(at ?x2)" not in pre.read_text().split(":effect")[1]   # no static effects written
    true_domain = tmp_path / "domain.pddl"
    true_domain.write_text(WALK_DOMAIN_PDDL)
    problem = _walk_problem(tmp_path)
    mlp = MlpSuccessors(model, pre)
    state = _atoms(vocab, data.A[0])
    assert mlp.changes(problem, state) == {frozenset({"+(at n1)", "+(visited n1)", "-(at n0)"}),
                                           frozenset({"+(at n2)", "+(visited n2)", "-(at n0)"})}
    states = [("p1", _atoms(vocab, data.A[k])) for k in range(20)]
    c = successor_counts(true_domain, mlp, {"p1": problem}, states, time_limit=60)
    assert c.states == 20 and c.tp >= 20 and c.fp == 0 and c.fn == 0 and c.sound and c.complete


@pytest.mark.parametrize("key_norm", ["layer", "none"])
def test_key_norm_keeps_sinkhorn_rows_stochastic(key_norm):
    """With the R-GCN's weights blown up (the first names-only Blocks-3 run reached key norms ~1e5),
    raw keys give logit gaps no ``T_max`` Sinkhorn resolves: rows of ``S`` fall far below 1 and
    ``selection_row_mass`` flags it; layer-normalised keys bound ``|C|`` by ``|Q|`` and rows sum to 1."""
    vocab, data, _ = toggle_domain(n=4, slots=3)
    torch.manual_seed(0)
    model = DiasModel(vocab, d=8, slots=3, layers=2, sinkhorn_iters=100, key_norm=key_norm)
    with torch.no_grad():
        for conv in model.gnn:
            for p in conv.parameters():
                p.mul_(300.0)
        model.queries.copy_(model.queries[:, :1].expand_as(model.queries))   # every slot wants the same object
    g = torch.Generator().manual_seed(0)
    K = model.keys(data.A[:8], data.A_next[:8], data.action[:8], data.known[:8], g)
    mass = model.selection_row_mass(data.A[:8], data.A_next[:8], data.action[:8], data.known[:8], g)
    assert mass.shape == (8 * 3,)
    if key_norm == "layer":
        assert torch.allclose(K.norm(dim=-1), torch.full((8, 4), math.sqrt(8)), atol=1e-3)
        assert float(mass.min()) > 0.98
    else:
        assert float(K.norm(dim=-1).max()) > 1e3
        assert float(mass.min()) < 0.9


def test_key_norm_is_a_checked_setting():
    with pytest.raises(ValueError, match="key_norm"):
        DiasConfig(key_norm="batch")
    vocab, _, _ = toggle_domain()
    with pytest.raises(ValueError, match="key_norm"):
        DiasModel(vocab, key_norm="batch")
