"""Width-based R-GNN policies (``rgnn_policies``): lookaheads (IW(1), AIW(1), BAIW, C-AIW), the AD
and External encodings, lifted hindsight relabelling over jumps, and validated greedy plans.

A tiny typed Spanner-like domain written here: men walk along one-way links and pick up spanners.
Types: ``man`` and ``spanner`` (both ``locatable``), ``location``. The hand-computed trees below
follow the paper's Section 3 and Appendix B (its own Spanner example of BAIW's failure mode).
"""

from __future__ import annotations

import math
from pathlib import Path

import pymimir
import pytest
import torch

from planarena.core.pddl import load_problem
from planarena.core.validation import validate_plan
from planarena.methods.rgnn_policies.encodings import PolicyNetwork
from planarena.methods.rgnn_policies.lookahead import AtomFeatures, lookahead, object_types
from planarena.methods.rgnn_policies.policy import LookaheadCache, LookaheadQModel, greedy_episodes
from planarena.methods.rgnn_policies.train import TrainConfig, linear, train_policy

DOMAIN = """(define (domain spanners)
  (:requirements :strips :typing)
  (:types locatable location - object man spanner - locatable)
  (:predicates (at ?x - locatable ?l - location) (link ?a ?b - location) (carrying ?m - man ?s - spanner))
  (:action walk :parameters (?m - man ?a ?b - location)
    :precondition (and (at ?m ?a) (link ?a ?b))
    :effect (and (at ?m ?b) (not (at ?m ?a))))
  (:action pickup :parameters (?m - man ?s - spanner ?l - location)
    :precondition (and (at ?m ?l) (at ?s ?l))
    :effect (and (carrying ?m ?s) (not (at ?s ?l)))))
"""


def _problem_text(goal: str) -> str:
    return f"""(define (problem two-men)
  (:domain spanners)
  (:objects bob alice - man s1 - spanner l0 l1 l2 - location)
  (:init (at bob l0) (at alice l1) (at s1 l2) (link l0 l1) (link l1 l2))
  (:goal (and {goal})))
"""


@pytest.fixture
def spanner(tmp_path: Path):
    """``make(goal) -> (domain file, problem file, pymimir problem)``."""
    dom = tmp_path / "domain.pddl"
    dom.write_text(DOMAIN)

    def make(goal: str, name: str = "p.pddl"):
        prob = tmp_path / name
        prob.write_text(_problem_text(goal))
        return dom, prob, load_problem(str(dom), str(prob))

    return make


def _paths(tree) -> list[tuple[str, ...]]:
    return [tuple(str(a) for a in j.actions) for j in tree.jumps]


WALK_ALICE, WALK_BOB = "(walk alice l1 l2)", "(walk bob l0 l1)"
PICK_ALICE = "(pickup alice s1 l2)"


def test_aiw_novelty_hand_computed(spanner):
    """AIW(1) on the typed problem, goal carrying(alice, s1). Root atoms give the abstracted
    features (at, bob, location), (at, l0, man), (at, alice, location), (at, l1, man),
    (at, s1, location), (at, l2, spanner). Depth 1: alice -> l2 makes (at, l2, man) novel;
    bob -> l1 only repeats (at, bob, location) and (at, l1, man) (alice was at l1): not novel, kept
    as a primitive successor but not expanded. Depth 2: picking s1 up gives the goal atom
    carrying(alice, s1), never abstracted: novel. Bob's walk from there repeats seen features:
    pruned. So exactly two features are added to the root's six."""
    dom, prob, problem = spanner("(carrying alice s1)")
    types = object_types(prob)
    assert types["bob"] == "man" and types["s1"] == "spanner" and types["l0"] == "location"
    feats = AtomFeatures(problem, "aiw", types)
    at_bob_l1 = problem.new_ground_atom(problem.get_domain().get_predicate("at"),
                                        [problem.get_object("bob"), problem.get_object("l1")])
    assert set(feats(int(at_bob_l1.get_index()))) == {("at", 0, "bob", ("location",)), ("at", 1, "l1", ("man",))}
    tree = lookahead(problem, problem.get_initial_state(), "aiw", feats)
    assert _paths(tree) == [(WALK_ALICE,), (WALK_BOB,), (WALK_ALICE, PICK_ALICE)]
    assert tree.edges == [(0, 2)]
    assert tree.novelty_features == 6 + 2
    assert [j.depth for j in tree.jumps] == [1, 1, 2]


def test_aiw_abstracts_a_domain_constant_to_its_declared_type(tmp_path):
    """Section 3: r(o) is the object's type "in the planning domain"; a domain constant (Childsnack's
    ``kitchen - place``) gets its declared type, not the universal one."""
    dom = tmp_path / "domain.pddl"
    dom.write_text(DOMAIN.replace("(:predicates", "(:constants depot - location)\n  (:predicates"))
    prob = tmp_path / "p.pddl"
    prob.write_text(_problem_text("(at bob depot)").replace("(link l1 l2)", "(link l1 l2) (link l2 depot)"))
    types = object_types(prob, dom)
    assert types["depot"] == "location" and types["bob"] == "man"
    assert "depot" not in object_types(prob)  # without the domain file: the problem's objects only
    problem = load_problem(str(dom), str(prob))
    feats = AtomFeatures(problem, "aiw", types)
    at_s1_depot = problem.new_ground_atom(problem.get_domain().get_predicate("at"),
                                          [problem.get_object("s1"), problem.get_domain().get_constant("depot")])
    assert set(feats(int(at_s1_depot.get_index()))) == {("at", 0, "s1", ("location",)), ("at", 1, "depot", ("spanner",))}


def test_iw_keeps_what_aiw_abstracts_and_baiw_collapses(spanner):
    """Same problem. IW(1) tests full atoms: at(bob, l1), at(bob, l2), carrying(bob, s1) are new
    too, so it also follows Bob (5 jumps). BAIW abstracts every object to one type: at(alice, l2)
    repeats (at, *, l2) from at(s1, l2) in the root, so nothing at depth 1 is novel and the
    lookahead stops at the primitive successors: Appendix B's Spanner failure mode, which AIW's
    types avoid."""
    dom, prob, problem = spanner("(carrying alice s1)")
    s0 = problem.get_initial_state()
    iw = lookahead(problem, s0, "iw", AtomFeatures(problem, "iw"))
    assert _paths(iw) == [(WALK_ALICE,), (WALK_BOB,), (WALK_ALICE, PICK_ALICE),
                          (WALK_BOB, "(walk bob l1 l2)"), (WALK_BOB, "(walk bob l1 l2)", "(pickup bob s1 l2)")]
    baiw = lookahead(problem, s0, "baiw", AtomFeatures(problem, "baiw", object_types(prob)))
    assert _paths(baiw) == [(WALK_ALICE,), (WALK_BOB,)]
    flat = lookahead(problem, s0, "flat")
    assert _paths(flat) == [(WALK_ALICE,), (WALK_BOB,)]


def test_iw_tree_is_pymimirs_iw1(spanner):
    """Our IW(1) tree holds exactly the states pymimir's own IW generates into its search tree
    (pymimir runs IW(0), the root's successors, then IW(1)); the goal (both men's errands) has
    width 2, so neither search stops early."""
    _, _, problem = spanner("(carrying alice s1) (at bob l2)")
    s0 = problem.get_initial_state()
    ours = {j.state for j in lookahead(problem, s0, "iw", AtomFeatures(problem, "iw")).jumps}
    theirs: set = set()
    pymimir.iw(problem, s0, 1, on_generate_new_state=lambda s, a, c, t: theirs.add(t))
    assert ours == theirs and len(ours) == 5


def test_caiw_capacity_keeps_most_goal_atoms(spanner):
    """C-AIW with capacity 1 and goal at(bob, l1): both depth-1 walks are novel (Alice's through
    (at, l2, man), Bob's through the goal atom), but only one may be expanded: Bob's state, which
    satisfies a goal atom (h = 1 against 0). Alice's branch (her pickup at depth 2, which AIW
    finds) is cut; her walk stays a candidate as a primitive successor of the root."""
    _, prob, problem = spanner("(at bob l1)")
    types = object_types(prob)
    s0 = problem.get_initial_state()
    aiw = lookahead(problem, s0, "aiw", AtomFeatures(problem, "aiw", types))
    caiw = lookahead(problem, s0, "caiw", AtomFeatures(problem, "aiw", types), capacity=1)
    assert _paths(aiw) == [(WALK_ALICE,), (WALK_BOB,), (WALK_ALICE, PICK_ALICE)]
    assert _paths(caiw) == [(WALK_ALICE,), (WALK_BOB,)] and caiw.edges == []
    assert _paths(lookahead(problem, s0, "caiw", AtomFeatures(problem, "aiw", types), capacity=2)) == _paths(aiw)


def _count_forward(network: PolicyNetwork, calls: list):
    inner = network.rgnn.forward

    def counted(batch):
        calls.append(len(batch))
        return inner(batch)

    network.rgnn.forward = counted


def test_ad_scores_all_candidates_in_one_pass_and_ranks_like_external(spanner):
    """AD encodes the whole IW(1) tree as one graph (one R-GNN instance); External one graph per
    candidate plus the root. Fitted to the same exact target (the candidates' true goal distance,
    ties broken by the tree order), both rank the candidates the same way."""
    _, prob, problem = spanner("(carrying bob s1)")
    cache = LookaheadCache("iw", with_deltas=True)
    cache.add(problem, object_types(prob))
    s0, goal = problem.get_initial_state(), problem.get_goal_condition()
    tree, deltas = cache.get(s0)
    n = len(tree.jumps)
    dist = []  # optimal steps to the goal from each candidate (5: a dead end, s1 taken by Alice)
    for j in tree.jumps:
        res = pymimir.brfs(problem, j.state)
        dist.append(len(res.solution or []) if str(res.status) == "solved" else 5)
    assert dist == [3, 2, 5, 1, 0]
    target = torch.tensor([-(d + 0.01 * k) for k, d in enumerate(dist)])
    rankings = {}
    for enc in ("ad", "ext"):
        torch.manual_seed(0)
        net = PolicyNetwork(problem.get_domain(), enc, 16, 2)
        opt = torch.optim.Adam(net.parameters(), lr=1e-2)
        for _ in range(250):  # the loss is below 1e-7 here for both encodings (CI time)
            q = net.q_values([(s0, goal, tree, deltas)])[0]
            loss = ((q - target) ** 2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        assert loss.item() < 1e-4  # exact on this tree
        calls: list = []
        _count_forward(net, calls)
        with torch.no_grad():
            q = net.q_values([(s0, goal, tree, deltas)])[0]
        assert q.shape == (n,)
        assert calls == ([1] if enc == "ad" else [1 + n])  # AD: one graph for the whole tree
        rankings[enc] = torch.argsort(q, descending=True).tolist()
    assert rankings["ad"] == rankings["ext"] == torch.argsort(target, descending=True).tolist()


def test_aa_scores_ground_actions_of_the_flat_lookahead(spanner):
    """AA (flat policies): one graph with a node per applicable ground action; one Q-value per
    distinct primitive successor, in the flat tree's order; AA needs the flat lookahead."""
    _, prob, problem = spanner("(carrying bob s1)")
    cache = LookaheadCache("flat", with_deltas=False)
    cache.add(problem, object_types(prob))
    s0, goal = problem.get_initial_state(), problem.get_goal_condition()
    tree, deltas = cache.get(s0)
    assert deltas is None and [j.depth for j in tree.jumps] == [1, 1]
    torch.manual_seed(0)
    net = PolicyNetwork(problem.get_domain(), "aa", 8, 2)  # 2 layers: objects differ before actions read them
    calls: list = []
    _count_forward(net, calls)
    with torch.no_grad():
        q = net.q_values([(s0, goal, tree, None), (s0, goal, tree, None)])
    assert calls == [2] and [tuple(x.shape) for x in q] == [(2,), (2,)] and torch.allclose(q[0], q[1])
    assert not torch.isclose(q[0][0], q[0][1])  # the two walks are told apart


def test_depth_rank_loss_joins_the_q_gradient(spanner):
    """Section 6's depth-ranking loss: RankNet over depth-node pairs (weights 1/(l-k)); in training
    it adds its gradient to that of whatever loss the Q-values enter, exactly as a summed loss."""
    from planarena.methods.rgnn_policies.encodings import depth_rank_loss

    assert math.isclose(float(depth_rank_loss(torch.tensor([0.0, 1.0]))), math.log1p(math.exp(-1.0)), rel_tol=1e-6)
    assert depth_rank_loss(torch.tensor([0.0, 1.0, 2.0])) < depth_rank_loss(torch.tensor([2.0, 1.0, 0.0]))
    assert float(depth_rank_loss(torch.tensor([3.0]))) == 0.0
    _, prob, problem = spanner("(carrying bob s1)")
    cache = LookaheadCache("iw", with_deltas=True)
    cache.add(problem, object_types(prob))
    s0, goal = problem.get_initial_state(), problem.get_goal_condition()
    tree, deltas = cache.get(s0)
    assert tree.max_depth == 3
    torch.manual_seed(0)
    net = PolicyNetwork(problem.get_domain(), "ad", 8, 2, depth_rank_weight=0.5)
    net.train()
    net.q_values([(s0, goal, tree, deltas)])[0].sum().backward()
    with_aux = [p.grad.clone() for p in net.parameters() if p.grad is not None]
    net.zero_grad()
    net.depth_rank_weight = 0.0
    state = net.rgnn.forward([(s0, goal, (deltas, list(tree.edges), goal), [j.depth for j in tree.jumps])])
    q = state.readout("q")[0]
    aux = depth_rank_loss(net.depth_probe(state.readout("depth")[0]).view(-1))
    (q.sum() + 0.5 * aux).backward()
    manual = [p.grad.clone() for p in net.parameters() if p.grad is not None]
    assert len(with_aux) == len(manual) and all(torch.allclose(a, b, atol=1e-6) for a, b in zip(with_aux, manual))
    net.eval()  # no auxiliary term outside training
    assert torch.allclose(net.q_values([(s0, goal, tree, deltas)])[0], q.detach(), atol=1e-6)


def test_lifted_relabelling_over_jumps(spanner):
    """pymimir-rl's lifted hindsight relabelling on IW(1)-jump trajectories: every relabelled
    trajectory ends in a state satisfying its new goal (and none earlier), costs -1 per jump, and
    its jumps are candidates of the model at their states, so the DQN loss can index them."""
    import random

    import pymimir_rl as rl

    _, prob, problem = spanner("(carrying alice s1) (at bob l2)")
    cache = LookaheadCache("iw", with_deltas=True)
    cache.add(problem, object_types(prob))
    random.seed(0)
    torch.manual_seed(0)
    model = LookaheadQModel(PolicyNetwork(problem.get_domain(), "ad", 8, 1), cache)
    reward = rl.ConstantRewardFunction(-1.0)
    sampler = rl.BoltzmannTrajectorySampler(model, reward, 1.0)
    trajectories = sampler.sample([(problem.get_initial_state(), problem.get_goal_condition())] * 4, 3)
    relabelled = rl.LiftedHindsightTrajectoryRefiner([problem], 16).refine(trajectories)
    assert relabelled
    for t in relabelled:
        assert t.goal_condition.holds(t.final_state)
        assert all(not t.goal_condition.holds(tr.current_state) for tr in t)
        assert all(tr.immediate_reward == -1.0 for tr in t)
        for tr in t:
            _, jumps = model.forward([(tr.current_state, tr.goal_condition)])[0]
            assert tr.selected_action in jumps
    target = LookaheadQModel(model.network.clone(), cache)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    dqn = rl.DQNOptimization(model, opt, torch.optim.lr_scheduler.LinearLR(opt, 1.0, 0.01, 10), target, 0.999, 100.0)
    transitions = [tr for t in relabelled for tr in t]
    losses = dqn(transitions, torch.ones(len(transitions)))
    assert losses.shape == (len(transitions),) and torch.isfinite(losses).all()


def test_greedy_plans_validate_and_respect_limits(spanner):
    """The greedy policy's plan is the concatenation of its jumps' actions and validates against
    the domain (the harness's validator); a truncated plan does not. With no revisits an
    untrained policy still reaches Bob's goal in this tiny space; it is the same plan with a fresh
    lookahead cache; a choice limit of 1 stops it (the goal is 2 walks away and the AIW tree does
    not follow Bob: his first walk is not novel)."""
    dom, prob, problem = spanner("(at bob l2)")

    def cache():
        c = LookaheadCache("aiw", with_deltas=True)
        c.add(problem, object_types(prob))
        return c

    torch.manual_seed(0)
    net = PolicyNetwork(problem.get_domain(), "ad", 8, 1)
    ep = greedy_episodes(net, cache(), [problem], 50, [30.0])[0]
    assert ep.outcome == "solved" and ep.choices >= 2
    plan = [str(a) for a in ep.plan]
    assert validate_plan(dom, prob, plan).valid
    assert not validate_plan(dom, prob, plan[:-1]).valid
    assert [str(a) for a in greedy_episodes(net, cache(), [problem], 50, [30.0])[0].plan] == plan
    capped = greedy_episodes(net, cache(), [problem], 1, [30.0])[0]
    assert capped.outcome == "unsolved" and capped.reason == "choice limit 1 reached" and capped.plan is None
    late = greedy_episodes(net, cache(), [problem], 50, [0.0])[0]
    assert late.outcome == "timeout"
    # the limit is CPU time: a sleeping lookahead (wall time, no CPU) does not time an episode out
    import time as _time

    slow = cache()
    real_get = slow.get

    def sleepy_get(state, deadline=None):
        _time.sleep(0.3)
        return real_get(state, deadline)

    slow.get = sleepy_get
    ep = greedy_episodes(net, slow, [problem], 50, [0.25])[0]
    assert ep.outcome == "solved" and ep.seconds > 0.25 > ep.cpu_seconds


def test_training_is_seeded_and_selects_by_validation(spanner):
    """Two runs with the same seed give the same TD errors and weights; with two scoring points the
    validation split is rolled out and the selected score is (coverage, -plan length, -TD error)."""
    _, prob, problem = spanner("(carrying bob s1)")
    _, vprob, val = spanner("(carrying alice s1)", "v.pddl")
    cfg = TrainConfig(episodes=2, train_steps=2, batch=4, rollouts=2, max_jumps=4, eval_every=1, eval_choices=5,
                      lr_episodes=2, temperature_episodes=2)
    runs = []
    for _ in range(2):
        cache = LookaheadCache("iw", with_deltas=True)
        cache.add(problem, object_types(prob))
        cache.add(val, object_types(vprob))
        torch.manual_seed(3)
        net = PolicyNetwork(problem.get_domain(), "ad", 8, 1)
        runs.append(train_policy(net, cache, [problem], [val], cfg, 3, flat=False))
    a, b = runs
    assert a.td_errors == b.td_errors and a.episodes_run == 2
    assert all(torch.equal(a.state[k], b.state[k]) for k in a.state)
    assert [v[0] for v in a.validation] == [1, 2] and len(a.best) == 3 and 0.0 <= a.best[0] <= 1.0


def test_training_ignores_other_threads_drawing_from_pythons_random(spanner):
    """A Dask worker's communication thread draws from Python's module-level ``random`` while a
    unit trains; pymimir-rl's samplers get a private generator (``library_random``), so a policy
    trained next to a thread that keeps drawing is the one trained alone."""
    import random
    import threading

    import pymimir_rl.problem_sampling as ps

    from planarena.methods.rgnn_policies.train import library_random

    made = [spanner(goal, f"p{i}.pddl") for i, goal in enumerate(
        ("(carrying bob s1)", "(carrying alice s1)", "(at bob l2) (at alice l0)", "(at alice l2) (at bob l1)"))]
    cfg = TrainConfig(episodes=3, train_steps=2, batch=4, rollouts=4, max_jumps=4, eval_every=3,
                      lr_episodes=3, temperature_episodes=3)

    def run():
        cache = LookaheadCache("iw", with_deltas=True)
        for _, prob, problem in made:
            cache.add(problem, object_types(prob))
        torch.manual_seed(3)
        return train_policy(PolicyNetwork(made[0][2].get_domain(), "ad", 8, 1), cache, [m[2] for m in made], [],
                            cfg, 3, flat=False)

    alone = run()
    stop = threading.Event()
    draws = [0]  # a count, not the draws: the thread runs for the whole training

    def draw():
        # Draws in small bursts and sleeps between them: a tight loop would hold the GIL for most
        # of the training (it made this test take 87 s) without changing what the test shows.
        while not stop.wait(0.0002):
            for _ in range(16):
                random.random()
            draws[0] += 16

    noise = threading.Thread(target=draw, daemon=True)
    noise.start()
    try:
        busy = run()
    finally:
        stop.set()
        noise.join()
    assert draws[0] > 0, "the noise thread never drew"
    assert alone.td_errors == busy.td_errors
    assert all(torch.equal(alone.state[k], busy.state[k]) for k in alone.state)
    with library_random(5) as rng:
        assert ps.random is rng
    assert ps.random is random  # restored


def test_schedules_and_config_errors():
    assert linear(1.0, 0.1, 0, 1000) == 1.0 and math.isclose(linear(1.0, 0.1, 500, 1000), 0.55)
    assert linear(1.0, 0.1, 5000, 1000) == 0.1
    from planarena.methods.rgnn_policies.train import span_episodes

    # a fraction of the run scales with it; a count does not (the paper profile's 300 of 1,000)
    assert span_episodes(0.3, 1000) == 300 and span_episodes(0.3, 20) == 6 and span_episodes(0.01, 20) == 1
    assert span_episodes(300, 1000) == 300 and span_episodes(3, 20) == 3
    with pytest.raises(ValueError, match="unknown key"):
        TrainConfig.from_params({"episodez": 3})


def test_method_rejects_aa_with_a_width_lookahead(tmp_path):
    from planarena.config import Layout
    from planarena.methods.rgnn_policies.method import RGNNPolicy

    params = {"evaluation": {"splits": ["validation"], "seeds": [13]}, "rgnn_policies": {}}
    with pytest.raises(ValueError, match="needs lookahead: flat"):
        RGNNPolicy("bad", {"lookahead": "iw", "encoding": "aa"}, params, Layout(root=tmp_path))
    with pytest.raises(ValueError, match="lookahead="):
        RGNNPolicy("bad", {"lookahead": "iw2", "encoding": "ad"}, params, Layout(root=tmp_path))


def test_checkpoint_selection_never_uses_an_evaluated_held_out_split(tmp_path):
    """The paper selects the model on validation coverage (Aichmüller et al., Section 7, Training,
    line 216 of its text; docs/papers/rgnn-policies.md) and the report counts every split but
    ``train`` as held out (``is_held_out``). So the selection problems are the validation split only
    when the block does not evaluate it, the training problems when it does (generated / SATr
    suites), and the largest training problems, removed from training, on a suite without one (IPC
    2023, Table 8); with one checkpoint nothing is selected (``scoring_points``)."""
    from types import SimpleNamespace

    from planarena.config import Layout, is_held_out
    from planarena.methods.rgnn_policies.method import RGNNPolicy
    from planarena.methods.rgnn_policies.train import scoring_points

    def entry(split: str, i: int):
        return SimpleNamespace(domain="d", split=split, problem=f"{split}-{i}", objects=i, size=i)

    class Suite:
        def __init__(self, splits: dict):
            self.splits = splits

        def select(self, domain: str, split: str):
            return list(self.splits.get(split, []))

    params = {"evaluation": {"splits": ["validation"], "seeds": [13]}, "rgnn_policies": {"validation_from_train": 3}}

    def entries(splits: list, suite: dict):
        m = RGNNPolicy("aiw_ad", {"lookahead": "aiw", "encoding": "ad", "splits": splits}, params, Layout(root=tmp_path))
        m._ps = Suite(suite)
        train, selection, how = m._entries("d")
        assert not any(is_held_out(e.split) and e.split in splits for e in selection), how
        return train, selection, how

    generated = {"train": [entry("train", i) for i in range(4)], "validation": [entry("validation", 9)]}
    train, selection, how = entries(["validation", "interpolation", "extrapolation"], generated)
    assert how == "training problems" and selection == train and len(train) == 4
    train, selection, how = entries(["interpolation", "extrapolation"], generated)
    assert how == "validation split" and [e.problem for e in selection] == ["validation-9"] and len(train) == 4
    ipc = {"train": [entry("train", i) for i in range(10)], "test-easy": [entry("test-easy", 20)]}
    train, selection, how = entries(["test-easy"], ipc)
    assert how == "largest training problems" and [e.objects for e in selection] == [7, 8, 9]
    assert [e.objects for e in train] == list(range(7))
    assert scoring_points(TrainConfig(episodes=3, eval_every=3)) == 1          # the default profile: no selection
    assert scoring_points(TrainConfig(episodes=1000, eval_every=50)) == 20     # profiles.paper
    assert scoring_points(TrainConfig(episodes=10, eval_every=4)) == 3


def test_paper_profile_with_the_ipc2023_suite_is_section_7():
    """``-S profile=paper -S suite=ipc2023`` is the paper's setup: the Learning Track's test splits,
    every test problem, 15 / 60 min per instance for flat / IW policies and 1,000 choices ("We
    enforce a limit of 1,000 choices and a timeout of 15 and 60 minutes per instance for flat- and
    IW-policies, respectively", Section 7, Testing), Section 7's training settings."""
    import yaml

    from planarena.config import resolve_profile

    raw = yaml.safe_load((Path(__file__).resolve().parents[1] / "params.yaml").read_text())
    params = resolve_profile({**raw, "profile": "paper", "suite": "ipc2023"})
    assert params["suites"]["ipc2023"]["max_per_split"] is None
    section = params["rgnn_policies"]
    assert {"test-easy", "test-medium", "test-hard"} <= set(section["splits"])
    assert section["validation_from_train"] == 30            # Table 8: 30 validation per IPC domain
    assert section["max_choices"] == {"width": 1000, "flat": 1000}
    rows = {m: c for m, c in params["methods"].items() if c.get("method") == "rgnn_policy"}
    assert rows and all(c["time_limit"] == (900 if c["lookahead"] == "flat" else 3600) for c in rows.values())
    cfg = TrainConfig.from_params(section["train"])
    assert (cfg.lr, cfg.min_lr, cfg.lr_episodes, cfg.temperature, cfg.min_temperature, cfg.temperature_episodes,
            cfg.gamma, cfg.train_steps, cfg.batch, cfg.buffer_iw, cfg.buffer_flat, cfg.rollouts, cfg.max_jumps,
            cfg.max_steps, cfg.max_seconds) == (1e-3, 1e-5, 300, 1.0, 0.1, 1000, 0.999, 32, 32, 100, 1000, 4, 20,
                                                200, 12 * 3600)
    assert section["model"]["embedding_size"] == 32


def test_rows_identical_by_construction_share_one_trained_model(tmp_path):
    """On an untyped domain BAIW's features are AIW's, and a C-AIW capacity that cannot bind keeps
    every novel state, so ``baiw_ad`` and ``caiw_ad`` train exactly what ``aiw_ad`` trains: the
    train stage trains it once and the other rows copy it (``from_cache``), each charged its
    training time. A typed domain or a capacity that can bind trains its own."""
    import json

    import yaml
    from conftest import ROOT, only_domains

    from planarena.config import Layout, resolve_profile
    from planarena.datasets.suites import run_stage as generate
    from planarena.runner.stages import build_method, run_train_stage

    doc = yaml.safe_load((ROOT / "params.yaml").read_text())
    doc["profile"] = "smoke"
    params = only_domains(resolve_profile(doc), "gripper")
    params["evaluation"]["seeds"] = [13]
    layout = Layout(root=tmp_path / "data")
    generate(params, layout)
    infos = {name: run_train_stage(params, layout, name) for name in ("aiw_ad", "baiw_ad", "caiw_ad")}
    facts = {n: json.loads((layout.models / n / "facts.json").read_text())["domains"]["gripper"]["seed13"]
             for n in infos}
    assert facts["aiw_ad"]["shared_with"] is None
    assert facts["baiw_ad"]["shared_with"] == facts["caiw_ad"]["shared_with"] == "aiw"
    assert {k: v for k, v in facts["baiw_ad"].items() if k != "shared_with"} == \
        {k: v for k, v in facts["aiw_ad"].items() if k != "shared_with"}
    assert len(list((layout.cache / "rgnn_policies").iterdir())) == 1   # trained once
    weights = [(layout.models / n / "gripper" / "seed13" / "model.pt").read_bytes() for n in infos]
    assert weights[0] == weights[1] == weights[2]
    assert len({round(i["unit_times_s"]["gripper/seed13"], 6) for i in infos.values()}) == 1

    # the premise, on the typed Spanner fixture: BAIW collapses what AIW keeps apart, and a capacity
    # of 1 can bind, so neither reduces to AIW there
    dom = tmp_path / "spanner.pddl"
    dom.write_text(DOMAIN)
    prob = tmp_path / "p.pddl"
    prob.write_text(_problem_text("(carrying alice s1)"))
    pair = [(load_problem(str(dom), str(prob)), object_types(prob, dom))]
    params["rgnn_policies"]["capacity"] = 1
    assert build_method("baiw_ad", params, layout).equivalent_lookahead(pair) == "baiw"
    assert build_method("caiw_ad", params, layout).equivalent_lookahead(pair) == "caiw"
    untyped = [(p, dict.fromkeys(types)) for p, types in pair]
    assert build_method("baiw_ad", params, layout).equivalent_lookahead(untyped) == "aiw"
