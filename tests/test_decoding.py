"""Neuro-symbolic decoding (state-centric paper, Algorithm 1) and the Hit@k successor protocol,
with exact one-hot encoders and oracle / adversarial models, on tiny fixtures."""

import numpy as np
import pytest
from conftest import TINY, ConstantScorer

from planarena.core.pddl import atoms_of, load_problem, read_plan_file, replay
from planarena.core.validation import validate_plan
from planarena.datasets.suites import GENERATORS, _domain_text
from planarena.search.decoding import (
    DecodeSettings,
    decode,
    distances,
    hit_at_k,
    rank_successors_along,
)


class OneHot:
    """phi(s) = indicator vector over a fixed atom vocabulary (distinct states -> distinct rows)."""

    def __init__(self, vocab, goal_atoms):
        self.index = {a: i for i, a in enumerate(sorted(vocab))}
        self.goal_atoms = goal_atoms
        self.calls = 0

    def _vec(self, atoms):
        v = np.zeros(len(self.index), dtype=np.float32)
        for a in atoms:
            v[self.index[a]] = 1.0
        return v

    def states(self, atom_lists):
        self.calls += 1
        return np.stack([self._vec(a) for a in atom_lists]) if atom_lists else np.zeros((0, len(self.index)))

    def goal(self):
        return self._vec(self.goal_atoms)


class Oracle:
    """Returns phi of the next state of a reference trajectory (delta or state mode)."""

    def __init__(self, phis, mode):
        self.phis, self.mode = phis, mode
        self.calls = 0

    def initial_state(self, batch_size):
        return None

    def select(self, rec, idx):
        return None

    def step(self, phi_s, phi_g, rec):
        self.calls += 1
        out = []
        for row in phi_s:
            t = next((i for i, p in enumerate(self.phis[:-1]) if np.array_equal(p, row)), None)
            out.append(self.phis[t + 1] if t is not None else row)
        return np.stack(out), rec


def _vocab(problem, states=None):
    """Every fluent atom of the (tiny) reachable state space."""
    vocab = set()
    frontier = [problem.get_initial_state()]
    seen = set(frontier)
    while frontier:
        s = frontier.pop()
        vocab |= set(atoms_of(s))
        for a in s.generate_applicable_actions():
            s2 = a.apply(s)
            if s2 not in seen:
                seen.add(s2)
                frontier.append(s2)
    return vocab


def _gripper(tmp_path, balls=4):
    gen, dom, _ = GENERATORS["gripper"]
    (tmp_path / "d.pddl").write_text(_domain_text(dom))
    (tmp_path / "p.pddl").write_text(gen(balls, 0))
    return str(tmp_path / "d.pddl"), str(tmp_path / "p.pddl")


@pytest.mark.parametrize("mode", ["state", "delta"])
def test_oracle_model_solves_with_reference_plan(mode):
    domain, prob = str(TINY / "domain.pddl"), str(TINY / "three.pddl")
    problem = load_problem(domain, prob)
    plan = read_plan_file(TINY / "three.plan")
    states, _ = replay(problem, plan)
    enc = OneHot(_vocab(problem, states), ["(on a b)", "(on b c)"])
    phis = enc.states([atoms_of(s) for s in states])
    res = decode(problem, enc, Oracle(phis, mode), mode, DecodeSettings())
    assert res.outcome == "solved" and res.plan == plan
    assert validate_plan(domain, prob, res.plan).valid


def test_one_model_call_and_one_embedding_call_per_step(tmp_path):
    domain, prob = _gripper(tmp_path)
    problem = load_problem(domain, prob)
    from planarena.datasets.planning import run_fast_downward

    plan = run_fast_downward("astar_lmcut", domain, prob, 20, 2048).plan
    states, _ = replay(problem, plan)
    vocab = _vocab(problem)
    enc = OneHot(vocab, [])
    phis = enc.states([atoms_of(s) for s in states])
    enc.calls = 0
    oracle = Oracle(phis, "delta")
    res = decode(problem, enc, oracle, "delta", DecodeSettings())
    assert res.outcome == "solved" and len(res.plan) == len(plan)
    assert oracle.calls == res.steps  # one batched model call per step (all beams at once)
    assert enc.calls == res.steps + 1  # the initial state, then one call per step for all successors


def test_adversarial_model_never_emits_inapplicable_actions(tmp_path):
    domain, prob = _gripper(tmp_path, balls=3)
    problem = load_problem(domain, prob)
    rng = np.random.default_rng(0)

    class Noise:
        def initial_state(self, b):
            return None

        def select(self, rec, idx):
            return None

        def step(self, phi_s, phi_g, rec):
            return rng.normal(size=phi_s.shape).astype(np.float32), None

    class Hash:
        def states(self, atom_lists):
            return np.stack([[hash(a) % 97 for a in sorted(x)][:8] + [0] * (8 - min(8, len(x))) for x in atom_lists]).astype(np.float32)

        def goal(self):
            return np.zeros(8, dtype=np.float32)

    for horizon in (5, 40):
        res = decode(problem, Hash(), Noise(), "delta", DecodeSettings(horizon=horizon, beam_width=3))
        assert res.outcome in ("solved", "unsolved")
        assert res.steps <= horizon
        if res.plan:
            assert validate_plan(domain, prob, res.plan).valid


def test_horizon_and_time_limit_are_outcomes():
    domain, prob = str(TINY / "domain.pddl"), str(TINY / "unsolvable.pddl")
    problem = load_problem(domain, prob)

    class Zero:
        def initial_state(self, b):
            return None

        def select(self, rec, idx):
            return None

        def step(self, phi_s, phi_g, rec):
            return np.zeros_like(phi_s), None

    class Const:
        def states(self, atom_lists):
            return np.ones((len(atom_lists), 3), dtype=np.float32)

        def goal(self):
            return np.ones(3, dtype=np.float32)

    res = decode(problem, Const(), Zero(), "delta", DecodeSettings(horizon=7, revisit=True))
    assert res.outcome == "unsolved" and res.steps == 7 and "horizon" in res.reason
    res = decode(problem, Const(), Zero(), "delta", DecodeSettings(horizon=10**6, revisit=True), time_limit=0.2)
    assert res.outcome == "timeout"
    # without revisiting, the two-block space is exhausted: a dead end, not a crash
    res = decode(problem, Const(), Zero(), "delta", DecodeSettings(horizon=10**6))
    assert res.outcome == "unsolved" and "dead end" in res.reason


def test_greedy_cycle_stops_early_with_the_same_outcome():
    """stop_on_cycle (Algorithm 4 of the symmetry-aware-transformers paper, a deterministic greedy
    policy): a constant scorer picks the first action by name every step, which returns to a
    visited state; the run stops there, unsolved, instead of cycling to the horizon."""
    from planarena.search.decoding import DecodeProblem, decode_lockstep

    problem = load_problem(str(TINY / "domain.pddl"), str(TINY / "unsolvable.pddl"))

    full = decode_lockstep([DecodeProblem(problem)], ConstantScorer(), DecodeSettings(beam_width=1, horizon=50, revisit=True))
    early = decode_lockstep([DecodeProblem(problem)], ConstantScorer(),
                            DecodeSettings(beam_width=1, horizon=50, revisit=True, stop_on_cycle=True))
    assert full[0].outcome == early[0].outcome == "unsolved" and full[0].steps == 50
    assert early[0].steps < 5 and early[0].reason.startswith("cycle")
    with pytest.raises(ValueError, match="stop_on_cycle needs beam_width 1"):
        DecodeSettings.from_params({"stop_on_cycle": True})


def test_code_settings_horizon():
    s = DecodeSettings(horizon=100, horizon_per_object=10)
    assert s.horizon_for(17) == 170 and s.horizon_for(3) == 100
    with pytest.raises(ValueError, match="beam_score"):
        DecodeSettings.from_params({"beam_score": "sum"})
    with pytest.raises(ValueError, match="unknown decode settings"):
        DecodeSettings.from_params({"beam": 3})


def test_distances():
    a = np.array([[1.0, 0.0], [0.0, 2.0], [0.0, 0.0]])
    t = np.array([[2.0, 0.0], [1.0, 0.0], [1.0, 0.0]])
    assert np.allclose(distances(a, t, "cosine"), [0.0, 1.0, 1.0])
    assert np.allclose(distances(a, t, "euclidean"), [1.0, np.sqrt(5), 1.0])


def test_hit_at_k_with_ties_is_expected_value_under_random_tie_breaking():
    assert hit_at_k(0.5, np.array([0.1, 0.9, 0.9]), (1, 3)) == {"hit@1": 0.0, "hit@3": 1.0}
    assert hit_at_k(0.1, np.array([0.2, 0.3]), (1,)) == {"hit@1": 1.0}
    # true tied with 3 others, one strictly better: rank uniform on 2..5
    h = hit_at_k(0.5, np.array([0.1, 0.5, 0.5, 0.5]), (1, 3, 5))
    assert h == {"hit@1": 0.0, "hit@3": 0.5, "hit@5": 1.0}


def test_rank_successors_with_oracle_is_perfect():
    domain, prob = str(TINY / "domain.pddl"), str(TINY / "three.pddl")
    problem = load_problem(domain, prob)
    plan = read_plan_file(TINY / "three.plan")
    states, _ = replay(problem, plan)
    enc = OneHot(_vocab(problem, states), [])
    phis = enc.states([atoms_of(s) for s in states])
    out = rank_successors_along(problem, plan, enc, Oracle(phis, "state"), "state")
    assert out["hit@1"] == 1.0 and out["steps"] == 4 and out["mean_candidates"] >= 1


def test_rank_successors_embeds_a_trajectory_in_one_call():
    domain, prob = str(TINY / "domain.pddl"), str(TINY / "three.pddl")
    problem = load_problem(domain, prob)
    plan = read_plan_file(TINY / "three.plan")
    states, _ = replay(problem, plan)
    enc = OneHot(_vocab(problem), [])
    oracle = Oracle(enc.states([atoms_of(s) for s in states]), "delta")
    enc.calls = 0
    out = rank_successors_along(problem, plan, enc, oracle, "delta")
    assert enc.calls == 1 and oracle.calls == len(plan) and out["hit@1"] == 1.0


# ------------------------------------------------------------------------------------------------
# Lockstep decoding against the pre-lockstep one-problem decoder (docs/cost.md#decoding)
# ------------------------------------------------------------------------------------------------


def reference_decode(problem, encoder, model, settings):
    """The one-problem beam decoder as it was before lockstep decoding (commit 63421e0), kept as
    the oracle: plan or None, steps taken."""
    goal = problem.get_goal_condition()
    metric = settings.resolved_metric("delta")
    init = problem.get_initial_state()
    beams = [(init, [], frozenset([init]), 0.0)]
    phi_g = encoder.goal()[None, :]
    phi_cur = encoder.states([atoms_of(init)])
    rec = model.initial_state(1)
    steps = 0
    while True:
        for state, actions, _, _ in beams:
            if goal.holds(state):
                return list(actions), steps
        if steps >= settings.horizon:
            return None, steps
        targets, rec_next = model.step(phi_cur, np.repeat(phi_g, len(beams), axis=0), rec)
        owners, acts, succs, seen = [], [], [], set()
        for i, (state, _, visited, _) in enumerate(beams):
            for a in sorted(state.generate_applicable_actions(), key=str):
                s2 = a.apply(state)
                if (not settings.revisit and s2 in visited) or (i, s2) in seen:
                    continue
                seen.add((i, s2))
                owners.append(i)
                acts.append(a)
                succs.append(s2)
        steps += 1
        if not succs:
            return None, steps
        phi = encoder.states([atoms_of(s) for s in succs])
        dist = distances(phi, targets[np.asarray(owners)], metric)
        if settings.beam_score == "cumulative":
            dist = dist + np.asarray([beams[i][3] for i in owners])
        chosen, taken = [], set()
        for j in np.argsort(dist, kind="stable"):
            if succs[j] in taken:
                continue
            taken.add(succs[j])
            chosen.append(int(j))
            if len(chosen) == settings.beam_width:
                break
        beams = [(succs[j], beams[owners[j]][1] + [str(acts[j])], beams[owners[j]][2] | {succs[j]}, float(dist[j]))
                 for j in chosen]
        rec = model.select(rec_next, [owners[j] for j in chosen])
        phi_cur = phi[chosen]


class _Linear:
    """A deterministic stateful 'model': v = phi_s @ W + phi_g @ U + 0.1 * h, h carried per beam
    (exercises the recurrent-state bookkeeping of lockstep batches)."""

    def __init__(self, dim, seed):
        rng = np.random.default_rng(seed)
        self.W = rng.normal(size=(dim, dim)).astype(np.float32)
        self.U = rng.normal(size=(dim, dim)).astype(np.float32)

    def initial_state(self, b):
        return np.zeros((b, self.W.shape[0]), dtype=np.float32)

    def select(self, rec, idx):
        return rec[np.asarray(idx, dtype=np.int64)]

    def step(self, phi_s, phi_g, rec):
        # row by row, so that a row's numbers cannot depend on the batch it is in
        out = np.stack([phi_s[i] @ self.W + phi_g[i] @ self.U + 0.1 * rec[i] for i in range(len(phi_s))])
        return out.astype(np.float32), out.astype(np.float32)


@pytest.mark.parametrize("beam_score", ["step", "cumulative"])
def test_lockstep_batch_equals_reference_one_problem_decoder(tmp_path, beam_score):
    """Several gripper and blocksworld problems decoded in ONE lockstep batch give exactly the
    plans (and step counts) of the pre-lockstep decoder run on each alone, with a recurrent
    model, beams meeting the same states, dead ends and horizons."""
    from planarena.search.decoding import DecodeProblem, PerProblemEncoders, TransitionScorer, decode_lockstep

    cases = []
    for domain, sizes in (("gripper", (2, 3, 4)), ("blocksworld", (3, 4, 5))):
        gen, dom, _ = GENERATORS[domain]
        (tmp_path / f"{domain}.pddl").write_text(_domain_text(dom))
        for k, n in enumerate(sizes):
            for seed in range(2):
                f = tmp_path / f"{domain}-{n}-{seed}.pddl"
                f.write_text(gen(n, seed))
                cases.append((str(tmp_path / f"{domain}.pddl"), str(f)))
    problems = [load_problem(d, f) for d, f in cases]
    settings = DecodeSettings(horizon=12, beam_width=3, beam_score=beam_score)
    outcomes = []
    for dom in ("gripper", "blocksworld"):  # one model per domain: a batch of its six problems
        idx = [i for i, (d, _) in enumerate(cases) if d.endswith(f"{dom}.pddl")]
        vocab = set().union(*(_vocab(problems[i]) for i in idx))
        encoders = [OneHot(vocab, [str(lit.get_atom()) for lit in problems[i].get_goal_condition().get_literals()])
                    for i in idx]
        model = _Linear(len(vocab), seed=7)
        scorer = TransitionScorer(model, PerProblemEncoders(encoders), "euclidean")
        got = decode_lockstep([DecodeProblem(problems[i]) for i in idx], scorer, settings)
        assert len(got) == 6
        for i, enc, res in zip(idx, encoders, got):
            plan, steps = reference_decode(problems[i], enc, model, settings)
            assert (res.plan, res.steps) == (plan, steps), cases[i]
            assert (res.outcome == "solved") == (plan is not None)
            outcomes.append(res.outcome)
    # the batches mix problems that end early (solved) and ones that run to the horizon
    assert "solved" in outcomes and "unsolved" in outcomes, outcomes
