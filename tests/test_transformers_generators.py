"""The plan generators of the symmetry-aware-transformers family: optimal-plan samples, the
incremental (KV-cached) models, the contrastive loss on renamed pairs, Algorithms 1-3 and their
applicability guarantees, divergence handling."""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from planarena.core.pddl import load_problem, static_atoms  # noqa: E402
from planarena.core.validation import validate_plan  # noqa: E402
from planarena.methods.transformers.batches import PlanBatches  # noqa: E402
from planarena.methods.transformers.data import expand, sample_plans, trajectory_space  # noqa: E402
from planarena.methods.transformers.decode import (  # noqa: E402
    EncDecAdapter,
    PlanGPTAdapter,
    TokenMap,
    decode_plans,
)
from planarena.methods.transformers.decoders import (  # noqa: E402
    GeneratorOutput,
    PlanGPT,
    PlanGPTConfig,
    SATrEncDec,
)
from planarena.methods.transformers.model import EncoderConfig, pair_losses  # noqa: E402
from planarena.methods.transformers.plangpt import (  # noqa: E402
    PlanGPTVocabulary,
    alignment,
    encode_sequence,
    object_types,
    type_renaming,
)
from planarena.methods.transformers.tokens import ActionVocabulary, AtomVocabulary, renaming  # noqa: E402
from planarena.methods.transformers.train import TrainConfig, fit, train_generator  # noqa: E402

TINY = Path(__file__).parent / "fixtures" / "tiny"
DOMAIN, PROBLEM = TINY / "domain.pddl", TINY / "three.pddl"
SMALL = EncoderConfig(d=16, layers=2, heads=2, ff=32, k=4, token_dim=4)


@pytest.fixture(scope="module")
def space():
    return expand(DOMAIN, PROBLEM, max_states=1000)


@pytest.fixture(scope="module")
def problem():
    return load_problem(str(DOMAIN), str(PROBLEM))


def _plangpt_vocab(problem, space, m=6):
    types = tuple(sorted(set(object_types(space.objects, space.static).values())))
    dom = problem.get_domain()
    return PlanGPTVocabulary(tuple(sorted(p.get_name() for p in dom.get_predicates())),
                             tuple(sorted(a.get_name() for a in dom.get_actions())), types, m)


# ---------------------------------------------------------------------------------------------
# Samples: uniform optimal plans (Appendix E step 4), reference-plan chains
# ---------------------------------------------------------------------------------------------


def test_random_plans_are_optimal_and_uniform_over_all_optimal_plans(space, problem):
    from planarena.core.pddl import atoms_of

    init = space.states.index(atoms_of(problem.get_initial_state()))
    d = int(space.distance[init])
    n = space.plan_count(init)
    rng = random.Random(0)
    plans = [tuple(space.random_plan(init, rng)) for _ in range(300 * n)]
    assert all(len(p) == d for p in plans)
    for p in set(plans):  # every drawn plan is valid from the initial state
        assert validate_plan(DOMAIN, PROBLEM, list(p)).valid
    counts = Counter(plans)
    assert len(counts) == n  # every optimal plan is drawn ...
    assert max(counts.values()) < 1.5 * min(counts.values())  # ... about equally often
    for p, s, plan in sample_plans([space], 50, np.random.default_rng(1)):
        assert len(plan) == space.distance[s]


def test_trajectory_space_gives_every_suffix_of_the_reference_plan():
    from planarena.core.trajectories import Trajectory

    actions = ["(unstack b a)", "(stack b c)", "(pick-up a)", "(stack a b)"]
    traj = Trajectory("tiny", "train", "three", "three.pddl", "fd", True, actions,
                      [[f"s{i}"] for i in range(5)], [], ["(on a b)"])
    sp = trajectory_space(traj, ["a", "b", "c"])
    assert sp.distance.tolist() == [4, 3, 2, 1, 0] and sp.source == "reference plan" and sp.optimal
    assert sp.random_plan(1, random.Random(0)) == actions[1:]
    assert sp.plan_count(0) == 1


# ---------------------------------------------------------------------------------------------
# Models: incremental decoding = full forward; PlanGPT reads names and positions
# ---------------------------------------------------------------------------------------------


def test_encdec_incremental_decoding_equals_the_teacher_forced_pass():
    torch.manual_seed(0)
    m = SATrEncDec(30, 3, 20, SMALL).double().eval()
    ids = torch.randint(1, 30, (3, 7, 3))
    mask = torch.ones(3, 7, dtype=torch.bool)
    mask[1, 5:] = False
    dec = torch.randint(3, 20, (3, 5))
    dec[:, 0] = 1
    with torch.no_grad():
        full = m(ids, mask, dec, torch.ones(3, 5, dtype=torch.bool)).logits
        logits, cache = m.prefill(ids, mask, 1)
        steps = [logits] + [m.step(cache, dec[:, t]) for t in range(1, 5)]
    assert torch.allclose(full, torch.stack(steps, 1), atol=1e-10)
    assert torch.allclose(cache.select(torch.tensor([2, 0])).keys[0], cache.keys[0][[2, 0]])


def test_plangpt_incremental_decoding_of_right_padded_prompts_equals_the_full_pass():
    torch.manual_seed(0)
    g = PlanGPT(25, PlanGPTConfig(d=16, layers=2, heads=2, ff=32, k=4, max_positions=32)).double().eval()
    seq = torch.randint(1, 25, (3, 12))
    lengths = torch.tensor([8, 5, 10])
    nxt = torch.randint(1, 25, (3,))
    with torch.no_grad():
        logits, cache = g.prefill(seq, lengths)
        after = g.step(cache, nxt)
        for b in range(3):
            n = int(lengths[b])
            alone = g(seq[b:b + 1, :n], torch.ones(1, n, dtype=torch.bool)).logits[0, -1]
            assert torch.allclose(alone, logits[b], atol=1e-10)
            longer = torch.cat([seq[b, :n], nxt[b:b + 1]])[None]
            assert torch.allclose(g(longer, torch.ones(1, n + 1, dtype=torch.bool)).logits[0, -1], after[b], atol=1e-10)
    with pytest.raises(ValueError, match="32 learned positions"):
        g.prefill(torch.ones(1, 40, dtype=torch.long), torch.tensor([40]))


def test_plangpt_output_depends_on_object_names_where_the_satr_encoder_does_not_by_construction(problem, space):
    """PlanGPT (Limitations 1 and 4): another renaming changes its tokens and, through learned
    positions, its prediction; the SATr encoder-decoder's encoder is order-free (no positions)."""
    vocab = _plangpt_vocab(problem, space)
    types = object_types(space.objects, space.static)
    torch.manual_seed(0)
    g = PlanGPT(vocab.size, PlanGPTConfig(d=16, layers=2, heads=2, ff=32, k=4, max_positions=128)).double().eval()
    a = encode_sequence(vocab, space.atoms(0), space.goal, type_renaming(types, 6))
    b = encode_sequence(vocab, space.atoms(0), space.goal, type_renaming(types, 6, np.random.default_rng(3)))
    with torch.no_grad():
        la = g(torch.from_numpy(a)[None], torch.ones(1, len(a), dtype=torch.bool)).logits[0, -1]
        lb = g(torch.from_numpy(b)[None], torch.ones(1, len(b), dtype=torch.bool)).logits[0, -1]
    assert not torch.allclose(la, lb)
    # the encoder-decoder: permuting the atom rows leaves every decoder logit unchanged
    atoms = AtomVocabulary.of_domain(problem, 6)
    actions = ActionVocabulary.of_domain(problem, 6)
    m = SATrEncDec(atoms.size, atoms.width, actions.size, SMALL).double().eval()
    from planarena.methods.transformers.tokens import local_rows

    rows = torch.from_numpy(local_rows(atoms, space.atoms(0), space.goal, space.objects))[None]
    perm = torch.randperm(rows.shape[1])
    dec = torch.tensor([[1, actions.action_id("pick-up"), actions.object_id(0)]])
    mask = torch.ones(1, rows.shape[1], dtype=torch.bool)
    dmask = torch.ones(1, 3, dtype=torch.bool)
    with torch.no_grad():
        assert torch.allclose(m(rows, mask, dec, dmask).logits, m(rows[:, perm], mask, dec, dmask).logits, atol=1e-10)


# ---------------------------------------------------------------------------------------------
# Contrastive loss on renamed pairs (Section 4)
# ---------------------------------------------------------------------------------------------


def test_pair_losses_on_a_tiny_example_by_hand():
    """L_att = sum of squared score differences over every module / B; L_hid = sum over every
    hidden state's first k dimensions / B; padded tokens are left out; ``perm`` aligns copy b."""
    hid_a = torch.tensor([[[1.0, 2.0, 9.0], [3.0, 4.0, 9.0]]])         # (B=1, T=2, d=3)
    hid_b = torch.tensor([[[3.0, 5.0, 0.0], [1.0, 2.0, 0.0]]])         # copy b: tokens swapped, one off by 1
    att_a = torch.tensor([[[[0.5, 0.5], [1.0, 0.0]]]])                 # (B, h=1, 2, 2)
    att_b = torch.tensor([[[[0.0, 1.0], [0.5, 0.5]]]])                 # the same scores, tokens swapped
    mask = torch.ones(1, 2, dtype=torch.bool)
    a = GeneratorOutput(torch.zeros(1, 2, 4), [(hid_a, mask)], [(att_a, mask, mask)])
    b = GeneratorOutput(torch.zeros(1, 2, 4), [(hid_b, mask)], [(att_b, mask, mask)])
    l_att, l_hid = pair_losses(a, b, k=2, perm=torch.tensor([[1, 0]]))
    assert float(l_att) == 0.0 and float(l_hid) == 1.0                 # (4 - 5)^2, dim 3 ignored (k = 2)
    l_att, l_hid = pair_losses(a, b, k=2)                              # unaligned: every entry differs
    assert float(l_att) == 4 * 0.5 ** 2
    assert float(l_hid) == (1 - 3) ** 2 + (2 - 5) ** 2 + (3 - 1) ** 2 + (4 - 2) ** 2
    pad = torch.tensor([[True, False]])
    a2 = GeneratorOutput(torch.zeros(1, 2, 4), [(hid_a, pad)], [(att_a, pad, pad)])
    l_att, l_hid = pair_losses(a2, b, k=2)
    assert float(l_hid) == 4 + 9 and float(l_att) == 0.25               # token 0, score (0, 0) only
    # Appendix E's MSE: the same squares over the compared elements (1 score; 1 token x k = 2)
    l_att, l_hid = pair_losses(a2, b, k=2, reduction="mean")
    assert float(l_att) == 0.25 and float(l_hid) == (4 + 9) / 2
    l_att, l_hid = pair_losses(a, b, k=2, reduction="mean")               # 4 scores; 2 tokens x 2
    assert float(l_att) == 0.5 ** 2 and float(l_hid) == (4 + 9 + 4 + 4) / 4


def test_plangpt_pairs_are_aligned_token_by_token(problem, space):
    vocab = _plangpt_vocab(problem, space)
    types = object_types(space.objects, space.static)
    rng = np.random.default_rng(0)
    na, nb = type_renaming(types, 6, rng), type_renaming(types, 6, rng)
    plan = space.random_plan(0, random.Random(0))
    a, oa = encode_sequence(vocab, space.atoms(0), space.goal, na, plan, with_origin=True)
    b, ob = encode_sequence(vocab, space.atoms(0), space.goal, nb, plan, with_origin=True)
    perm = alignment(oa, ob)
    back = {v: k for k, v in nb.items()}
    for t, p in enumerate(perm):      # aligned tokens are the same token of the unrenamed sample
        ta, tb = vocab.tokens[a[t]], vocab.tokens[b[p]]
        inv_a = {v: k for k, v in na.items()}
        assert inv_a.get(ta, ta) == back.get(tb, tb)
    batch = PlanBatches("plangpt", vocab, [space]).draw(4, np.random.default_rng(2))
    torch.manual_seed(0)
    g = PlanGPT(vocab.size, PlanGPTConfig(d=16, layers=1, heads=2, ff=32, k=4, max_positions=256))
    # with identical names both copies coincide and the aligned loss is exactly zero
    same = dict(batch, b=batch["a"], perm=torch.arange(batch["a"][0].shape[1]).repeat(4, 1))
    with torch.no_grad():
        losses = pair_losses(g(*same["a"]), g(*same["b"]), 4, same["perm"])
        assert [float(x) for x in losses] == [0.0, 0.0]
        assert float(pair_losses(g(*batch["a"]), g(*batch["b"]), 4, batch["perm"])[1]) > 0   # renamed: differ


# ---------------------------------------------------------------------------------------------
# Decoding (Algorithms 1-3): a scripted model shows each strategy's guarantees
# ---------------------------------------------------------------------------------------------


class Scripted:
    """An adapter whose logits prefer ``script[i][n]`` at a problem's n-th decision and, after the
    script, lower token ids; plan tokens: 0 pad, 1 BOS, 2 EOS, 3.. actions, then objects."""

    def __init__(self, problem, plans=(), extra=()):
        dom = problem.get_domain()
        actions = sorted(a.get_name() for a in dom.get_actions())
        objs = sorted(str(o) for o in problem.get_objects())
        self.map = TokenMap({a: 3 + i for i, a in enumerate(actions)},
                            {a.get_name(): a.get_arity() for a in dom.get_actions()},
                            {o: 3 + len(actions) + i for i, o in enumerate(objs)}, 2)
        self.v = 3 + len(actions) + len(objs)
        self.script = [sum((self.tok(a) for a in p), []) + list(extra) for p in plans]
        self.decisions: dict[int, int] = {}
        self.prefills = 0

    def tok(self, text):
        name, *args = text.strip("()").split()
        return [self.map.actions[name], *(self.map.objects[a] for a in args)]

    def token_map(self, i):
        return self.map

    def budget(self, i, state):
        return 1 << 30

    def _logits(self, rows):
        out = -np.arange(self.v, dtype=float)[None].repeat(len(rows), 0)
        for r, i in enumerate(rows):
            n = self.decisions.get(i, 0)
            self.decisions[i] = n + 1
            if n < len(self.script[i]):
                out[r, self.script[i][n]] = 100.0
        return out

    def prefill(self, problems, states):
        self.prefills += 1
        return self._logits(list(problems)), list(problems)

    def step(self, cache, tokens):
        return self._logits(cache)

    def select(self, cache, rows):
        return [cache[r] for r in rows]


def test_greedy_solves_a_correct_plan_and_stops_at_the_first_fault(problem):
    plan = ["(unstack b a)", "(stack b c)", "(pick-up a)", "(stack a b)"]
    s = Scripted(problem, [plan], extra=[2])
    (r,) = decode_plans([problem], s, "greedy")
    assert r.outcome == "solved" and r.plan == plan and r.tokens == 12   # 11 plan tokens and <EOS>
    assert validate_plan(DOMAIN, PROBLEM, r.plan).valid
    # <EOS> before the goal
    (r,) = decode_plans([problem], Scripted(problem, [plan[:2]], extra=[2]), "greedy")
    assert r.outcome == "unsolved" and r.failure == "eos_before_goal"
    # an inapplicable action: b is not on the table
    (r,) = decode_plans([problem], Scripted(problem, [["(pick-up b)"]]), "greedy")
    assert r.outcome == "unsolved" and r.failure == "inapplicable" and "pick-up b" in r.reason and r.tokens == 2
    # a malformed action: an object where an action name belongs
    s = Scripted(problem, [[]])
    s.script = [[s.map.objects["a"]]]
    (r,) = decode_plans([problem], s, "greedy")
    assert r.outcome == "unsolved" and r.failure == "malformed" and r.tokens == 1
    s = Scripted(problem, [[]])                                     # <EOS> inside an action
    s.script = [[s.map.actions["stack"], s.map.objects["b"], 2]]
    (r,) = decode_plans([problem], s, "greedy")
    assert r.outcome == "unsolved" and r.failure == "malformed" and r.tokens == 3


def test_applicable_filtering_only_emits_applicable_actions_and_stops_at_the_goal(problem):
    """Algorithm 2: the scripted model insists on inapplicable actions; the mask replaces each by an
    applicable one, so every prefix of the emitted plan is executable; the goal ends decoding."""
    from planarena.core.pddl import replay

    s = Scripted(problem, [["(pick-up b)", "(stack c a)", "(put-down a)"] * 30])
    (r,) = decode_plans([problem], s, "applicable", max_tokens=60)
    assert r.failure in (None, "token_cap") and r.tokens <= 60
    assert len(r.emitted) >= 3 and "(pick-up b)" not in r.emitted
    replay(problem, r.emitted)                       # raises if any emitted action is inapplicable
    plan = ["(unstack b a)", "(stack b c)", "(pick-up a)", "(stack a b)"]
    (r,) = decode_plans([problem], Scripted(problem, [plan], extra=[2, 2, 2]), "applicable")
    assert r.outcome == "solved" and r.plan == plan and r.tokens == 11     # stopped at the goal, no <EOS>
    for strategy in ("applicable", "regrounding"):
        rng = np.random.default_rng(0)
        s = Scripted(problem, [[]])
        s.script = [list(rng.integers(0, s.v, size=400))]
        (r,) = decode_plans([problem], s, strategy, max_tokens=400)
        assert r.failure not in ("inapplicable", "malformed", "eos_before_goal")
        replay(problem, r.emitted)
        if r.outcome == "solved":
            assert validate_plan(DOMAIN, PROBLEM, r.plan).valid


def test_regrounding_restarts_after_each_action_and_stops_on_a_cycle(problem):
    s = Scripted(problem, [["(unstack b a)", "(stack b a)"]])
    (r,) = decode_plans([problem], s, "regrounding")
    assert r.outcome == "unsolved" and r.failure == "cycle" and r.extra["actions"] == 2
    assert s.prefills == 2  # the input was rebuilt after the first action


def test_lockstep_results_equal_one_problem_at_a_time(problem, space):
    """A batch of problems gives each problem the plan it gets alone (real models, float64)."""
    problems = [problem] * 3
    atoms, actions = AtomVocabulary.of_domain(problem, 6), ActionVocabulary.of_domain(problem, 6)
    torch.manual_seed(1)
    m = SATrEncDec(atoms.size, atoms.width, actions.size, SMALL).double().eval()
    slots = [renaming(space.objects, 6, np.random.default_rng(k)) for k in range(3)]
    vocab = _plangpt_vocab(problem, space)
    g = PlanGPT(vocab.size, PlanGPTConfig(d=16, layers=2, heads=2, ff=32, k=4, max_positions=256)).double().eval()
    types = object_types(space.objects, static_atoms(problem))
    names = [type_renaming(types, 6, np.random.default_rng(k)) for k in range(3)]
    for strategy in ("greedy", "applicable", "regrounding"):
        for make in (lambda ps, ix: EncDecAdapter(m, atoms, actions, ps, [slots[i] for i in ix]),
                     lambda ps, ix: PlanGPTAdapter(g, vocab, ps, [names[i] for i in ix])):
            batch = decode_plans(problems, make(problems, [0, 1, 2]), strategy, max_tokens=40)
            alone = [decode_plans([problem], make([problem], [k]), strategy, max_tokens=40)[0] for k in range(3)]
            assert [(r.outcome, r.plan, r.tokens, r.failure) for r in batch] == \
                   [(r.outcome, r.plan, r.tokens, r.failure) for r in alone]


# ---------------------------------------------------------------------------------------------
# Training: divergence is a recorded outcome
# ---------------------------------------------------------------------------------------------


def test_a_loss_spike_or_nan_in_generator_training_is_recorded_with_its_step(problem, space):
    torch.manual_seed(0)
    atoms, actions = AtomVocabulary.of_domain(problem, 6), ActionVocabulary.of_domain(problem, 6)
    m = SATrEncDec(atoms.size, atoms.width, actions.size, SMALL)
    batches = PlanBatches("encdec", (atoms, actions), [space])
    cfg = TrainConfig(steps=12, batch=4, warmup=2, eval_every=4, window=2, spike=10.0, plateau=2)
    res = train_generator(m, batches, cfg, seed=0, validate=lambda model: (0.0,))
    assert res.status == "ok" and res.steps_run == 12 and res.best_step == 12 and res.state is not None
    # a NaN at step 6: diverged there, the checkpoint of step 4 is kept, nothing raises
    from planarena.methods.transformers.train import generator_losses

    def step_loss(rng, calls=[0]):
        calls[0] += 1
        loss = generator_losses(m, batches.draw(4, rng), cfg, SMALL.k)
        return loss * float("nan") if calls[0] == 7 else loss

    res = fit(m, step_loss, cfg, seed=0, validate=lambda model: (0.0,))
    assert res.status == "diverged" and res.diverged_at == 6 and res.best_step == 4 and res.state is not None


def test_each_selection_criterion_keeps_its_own_checkpoint(problem, space):
    """A validator scoring several strategies (a dict) keeps one best checkpoint per strategy: here
    "early" peaks at step 4 and "late" at the last step, and each keeps the weights of its step."""
    torch.manual_seed(0)
    atoms, actions = AtomVocabulary.of_domain(problem, 6), ActionVocabulary.of_domain(problem, 6)
    m = SATrEncDec(atoms.size, atoms.width, actions.size, SMALL)
    batches = PlanBatches("encdec", (atoms, actions), [space])
    cfg = TrainConfig(steps=12, batch=4, warmup=2, eval_every=4, window=2, spike=10.0, plateau=2)
    seen = {}

    def validate(model, calls=[0]):
        calls[0] += 1
        seen[calls[0] * 4] = {k: v.clone() for k, v in model.state_dict().items()}
        return {"early": (1.0 if calls[0] == 1 else 0.0,), "late": (float(calls[0]),)}

    res = train_generator(m, batches, cfg, seed=0, validate=validate)
    assert {k: step for k, (_, step, _) in res.best.items()} == {"early": 4, "late": 12}
    assert res.best_step == 4 and res.state is res.best["early"][2]   # the first key is the primary one
    for key, (_, step, state) in res.best.items():
        assert all(torch.equal(state[k], seen[step][k]) for k in state)
    assert [step for step, _ in res.evaluations] == [4, 8, 12] and res.evaluations[1][1] == {"early": [0.0], "late": [2.0]}


# ---------------------------------------------------------------------------------------------
# Learning: a generator can fit one tiny problem ("cannot learn" told apart from "not trained
# enough")
# ---------------------------------------------------------------------------------------------


def _overfit(arch: str, problem, space, m: int = 3, steps: int = 600):
    """A generator (d 32, 2 layers) trained without the contrastive loss on the tiny problem's
    state space; returns (model, tokens, result, untrained weights, a fixed batch of pairs)."""
    torch.manual_seed(0)
    if arch == "encdec":
        tokens = (AtomVocabulary.of_domain(problem, m), ActionVocabulary.of_domain(problem, m))
        model = SATrEncDec(tokens[0].size, tokens[0].width, tokens[1].size,
                           EncoderConfig(d=32, layers=2, heads=4, ff=64, k=8, token_dim=8))
    else:
        tokens = _plangpt_vocab(problem, space, m)
        model = PlanGPT(tokens.size, PlanGPTConfig(d=32, layers=2, heads=4, ff=64, k=8, max_positions=128))
    untrained = {k: v.clone() for k, v in model.state_dict().items()}
    batches = PlanBatches(arch, tokens, [space])
    cfg = TrainConfig(steps=steps, batch=16, lr=3e-3, warmup=0.05, contrastive=False, eval_every=10**9)
    res = train_generator(model, batches, cfg, seed=0)
    return model, tokens, res, untrained, batches.draw(64, np.random.default_rng(5))


def test_the_encoder_decoder_overfits_one_tiny_problem_and_solves_it_greedily(problem, space):
    """The generator can learn (told apart from "not trained enough"): trained by token
    cross-entropy on one tiny problem's state space (every state with its optimal plans,
    Rename-Both), the SATr encoder-decoder decodes valid plans greedily (Algorithm 1) under fresh
    random renamings; the untrained model of the same seed solves none."""
    from planarena.methods.transformers.train import teacher_forced

    model, (atoms, actions), res, untrained, batch = _overfit("encdec", problem, space)
    assert res.status == "ok" and np.mean(res.losses[-20:]) < 0.05 * np.mean(res.losses[:20])
    model.eval()
    with torch.no_grad():
        accuracy, loss = teacher_forced(model, batch)
    assert accuracy > 0.98 and loss < 0.1

    def solved(state: dict) -> int:
        model.load_state_dict(state)
        model.eval().double()
        problems = [problem] * 10
        slots = [renaming([str(o) for o in problem.get_objects()], 3, np.random.default_rng(100 + i))
                 for i in range(10)]
        with torch.no_grad():
            out = decode_plans(problems, EncDecAdapter(model, atoms, actions, problems, slots), "greedy", 60)
        model.float()
        return sum(r.outcome == "solved" and validate_plan(DOMAIN, PROBLEM, r.plan).valid for r in out)

    assert solved(res.state) >= 7   # 8 of 10 at this seed; the misses stop at an inapplicable action
    assert solved(untrained) == 0


def test_plangpt_learns_the_tiny_problem_under_teacher_forcing(problem, space):
    """PlanGPT's half of D7: the same budget takes its teacher-forced token accuracy from chance to
    over 0.9 (it learns), although it does not yet decode the problem greedily at this budget
    (600 steps; its learned positions and type-based renaming make it slower to fit)."""
    from planarena.methods.transformers.train import teacher_forced

    model, _, res, untrained, batch = _overfit("plangpt", problem, space)
    model.eval()
    with torch.no_grad():
        trained = teacher_forced(model, batch)
        model.load_state_dict(untrained)
        before = teacher_forced(model, batch)
    assert res.status == "ok" and trained[0] > 0.9 and before[0] < 0.3 and trained[1] < 0.25 * before[1]
