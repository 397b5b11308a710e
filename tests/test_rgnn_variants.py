"""Appendix C's ablations of AIW-AD (docs/papers/rgnn-policies.md): Table 5's "No Tree-Atoms"
(``tree_atoms: false``) and "Reduced Goals" (``goals: reduced``) switches and Table 6's Internal
(``encoding: int``) and Internal-Delta (``encoding: id``) encodings, their params rows, and the check
that the existing rows encode exactly what they did before.

The tiny typed Spanner-like domain of ``tests/test_rgnn_policies.py``: men walk along one-way links
and pick up spanners. Object node ids of one graph: bob 0, alice 1, s1 2, l0 3, l1 4, l2 5 (the
problem's objects in order), then the candidate nodes ``o_s'`` (AA, AD), then the depth nodes (AD).
"""

from __future__ import annotations

import copy
import hashlib
import json
from pathlib import Path

import pytest
import torch
import yaml

from conftest import ROOT, generated_smoke_suite, smoke_profile_params
from planarena.config import Layout
from planarena.core.pddl import load_problem
from planarena.core.validation import validate_plan
from planarena.methods.rgnn_policies.encodings import PolicyNetwork
from planarena.methods.rgnn_policies.lookahead import AtomFeatures, lookahead, object_types
from planarena.methods.rgnn_policies.method import RGNNPolicy
from planarena.methods.rgnn_policies.policy import LookaheadCache, greedy_episodes
from planarena.methods.rgnn_policies.train import TrainConfig, train_policy
from test_rgnn_policies import DOMAIN, _problem_text

#: the new rows (params.yaml ``methods:``) and what each sets beside ``lookahead: aiw``
VARIANTS = {"aiw_ad_no_tree_atoms": {"encoding": "ad", "tree_atoms": False},
            "aiw_ad_reduced_goals": {"encoding": "ad", "goals": "reduced"},
            "aiw_int": {"encoding": "int"},
            "aiw_id": {"encoding": "id"}}

WALK_ALICE, WALK_BOB = "(walk alice l1 l2)", "(walk bob l0 l1)"
PICK_ALICE = "(pickup alice s1 l2)"


@pytest.fixture
def spanner(tmp_path: Path):
    """``make(goal, text=None, name="p.pddl") -> (problem file, pymimir problem)`` on the Spanner
    domain (``text``: a whole problem instead of the two-men one of ``test_rgnn_policies``)."""
    dom = tmp_path / "domain.pddl"
    dom.write_text(DOMAIN)

    def make(goal: str, text: str | None = None, name: str = "p.pddl"):
        prob = tmp_path / name
        prob.write_text(text or _problem_text(goal))
        return prob, load_problem(str(dom), str(prob))

    return make


def _item(prob: Path, problem, kind: str, goals: str = "full"):
    cache = LookaheadCache(kind, with_deltas=True, goals=goals)
    cache.add(problem, object_types(prob))
    s0 = problem.get_initial_state()
    tree, deltas = cache.get(s0)
    return s0, problem.get_goal_condition(), tree, deltas


def _paths(tree) -> list[tuple[str, ...]]:
    return [tuple(str(a) for a in j.actions) for j in tree.jumps]


def _atoms(encoding, problem, net: PolicyNetwork) -> list[dict[str, set[tuple[str, ...]]]]:
    """Per graph of ``net``'s ``EncodedTensors``: relation -> set of atoms, each a tuple of node
    names (object names, ``s'<k>`` for the k-th candidate node, ``d<k>`` for the k-th auxiliary
    node)."""
    names = [str(o.get_name()) for o in list(problem.get_objects()) + list(problem.get_domain().get_constants())]
    owner, label, start = {}, {}, 0
    for g, (n, o, a) in enumerate(zip(encoding.node_sizes.tolist(), encoding.object_sizes.tolist(),
                                      encoding.action_sizes.tolist())):
        for local in range(n):
            owner[start + local] = g
            label[start + local] = (names[local] if local < o else f"s'{local - o}" if local < o + a
                                    else f"d{local - o - a}")
        start += n
    arity = dict(net.relations())
    out: list[dict] = [{} for _ in encoding.node_sizes.tolist()]
    for rel, ids in encoding.flattened_relations.items():
        ids, k = ids.tolist(), arity[rel]
        for i in range(0, len(ids), k):
            atom = ids[i:i + k]
            out[owner[atom[0]]].setdefault(rel, set()).add(tuple(label[x] for x in atom))
    return out


# -- the existing rows are unchanged ------------------------------------------------------------

#: What the encodings produced before the variants were built (captured from the code of commit
#: 67b9930 on this problem: goal carrying(alice, s1) and at(bob, l2); networks of embedding 8, 2
#: layers, torch.manual_seed(0)): sha256 of the encoded graph (relations and sizes, canonical JSON),
#: the Q-values (5 decimals) and the parameter count.
GOLDEN = {
    ("aa", "flat"): ("c0e34148f84228dc", [0.45696, 0.45629], 12137),
    ("ext", "aiw"): ("11c0dbd1a375df69", [0.08082, 0.08116, 0.07864], 7969),
    ("ad", "aiw"): ("d3ed9b0dc84d8eb9", [-0.03587, -0.03218, -0.03131], 34833),
    ("ad", "iw"): ("0705bdb86b26104a", [-0.03591, -0.036, -0.03142, -0.03593, -0.03594], 34833),
}
#: the AD graph of the IW(1) tree in full (the golden hash above, spelled out)
GOLDEN_AD_IW = {
    "at_neg": [6, 1, 4, 7, 0, 3, 8, 1, 4, 8, 2, 5, 9, 0, 3, 10, 0, 3, 10, 2, 5],
    "at_pos": [6, 1, 5, 7, 0, 4, 8, 1, 5, 9, 0, 5, 10, 0, 5], "at_pos_goal": [9, 0, 5, 10, 0, 5],
    "carrying_pos": [8, 1, 2, 10, 0, 2], "carrying_pos_goal": [8, 1, 2], "effect_relation": [6, 8, 7, 9, 9, 10],
    "lookahead_depth_order": [11, 12, 11, 13, 12, 13],
    "lookahead_state_depth": [6, 11, 7, 11, 8, 12, 9, 12, 10, 13],
    "relation_at": [0, 3, 1, 4, 2, 5], "relation_at_goal_false": [0, 5], "relation_carrying_goal_false": [1, 2],
    "relation_link": [3, 4, 4, 5], "relation_locatable": [0, 1, 2], "relation_location": [3, 4, 5],
    "relation_man": [0, 1], "relation_object": [0, 1, 2, 3, 4, 5], "relation_spanner": [2]}
GOAL = "(carrying alice s1) (at bob l2)"


def _fingerprint(encoding) -> tuple[dict, str]:
    relations = {k: v.tolist() for k, v in sorted(encoding.flattened_relations.items())}
    sizes = {n: getattr(encoding, n).tolist() for n in ("node_sizes", "object_sizes", "action_sizes",
                                                        "auxiliary_sizes")}
    blob = json.dumps({"relations": relations, "sizes": sizes}, sort_keys=True, separators=(",", ":"))
    return relations, hashlib.sha256(blob.encode()).hexdigest()[:16]


@pytest.mark.parametrize("enc,kind", list(GOLDEN))
def test_existing_encodings_are_byte_for_byte_unchanged(spanner, enc, kind):
    """The AA, Ext and AD networks of the existing rows encode the same graph, hold the same
    parameters (initialised in the same order) and give the same Q-values as before the variants
    (the Q-values also depend on torch's random stream: a torch upgrade that changes it changes
    them, not the encoding; the graph digest does not depend on torch)."""
    prob, problem = spanner(GOAL)
    item = _item(prob, problem, kind)
    torch.manual_seed(0)
    net = PolicyNetwork(problem.get_domain(), enc, 8, 2)
    relations, digest = _fingerprint(net.encoded([item]))
    with torch.no_grad():
        q = net.q_values([item])[0]
    want_digest, want_q, want_params = GOLDEN[enc, kind]
    if (enc, kind) == ("ad", "iw"):
        assert relations == GOLDEN_AD_IW
    assert digest == want_digest
    assert q.tolist() == pytest.approx(want_q, abs=2e-5)
    assert sum(p.numel() for p in net.parameters()) == want_params


def test_existing_rows_have_the_full_switches(tmp_path):
    """Every rgnn row of params.yaml but the new ones has the paper's full AIW-AD switches, so its
    network, content key and records carry nothing new (``switches() == {}``)."""
    params = smoke_profile_params()
    rows = {n: c for n, c in params["methods"].items() if c.get("method") == "rgnn_policy" and not c.get("twin_of")}
    assert set(VARIANTS) <= set(rows)
    for name, config in rows.items():
        m = RGNNPolicy(name, config, params, Layout(root=tmp_path))
        assert m.switches() == ({} if name not in VARIANTS else
                                {k: v for k, v in VARIANTS[name].items() if k != "encoding"}), name
        assert (m.tree_atoms, m.goals) == ((False, "full") if name == "aiw_ad_no_tree_atoms" else
                                           (True, "reduced") if name == "aiw_ad_reduced_goals" else (True, "full"))


# -- No Tree-Atoms (Table 5) --------------------------------------------------------------------

def test_no_tree_atoms_removes_exactly_the_tree_atoms(spanner):
    """Appendix C, "No Tree-Atoms": the relation set R^T \\ R^T_E. On the IW(1) tree (edges
    (0,2), (1,3), (3,4)) the graph is AD's but for the three P_E(o_s', o_s'') atoms: same nodes,
    same deltas and depth atoms; the network has no message function for P_E."""
    prob, problem = spanner(GOAL)
    item = _item(prob, problem, "iw")
    assert item[2].edges == [(0, 2), (1, 3), (3, 4)]
    full = PolicyNetwork(problem.get_domain(), "ad", 8, 2)
    cut = PolicyNetwork(problem.get_domain(), "ad", 8, 2, tree_atoms=False)
    a, b = full.encoded([item]), cut.encoded([item])
    assert _atoms(a, problem, full)[0]["effect_relation"] == {("s'0", "s'2"), ("s'1", "s'3"), ("s'3", "s'4")}
    assert "effect_relation" not in b.flattened_relations
    assert {k: v.tolist() for k, v in b.flattened_relations.items()} == \
        {k: v for k, v in GOLDEN_AD_IW.items() if k != "effect_relation"}
    assert b.node_sizes.tolist() == a.node_sizes.tolist() == [14]
    assert set(full.relations()) - set(cut.relations()) == {("effect_relation", 2)}
    assert not set(cut.relations()) - set(full.relations())
    assert cut.clone().tree_atoms is False
    with torch.no_grad():
        assert cut.q_values([item])[0].shape == (5,)
    with pytest.raises(ValueError, match="only the AD encoding has tree atoms"):
        PolicyNetwork(problem.get_domain(), "ext", 8, 2, tree_atoms=False)


# -- Reduced Goals (Table 5) --------------------------------------------------------------------

TWO_SPANNERS = """(define (problem two-spanners)
  (:domain spanners)
  (:objects bob alice - man s1 s2 - spanner l0 l1 l2 - location)
  (:init (at bob l0) (at alice l1) (at s1 l2) (at s2 l1) (link l0 l1) (link l1 l2))
  (:goal (and (at bob l1))))
"""


def test_reduced_goals_abstracts_goal_atoms_in_the_novelty_test(spanner):
    """Appendix C, "Reduced Goals": AIW "also applies the abstracted novelty checks on atoms that
    match an atom in the goal". Goal at(bob, l1), spanner s2 at l1 beside Alice. With the goal atom
    kept whole (Section 3), Bob's walk to l1 is novel through at(bob, l1) itself and is expanded:
    he picks s2 up at depth 2, novel through (carrying, bob, spanner). Reduced, at(bob, l1) is
    tested through (at, bob, location) (Bob at l0) and (at, l1, man) (Alice at l1), both seen: the
    walk stays a candidate (a primitive successor of the root) but is not expanded, and his pickup
    leaves the tree; 14 -> 12 novelty features. BAIW and C-AIW change the same way; IW(1) abstracts
    nothing, so it does not change. The AD encoding loses that candidate's node."""
    prob, problem = spanner("", TWO_SPANNERS)
    types = object_types(prob)
    at_bob_l1 = problem.new_ground_atom(problem.get_domain().get_predicate("at"),
                                        [problem.get_object("bob"), problem.get_object("l1")])
    index = int(at_bob_l1.get_index())
    assert AtomFeatures(problem, "aiw", types)(index) == (index,)
    assert set(AtomFeatures(problem, "aiw", types, "reduced")(index)) == {("at", 0, "bob", ("location",)),
                                                                        ("at", 1, "l1", ("man",))}
    s0 = problem.get_initial_state()
    common = [("(pickup alice s2 l1)",), (WALK_ALICE,), (WALK_BOB,), (WALK_ALICE, PICK_ALICE)]
    bob_picks = (WALK_BOB, "(pickup bob s2 l1)")
    full = lookahead(problem, s0, "aiw", AtomFeatures(problem, "aiw", types))
    reduced = lookahead(problem, s0, "aiw", AtomFeatures(problem, "aiw", types, "reduced"))
    assert _paths(full) == common + [bob_picks] and full.edges == [(1, 3), (2, 4)] and full.novelty_features == 14
    assert _paths(reduced) == common and reduced.edges == [(1, 3)] and reduced.novelty_features == 12
    for goals in ("full", "reduced"):   # the features lookahead builds itself (no types given) follow ``goals``
        inside = lookahead(problem, s0, "aiw", goals=goals)
        assert _paths(inside) == _paths(lookahead(problem, s0, "aiw", AtomFeatures(problem, "aiw", None, goals)))
    for kind in ("baiw", "caiw"):
        feats = "baiw" if kind == "baiw" else "aiw"
        a = lookahead(problem, s0, kind, AtomFeatures(problem, feats, types))
        b = lookahead(problem, s0, kind, AtomFeatures(problem, feats, types, "reduced"))
        assert bob_picks in _paths(a) and bob_picks not in _paths(b), kind
    iw = [_paths(lookahead(problem, s0, "iw", AtomFeatures(problem, "iw", types, g))) for g in ("full", "reduced")]
    assert iw[0] == iw[1]
    with pytest.raises(ValueError, match="goals 'some'"):
        AtomFeatures(problem, "aiw", types, "some")

    # the encoding: the same relation set (the full AD R^T), one candidate node fewer
    net = PolicyNetwork(problem.get_domain(), "ad", 8, 2)
    enc_full = _atoms(net.encoded([_item(prob, problem, "aiw")]), problem, net)[0]
    enc_reduced = _atoms(net.encoded([_item(prob, problem, "aiw", "reduced")]), problem, net)[0]
    assert ("s'4", "bob", "s2") in enc_full["carrying_pos"]
    assert {a[1:] for a in enc_reduced["carrying_pos"]} == {("alice", "s2"), ("alice", "s1")}
    assert enc_full["effect_relation"] == {("s'1", "s'3"), ("s'2", "s'4")}
    assert enc_reduced["effect_relation"] == {("s'1", "s'3")}


# -- Internal and Internal-Delta (Table 6) -------------------------------------------------------

ROOT_AT = {("bob", "l0"), ("alice", "l1"), ("s1", "l2")}
#: the AIW(1) tree's successors under goal carrying(alice, s1), at(bob, l2): their at / carrying atoms
SUCC_AT = [{("bob", "l0"), ("alice", "l2"), ("s1", "l2")}, {("bob", "l1"), ("alice", "l1"), ("s1", "l2")},
           {("bob", "l0"), ("alice", "l2")}]
SUCC_CARRYING = [set(), set(), {("alice", "s1")}]


def test_internal_encodes_each_transition_in_one_graph_with_a_primed_successor(spanner):
    """Section 5 / Appendix C, "internal": each transition s -> s' in its own graph over the shared
    object nodes, R^s (goal atoms true / false in s) plus R^s' under a duplicated predicate set P'
    (goal atoms true / false in s'); no candidate or depth node. Q(s, s') per graph, all graphs in
    one R-GNN call."""
    prob, problem = spanner(GOAL)
    item = _item(prob, problem, "aiw")
    assert _paths(item[2]) == [(WALK_ALICE,), (WALK_BOB,), (WALK_ALICE, PICK_ALICE)]
    torch.manual_seed(0)
    net = PolicyNetwork(problem.get_domain(), "int", 8, 2)
    enc = net.encoded([item])
    assert enc.node_sizes.tolist() == enc.object_sizes.tolist() == [6, 6, 6]
    assert enc.action_sizes.tolist() == enc.auxiliary_sizes.tolist() == [0, 0, 0]
    graphs = _atoms(enc, problem, net)
    for g, atoms in enumerate(graphs):
        assert atoms["relation_at"] == ROOT_AT and "relation_carrying" not in atoms        # R^s
        assert atoms["relation_at'"] == SUCC_AT[g]                                          # R^s'_P'
        assert atoms.get("relation_carrying'", set()) == SUCC_CARRYING[g]
        assert atoms["relation_link'"] == atoms["relation_link"] == {("l0", "l1"), ("l1", "l2")}
        assert atoms["relation_man'"] == atoms["relation_man"] == {("bob",), ("alice",)}
        assert atoms["relation_carrying_goal_false"] == {("alice", "s1")}                  # false in s
        assert atoms["relation_at_goal_false"] == {("bob", "l2")}
        assert atoms["relation_at'_goal_false"] == {("bob", "l2")}
        # the goal atom carrying(alice, s1) is true in the third successor only
        assert atoms.get("relation_carrying'_goal_true", set()) == SUCC_CARRYING[g]
        assert atoms.get("relation_carrying'_goal_false", set()) == {("alice", "s1")} - SUCC_CARRYING[g]
        assert not any(r.endswith(("_pos", "_neg")) or r.startswith(("delta_", "effect", "lookahead"))
                       for r in atoms)
    calls = []
    inner = net.rgnn.forward
    net.rgnn.forward = lambda batch: calls.append(len(batch)) or inner(batch)
    with torch.no_grad():
        q = net.q_values([item, item])
    assert calls == [6] and [tuple(x.shape) for x in q] == [(3,), (3,)] and torch.allclose(q[0], q[1])
    assert not torch.isclose(q[0][0], q[0][2])   # the successors are told apart


def test_internal_delta_encodes_unanchored_deltas(spanner):
    """Section 5 / Appendix C, "internal-delta": each transition in its own graph, R^s plus the
    delta atoms of s' without a state node: P+(o) for s' \\ s, P-(o) for s \\ s', P+_G / P-_G for
    goal atoms among them, each of P's own arity; no primed relations, no candidate node."""
    prob, problem = spanner(GOAL)
    item = _item(prob, problem, "aiw")
    net = PolicyNetwork(problem.get_domain(), "id", 8, 2)
    enc = net.encoded([item])
    assert enc.node_sizes.tolist() == [6, 6, 6] and enc.action_sizes.tolist() == [0, 0, 0]
    graphs = _atoms(enc, problem, net)
    want = [{"delta_at+": {("alice", "l2")}, "delta_at-": {("alice", "l1")}},
            {"delta_at+": {("bob", "l1")}, "delta_at-": {("bob", "l0")}},
            {"delta_at+": {("alice", "l2")}, "delta_at-": {("alice", "l1"), ("s1", "l2")},
             "delta_carrying+": {("alice", "s1")}, "delta_carrying+_goal": {("alice", "s1")}}]
    for g, atoms in enumerate(graphs):
        assert {r: a for r, a in atoms.items() if r.startswith("delta_")} == want[g]
        assert atoms["relation_at"] == ROOT_AT
        assert not any(r.endswith("'") or "'_" in r or r.startswith(("effect", "lookahead")) for r in atoms)
    # a goal atom deleted: P-_G (the root of the second problem holds at(bob, l1), its goal)
    prob2, problem2 = spanner("", TWO_SPANNERS.replace("(at bob l0)", "(at bob l1)").replace("(link l0 l1) ", ""),
                              "q.pddl")
    s0 = problem2.get_initial_state()
    cache = LookaheadCache("flat", with_deltas=True)
    cache.add(problem2, object_types(prob2))
    tree, deltas = cache.get(s0)
    graphs = _atoms(net.encoded([(s0, problem2.get_goal_condition(), tree, deltas)]), problem2, net)
    walk = _paths(tree).index(("(walk bob l1 l2)",))
    assert graphs[walk]["delta_at-_goal"] == {("bob", "l1")} and graphs[walk]["delta_at+"] == {("bob", "l2")}
    arity = dict(net.relations())   # P's own arity (AD's anchored deltas: + 1)
    assert (arity["delta_at+"], arity["delta_carrying-_goal"], arity["delta_man+"]) == (2, 2, 1)
    assert dict(PolicyNetwork(problem.get_domain(), "ad", 8, 2).relations())["at_pos"] == 3
    with pytest.raises(ValueError, match="needs each tree's deltas"):
        net.q_values([(item[0], item[1], item[2], None)])


# -- params rows, validation, smoke runs ---------------------------------------------------------

def test_variant_rows_are_off_with_twins_and_turn_on_one_by_one(tmp_path):
    """Each variant is a row of params.yaml's ``methods:``, off in the default profile like
    ``baiw_ad``, with its untrained twin and uniform floor declared as the other rows' are, and
    ``-S methods.<row>.run=true`` turns it (and its twins) on alone."""
    from planarena.config import resolve_profile
    from planarena.methods import running, runs

    raw = yaml.safe_load((ROOT / "params.yaml").read_text())
    default = resolve_profile(raw)
    on = set(running(default)["methods"])
    for row, keys in VARIANTS.items():
        block = raw["methods"][row]
        assert block == {"method": "rgnn_policy", "lookahead": "aiw", **keys, "run": False}
        assert raw["methods"][f"{row}_untrained"] == {"twin_of": row}
        assert raw["methods"][f"{row}_uniform"] == {"twin_of": row, "untrained": "uniform"}
        assert row not in on and f"{row}_untrained" not in on and f"{row}_uniform" not in on
        one = copy.deepcopy(raw)
        one["methods"][row]["run"] = True
        params = resolve_profile(one)
        assert runs(row, params)
        assert set(running(params)["methods"]) == on | {row, f"{row}_untrained", f"{row}_uniform"}
        for name, mode in ((f"{row}_untrained", True), (f"{row}_uniform", "uniform")):
            twin = RGNNPolicy(name, {k: v for k, v in params["methods"][name].items() if k != "run"}, params,
                              Layout(root=tmp_path))
            assert twin.untrained == mode and twin.switches() == {k: v for k, v in keys.items() if k != "encoding"}
            # the uniform floor chooses among the row's own lookahead's candidates (Reduced Goals: its tree)
            assert twin._cache().goals == keys.get("goals", "full")
    names = list(raw["methods"])
    assert names.index("aiw_ad_no_tree_atoms") == names.index("flat_ad") + 1   # after the existing rgnn rows
    assert names.index("aiw_ad_no_tree_atoms_untrained") == names.index("flat_ad_uniform") + 1


@pytest.mark.parametrize("config,key,message", [
    ({"encoding": "ad", "tree_atoms": "no"}, "tree_atoms", "tree_atoms='no'; one of true, false"),
    ({"encoding": "ad", "tree_atoms": 0}, "tree_atoms", "tree_atoms=0; one of true, false"),
    ({"encoding": "ext", "tree_atoms": False}, "tree_atoms", "needs encoding: ad"),
    ({"encoding": "ad", "goals": "partial"}, "goals", "goals='partial'; one of full, reduced"),
    ({"encoding": "ad", "goals": True}, "goals", "goals=True; one of full, reduced"),
    ({"encoding": "ad", "lookahead": "iw", "goals": "reduced"}, "goals", "needs an abstracting lookahead"),
    ({"encoding": "internal"}, "encoding", "encoding='internal'; one of aa, ext, ad, int, id"),
])
def test_bad_values_are_one_clear_line(tmp_path, config, key, message):
    params = {"evaluation": {"splits": ["validation"], "seeds": [13]}, "rgnn_policies": {}}
    with pytest.raises(ValueError) as err:
        RGNNPolicy("bad", {"lookahead": "aiw", **config}, params, Layout(root=tmp_path))
    text = str(err.value)
    assert "\n" not in text and f"methods.bad.{key}" in text and message in text, text


def test_report_traits_name_the_variants_and_their_ablation_pairs():
    """The report variant names Table 5's / 6's column; ``aiw_ad`` pairs with each variant on one
    axis (encoding: Table 6; tree atoms, goals: Table 5); the variants declare no pair themselves."""
    params = smoke_profile_params()
    traits = {n: RGNNPolicy.report_traits(params["methods"][n], params) for n in ("aiw_ad", *VARIANTS)}
    assert {n: t.variant for n, t in traits.items()} == {
        "aiw_ad": "AIW-AD", "aiw_ad_no_tree_atoms": "AIW-AD No Tree-Atoms",
        "aiw_ad_reduced_goals": "AIW-AD Reduced Goals", "aiw_int": "AIW-Int", "aiw_id": "AIW-ID"}
    pairs = dict(traits["aiw_ad"].ablations)
    assert pairs["aiw_int"] == "encoding: AD vs Int" and pairs["aiw_id"] == "encoding: AD vs ID"
    assert pairs["aiw_ad_no_tree_atoms"] == "tree atoms: P_E vs No Tree-Atoms"
    assert pairs["aiw_ad_reduced_goals"] == "goals: goal atoms kept whole vs Reduced Goals"
    assert {"aiw_ext", "iw_ad", "baiw_ad"} <= set(pairs)   # the existing pairs stay
    assert all(traits[n].ablations == () for n in VARIANTS)


@pytest.mark.parametrize("row", list(VARIANTS))
def test_variant_row_trains_and_plans(spanner, tmp_path, row):
    """A short DQN run and greedy planning through each row's own network and lookahead cache
    (``RGNNPolicy._network`` / ``_cache`` from its params.yaml block, smoke profile): finite TD
    errors, and the greedy plan for at(bob, l2) validates against the domain."""
    params = smoke_profile_params()
    m = RGNNPolicy(row, params["methods"][row], params, Layout(root=tmp_path))
    prob, problem = spanner("(at bob l2)")
    cache = m._cache()
    cache.add(problem, object_types(prob))
    torch.manual_seed(0)
    net = m._network(problem.get_domain())
    assert net.encoding == VARIANTS[row]["encoding"] and net.tree_atoms == VARIANTS[row].get("tree_atoms", True)
    assert cache.goals == VARIANTS[row].get("goals", "full") and cache.with_deltas == (net.encoding != "int")
    cfg = TrainConfig(episodes=2, train_steps=2, batch=4, rollouts=2, max_jumps=4, eval_every=2,
                      lr_episodes=2, temperature_episodes=2)
    res = train_policy(net, cache, [problem], [], cfg, 0, flat=False)
    assert res.episodes_run == 2 and res.status == "trained" and res.state is not None
    assert all(t == t for t in res.td_errors)   # no NaN
    net.load_state_dict(res.state)
    ep = greedy_episodes(net, cache, [problem], 30, [30.0])[0]
    assert ep.outcome == "solved", ep.reason
    assert validate_plan(prob.parent / "domain.pddl", prob, [str(a) for a in ep.plan]).valid


@pytest.fixture(scope="module")
def gripper(tmp_path_factory):
    """The smoke profile's generated Gripper suite (one seed, in-process)."""
    return generated_smoke_suite(tmp_path_factory.mktemp("variants"), "gripper")


def test_variant_rows_train_models_of_their_own(gripper):
    """A trained unit's content key (``data/cache/rgnn_policies/<key>``, where a row identical by
    construction finds the model another trained) holds the encoding and the switches: no variant
    copies ``aiw_ad``'s model or another variant's."""
    from planarena.runner.stages import build_method

    params, layout = gripper
    keys = set()
    for row in ("aiw_ad", *VARIANTS):
        m = build_method(row, params, layout)
        keys.add(m._unit_key("gripper", 13, "aiw", m.training_problems("gripper")))
    assert len(keys) == 1 + len(VARIANTS)


@pytest.mark.parametrize("row", list(VARIANTS))
def test_variant_row_runs_the_train_and_evaluate_stages(gripper, row):
    """The row's stages as ``dvc exp run -S methods.<row>.run=true`` runs them (smoke profile,
    Gripper): one model per (domain, seed), validated plan records that name the row's switches."""
    from planarena.core.io import read_jsonl
    from planarena.runner.stages import run_evaluate_stage, run_train_stage

    params, layout = gripper
    info = run_train_stage(params, layout, row)
    assert info["status"] == "ok" and info["trained"], info
    facts = json.loads((layout.models / row / "facts.json").read_text())["domains"]["gripper"]["seed13"]
    assert facts["status"] == "trained" and facts["episodes_run"] >= 1
    records = [r for r in read_jsonl(run_evaluate_stage(params, layout, row)) if r["extra"].get("task", "plan") == "plan"]
    assert len(records) == 3   # the three held-out splits, one seed
    assert all(r["extra"]["encoding"] == VARIANTS[row]["encoding"] for r in records)
    switches = {k: v for k, v in VARIANTS[row].items() if k != "encoding"}
    assert all({k: r["extra"].get(k) for k in ("tree_atoms", "goals") if k in r["extra"]} == switches for r in records)
    assert all(r["validated"] for r in records if r["outcome"] == "solved")


def test_a_kept_checkpoint_stores_weights_shared_by_two_names_once():
    """pymimir-rgnn registers its message MLPs under two names; the best checkpoint kept during
    training (train.snapshot) keeps them shared, so model.pt holds each weight once and loads back
    to the same network."""
    import io

    import torch
    from torch import nn

    from planarena.methods.rgnn_policies.train import snapshot

    shared = nn.Linear(64, 64)
    net = nn.Module()
    net.a, net.b, net.own = shared, shared, nn.Linear(2, 2)    # `b` is `a` under a second name
    state = snapshot(net.state_dict())
    assert state["a.weight"].data_ptr() == state["b.weight"].data_ptr() != shared.weight.data_ptr()
    size = lambda s: len((lambda b: (torch.save(s, b), b.getvalue())[1])(io.BytesIO()))  # noqa: E731
    cloned = {k: v.detach().clone() for k, v in net.state_dict().items()}
    assert size(state) < 0.6 * size(cloned)
    twin = nn.Module()
    twin.a, twin.b, twin.own = (s := nn.Linear(64, 64)), s, nn.Linear(2, 2)
    twin.load_state_dict(state)
    assert torch.equal(twin.a.weight, shared.weight) and twin.a is twin.b
