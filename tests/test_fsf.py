"""FSF encoder (state-centric paper, Appendix F): F.3 example, Table 5 semantics per domain,
padding / don't-care, ordering independence, N limit, batch encoding, real SATr problems."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from conftest import needs_shared

from planarena.core.trajectories import Trajectory
from planarena.features.fsf import (
    DONT_CARE,
    PAD,
    FSFEncoder,
    canonical_domain,
    encode_trajectory,
    fsf_size,
    fsf_size_for_problemset,
    natural_key,
    read_problem,
)

FSF = Path(__file__).parent / "fixtures" / "fsf"
X = PAD  # padding, for readable expected vectors
D = DONT_CARE

F3_STATE = ["(clear b)", "(clear d)", "(holding c)", "(on b a)", "(ontable a)", "(ontable d)"]


def _pypddl_domain(rel: str) -> str:
    import pypddl_datasets

    return str(Path(pypddl_datasets.__file__).parent / "generators" / "classical" / "ipc" / rel)


def _vec(*values: float) -> np.ndarray:
    return np.array(values, dtype=np.float32)


# ------------------------------------------------------------------------------------------------
# F.3 and Table 5
# ------------------------------------------------------------------------------------------------


def test_f3_example_exact():
    """Appendix F.3: A on table, B on A, C held, D on table; A..D -> 1..4; N = 6."""
    bound = FSFEncoder("blocksworld", 6).bind(FSF / "blocks_f3.pddl")
    assert bound.slot_objects == ["a", "b", "c", "d"]
    v = bound.encode_state(F3_STATE)
    assert v.dtype == np.float32 and v.shape == (7,)
    assert v.tolist() == [0, 0, 1, -1, 0, -99, -99]
    # the same from atoms only (objects a..d, no file)
    by_atoms = FSFEncoder("blocks", 6).bind((["a", "b", "c", "d"], []))
    assert by_atoms.encode_state(F3_STATE).tolist() == [0, 0, 1, -1, 0, -99, -99]


def test_blocksworld_goal():
    bound = FSFEncoder("blocksworld", 6).bind(FSF / "blocks_f3.pddl")
    # (on a b) -> slot a = 2, (on c d) -> slot c = 4; b, d and slot 0 unspecified; 5..6 padding
    expected = _vec(D, 2, D, 4, D, X, X)
    np.testing.assert_array_equal(bound.encode_goal(["(on a b)", "(on c d)"]), expected)
    np.testing.assert_array_equal(bound.encode_goal(), expected)  # the file's own goal
    # ontable / holding in a goal; clear and negative literals leave slots open
    g = bound.encode_goal(["(ontable d)", "(holding b)", "(clear a)", "(not (on a c))"])
    np.testing.assert_array_equal(g, _vec(D, D, -1, D, 0, X, X))


def test_gripper_table5():
    # slots: 0 robot room | 1 left, 2 right (grippers) | 3 ball1, 4 ball2, 5 ball10 | 6..7 padding
    # rooms: rooma 1, roomb 2, roomc 3
    bound = FSFEncoder("gripper", 7).bind(FSF / "gripper_small.pddl")
    assert bound.slot_objects == ["left", "right", "ball1", "ball2", "ball10"]
    assert bound.kinds["room"] == ["rooma", "roomb", "roomc"]
    s0 = read_problem(FSF / "gripper_small.pddl").init
    v = bound.encode_state(s0)
    expected = _vec(
        2,   # robot at roomb
        0,   # left free
        4,   # right holds ball2 (slot 4)
        1,   # ball1 at rooma
        -2,  # ball2 carried by right (slot 2)
        3,   # ball10 at roomc
        X, X,
    )
    np.testing.assert_array_equal(v, expected)
    g = bound.encode_goal(["(at ball10 roomb)", "(at ball1 roomb)"])
    np.testing.assert_array_equal(g, _vec(D, D, D, 2, D, 2, X, X))
    g2 = bound.encode_goal(["(at-robby roomc)", "(carry ball1 left)", "(free right)"])
    np.testing.assert_array_equal(g2, _vec(3, 3, 0, -1, D, D, X, X))


def test_logistics_table5():
    # slots: 0 unused | 1 obj1, 2 obj2, 3 obj3 | 4 tru1, 5 tru2 | 6 apn1 | 7..8 padding
    # locations (airports included, natural order): apt1 1, apt2 2, pos1 3, pos2 4; cities: no slot
    bound = FSFEncoder("logistics", 8).bind(FSF / "logistics_small.pddl")
    assert bound.slot_objects == ["obj1", "obj2", "obj3", "tru1", "tru2", "apn1"]
    assert bound.kinds["location"] == ["apt1", "apt2", "pos1", "pos2"]
    state = ["(at apn1 apt1)", "(at obj1 pos1)", "(at tru1 pos1)", "(at tru2 apt2)",
             "(in obj2 tru2)", "(in obj3 apn1)"]
    expected = _vec(
        0,   # unused
        3,   # obj1 at pos1
        -5,  # obj2 in tru2 (slot 5)
        -6,  # obj3 in apn1 (slot 6)
        3,   # tru1 at pos1
        2,   # tru2 at apt2
        1,   # apn1 at apt1
        X, X,
    )
    np.testing.assert_array_equal(bound.encode_state(state), expected)
    np.testing.assert_array_equal(bound.encode_state(read_problem(FSF / "logistics_small.pddl").init), expected)
    g = bound.encode_goal(["(at obj1 apt2)", "(at obj3 pos2)"])
    np.testing.assert_array_equal(g, _vec(D, 2, D, 4, D, D, D, X, X))


def test_visitall_table5():
    # slots: 0 robot cell | 1 loc-x0-y0, 2 loc-x0-y1, 3 loc-x1-y0, 4 loc-x1-y1 | 5 padding
    bound = FSFEncoder("visitall", 5).bind(FSF / "visitall_typed.pddl")
    assert bound.slot_objects == ["loc-x0-y0", "loc-x0-y1", "loc-x1-y0", "loc-x1-y1"]
    state = ["(at-robot loc-x1-y0)", "(visited loc-x0-y0)", "(visited loc-x1-y0)"]
    np.testing.assert_array_equal(bound.encode_state(state), _vec(3, 1, 0, 1, 0, X))
    g = bound.encode_goal(["(visited loc-x0-y0)", "(visited loc-x0-y1)", "(visited loc-x1-y1)"])
    np.testing.assert_array_equal(g, _vec(D, 1, 1, D, 1, X))
    g2 = bound.encode_goal(["(at-robot loc-x1-y1)"])
    np.testing.assert_array_equal(g2, _vec(4, D, D, D, D, X))


# ------------------------------------------------------------------------------------------------
# Padding, don't-care, ordering, N
# ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("domain,fixture,n", [
    ("blocksworld", "blocks_f3.pddl", 4),
    ("gripper", "gripper_small.pddl", 5),
    ("logistics", "logistics_small.pddl", 6),
    ("visitall", "visitall_typed.pddl", 4),
])
def test_padding_and_dont_care(domain, fixture, n):
    path = FSF / fixture
    assert fsf_size(domain, [path]) == n
    tight = FSFEncoder(domain, n).bind(path)
    wide = FSFEncoder(domain, n + 10).bind(path)
    init = read_problem(path).init
    s_tight, s_wide = tight.encode_state(init), wide.encode_state(init)
    assert s_wide.shape == (n + 11,)
    np.testing.assert_array_equal(s_wide[: n + 1], s_tight)
    assert (s_wide[n + 1 :] == PAD).all() and not (s_tight == PAD).any()
    g_wide = wide.encode_goal()
    assert (g_wide[n + 1 :] == PAD).all()
    assert (wide.encode_goal([])[: n + 1] == DONT_CARE).all()  # empty goal: all don't-care
    assert g_wide[0] == DONT_CARE  # no fixture goal mentions the robot


@pytest.mark.parametrize("domain,a,b", [
    ("blocksworld", "blocks_f3.pddl", "blocks_f3_permuted.pddl"),
    ("gripper", "gripper_small.pddl", "gripper_small_typed.pddl"),
    ("visitall", "visitall_typed.pddl", "visitall_untyped.pddl"),
])
def test_declaration_order_does_not_matter(domain, a, b):
    enc = FSFEncoder(domain, 9)
    ba, bb = enc.bind(FSF / a), enc.bind(FSF / b)
    assert ba.slot_objects == bb.slot_objects
    np.testing.assert_array_equal(ba.encode_state(read_problem(FSF / a).init),
                                  bb.encode_state(read_problem(FSF / b).init))
    np.testing.assert_array_equal(ba.encode_goal(), bb.encode_goal())


def test_logistics_permuted_atoms_bind_identically():
    pt = read_problem(FSF / "logistics_small.pddl")
    enc = FSFEncoder("logistics", 6)
    fwd = enc.bind((list(pt.objects), list(pt.init)))
    rev = enc.bind((list(reversed(pt.objects)), list(reversed(pt.init))))
    assert fwd.slot_objects == rev.slot_objects == enc.bind(FSF / "logistics_small.pddl").slot_objects


def test_natural_order():
    assert sorted(["b10", "b2", "b1"], key=natural_key) == ["b1", "b2", "b10"]
    assert sorted(["loc-x10-y0", "loc-x2-y10", "loc-x2-y9"], key=natural_key) == \
        ["loc-x2-y9", "loc-x2-y10", "loc-x10-y0"]


@pytest.mark.parametrize("domain,fixture,n", [
    ("blocksworld", "blocks_f3.pddl", 3),
    ("gripper", "gripper_small.pddl", 4),
    ("logistics", "logistics_small.pddl", 5),
])
def test_more_objects_than_n_raises(domain, fixture, n):
    name = read_problem(FSF / fixture).name
    with pytest.raises(ValueError, match=rf"{name}.*N={n}"):
        FSFEncoder(domain, n).bind(FSF / fixture)


def test_fsf_size_for_problemset(tmp_path):
    rows = []
    for dom, fixture in (("blocksworld", "blocks_f3.pddl"), ("gripper", "gripper_small.pddl"),
                         ("gripper", "gripper_small_typed.pddl")):
        rel = f"{dom}/test/{fixture}"
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text((FSF / fixture).read_text())
        rows.append({"domain": dom, "split": "test", "problem": fixture[:-5], "path": rel,
                     "size_param": "name", "size": None, "objects": 0, "seed": None, "origin": "test"})
    (tmp_path / "manifest.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert fsf_size_for_problemset(tmp_path, "gripper") == 5
    assert fsf_size_for_problemset(tmp_path, "blocksworld") == 4
    with pytest.raises(ValueError, match="no problems of domain"):
        fsf_size_for_problemset(tmp_path, "visitall")


# ------------------------------------------------------------------------------------------------
# Batches, trajectories, binding sources
# ------------------------------------------------------------------------------------------------


def _blocks_replay():
    """pymimir replay of a 3-step plan from the F.3 state (pypddl-datasets blocks domain)."""
    from planarena.core.pddl import (
        atoms_of,
        goal_atoms,
        load_problem,
        replay,
        static_atoms,
    )

    problem = load_problem(_pypddl_domain("blocks_4/domain.pddl"), str(FSF / "blocks_f3.pddl"))
    actions = ["(stack c d)", "(unstack b a)", "(stack b c)"]
    states, _ = replay(problem, actions)
    return problem, Trajectory(
        domain="blocks", split="test", problem="fsf-blocks-f3", problem_file="blocks_f3.pddl",
        plan_source="hand", optimal=False, actions=actions, states=[atoms_of(s) for s in states],
        static=static_atoms(problem), goal=goal_atoms(problem))


def test_batch_equals_single_and_trajectory():
    problem, traj = _blocks_replay()
    enc = FSFEncoder("blocksworld", 6)
    bound = enc.bind(FSF / "blocks_f3.pddl")
    batch = bound.encode_states(traj.states)
    assert batch.shape == (4, 7) and batch.dtype == np.float32
    np.testing.assert_array_equal(batch, np.stack([bound.encode_state(s) for s in traj.states]))
    expected = np.array([
        [0, 0, 1, -1, 0, X, X],   # F.3 state
        [0, 0, 1, 4, 0, X, X],    # (stack c d): c on d
        [0, 0, -1, 4, 0, X, X],   # (unstack b a): b held
        [0, 0, 3, 4, 0, X, X],    # (stack b c): b on c
    ], dtype=np.float32)
    np.testing.assert_array_equal(batch, expected)
    assert bound.encode_states([]).shape == (0, 7)
    # trajectory: from its own atoms, from the problem file, and via a pymimir Problem
    for states, goal in (enc.encode_trajectory(traj), enc.encode_trajectory(traj, problem_root=FSF),
                         encode_trajectory(traj, 6)):
        np.testing.assert_array_equal(states, expected)
        np.testing.assert_array_equal(goal, _vec(D, 2, D, 4, D, X, X))
    np.testing.assert_array_equal(enc.bind(problem).encode_states(traj.states), expected)
    # pymimir State objects are accepted as states
    from planarena.core.pddl import replay
    np.testing.assert_array_equal(bound.encode_states(replay(problem, traj.actions)[0]), expected)


@pytest.mark.parametrize("domain,fixture,domain_file", [
    ("gripper", "gripper_small.pddl", "gripper/domain.pddl"),
    ("logistics", "logistics_small.pddl", "logistics/domain_logistics00.pddl"),
    ("visitall", "visitall_typed.pddl", "visitall/domain.pddl"),
])
def test_binding_from_pymimir_atoms_matches_file(domain, fixture, domain_file):
    """A trajectory's ``static`` list (pymimir output) gives the slots the problem file gives."""
    from planarena.core.pddl import atoms_of, goal_atoms, load_problem, static_atoms

    problem = load_problem(_pypddl_domain(domain_file), str(FSF / fixture))
    s0 = atoms_of(problem.get_initial_state())
    enc = FSFEncoder(domain, 8)
    by_file = enc.bind(FSF / fixture)
    by_atoms = enc.bind((None, static_atoms(problem) + s0))
    by_mimir = enc.bind(problem)
    assert by_file.slot_objects == by_atoms.slot_objects == by_mimir.slot_objects
    assert by_file.kinds == by_atoms.kinds == by_mimir.kinds
    for b in (by_atoms, by_mimir):
        np.testing.assert_array_equal(b.encode_states([s0]), by_file.encode_states([s0]))
        np.testing.assert_array_equal(b.encode_goal(goal_atoms(problem)), by_file.encode_goal())


# ------------------------------------------------------------------------------------------------
# Errors and domain names
# ------------------------------------------------------------------------------------------------


def test_domain_names():
    assert canonical_domain("blocks") == "blocksworld"
    assert canonical_domain("visitall-from-everywhere") == "visitall"
    assert FSFEncoder("Gripper", 3).domain == "gripper"
    with pytest.raises(ValueError, match="supported.*blocksworld.*gripper.*logistics.*visitall"):
        FSFEncoder("sokoban", 10)


def test_state_errors():
    bound = FSFEncoder("blocksworld", 6).bind(FSF / "blocks_f3.pddl")
    with pytest.raises(ValueError, match=r"state 1 .*block:d"):  # d has no position in state 1
        bound.encode_states([F3_STATE, ["(ontable a)", "(on b a)", "(holding c)"]])
    with pytest.raises(ValueError, match="does not fit"):
        bound.encode_state(F3_STATE + ["(on d e)"])
    with pytest.raises(TypeError, match="encode_state"):
        bound.encode_states(F3_STATE)
    with pytest.raises(ValueError, match="two values"):
        bound.encode_goal(["(on a b)", "(ontable a)"])
    # upper case / extra spaces are normalised
    np.testing.assert_array_equal(bound.encode_state([a.upper().replace(" ", "  ") for a in F3_STATE]),
                                  bound.encode_state(F3_STATE))
    with pytest.raises(ValueError, match="robot room"):
        FSFEncoder("gripper", 5).bind(FSF / "gripper_small.pddl").encode_state(
            ["(at ball1 rooma)", "(at ball2 rooma)", "(at ball10 rooma)", "(free left)", "(free right)"])
    with pytest.raises(ValueError, match="cannot tell the kind"):
        FSFEncoder("gripper", 5).bind((["left", "right", "ball1", "rooma", "robot"],
                                       ["(gripper left)", "(gripper right)", "(ball ball1)", "(room rooma)"]))


# ------------------------------------------------------------------------------------------------
# Real SATr problems
# ------------------------------------------------------------------------------------------------


@pytest.mark.shared
@pytest.mark.parametrize("domain", ["blocksworld", "gripper", "logistics", "visitall"])
def test_satr_initial_states(domain):
    from planarena.core.pddl import atoms_of, goal_atoms, load_problem

    root = needs_shared("satr") / domain
    files = [sorted((root / "train").glob("*.pddl"))[0], sorted((root / "extrapolation").glob("*.pddl"))[-1]]
    N = fsf_size(domain, files)
    enc = FSFEncoder(domain, N)
    for f in files:
        bound = enc.bind(f)
        problem = load_problem(str(root / "domain.pddl"), str(f))
        s0 = bound.encode_state(atoms_of(problem.get_initial_state()))
        assert s0.shape == (N + 1,) and np.isfinite(s0).all()
        assert (s0[bound.n_slots + 1 :] == PAD).all() and (s0[: bound.n_slots + 1] != PAD).all()
        np.testing.assert_array_equal(s0, bound.encode_state(read_problem(f).init))
        g = bound.encode_goal(goal_atoms(problem))
        assert (g[: bound.n_slots + 1] != PAD).all() and (g != DONT_CARE).any()
