"""Symmetry-aware transformers: atom tokens and renamings, the SATr encoder's symmetries, the
contrastive loss, state-space sampling and divergence detection."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from planarena.core.pddl import load_problem  # noqa: E402
from planarena.methods.transformers.data import expand, sample_heuristic  # noqa: E402
from planarena.methods.transformers.model import EncoderConfig, SATrEncoder, contrastive_loss  # noqa: E402
from planarena.methods.transformers.tokens import (  # noqa: E402
    AtomVocabulary,
    encode_atoms,
    local_rows,
    pad_batch,
    rename_rows,
    renaming,
)
from planarena.methods.transformers.train import (  # noqa: E402
    PairBatches,
    TrainConfig,
    divergence_step,
    fit,
    learning_rate,
    train_heuristic,
)

TINY = Path(__file__).parent / "fixtures" / "tiny"


@pytest.fixture(scope="module")
def tiny():
    problem = load_problem(str(TINY / "domain.pddl"), str(TINY / "three.pddl"))
    vocab = AtomVocabulary.of_domain(problem, max_objects=6)
    space = expand(TINY / "domain.pddl", TINY / "three.pddl", max_states=1000)
    return vocab, space


def test_vocabulary_ids_and_goal_predicates(tiny):
    vocab, space = tiny
    assert vocab.max_arity == 2 and vocab.width == 3
    assert vocab.size == 1 + 2 * len(vocab.predicates) + 6
    names = renaming(space.objects, 6)  # fixed: sorted objects to slots 0, 1, 2
    assert names == {"a": 0, "b": 1, "c": 2}
    rows = encode_atoms(vocab, ["(on b a)", "(handempty)"], ["(on a b)"], names)
    on = vocab.predicate_id("on")
    assert rows.tolist() == [[on, vocab.object_id(1), vocab.object_id(0)],
                             [vocab.predicate_id("handempty"), 0, 0],
                             [vocab.predicate_id("on", goal=True), vocab.object_id(0), vocab.object_id(1)]]
    with pytest.raises(ValueError, match="negative goal literal"):
        encode_atoms(vocab, [], ["(not (on a b))"], names)
    with pytest.raises(ValueError, match="object 'z' has no token"):
        encode_atoms(vocab, ["(clear z)"], [], names)
    with pytest.raises(ValueError, match="only 2 object tokens"):
        renaming(space.objects, 2)


def test_local_rows_renamed_equal_direct_encoding(tiny):
    vocab, space = tiny
    rng = np.random.default_rng(3)
    names = renaming(space.objects, 6, rng)
    atoms = space.atoms(space.levels[2][0])
    direct = encode_atoms(vocab, atoms, space.goal, names)
    slots = np.array([names[o] for o in sorted(space.objects)])
    assert np.array_equal(rename_rows(vocab, local_rows(vocab, atoms, space.goal, space.objects), slots), direct)


def _encode(vocab, space, state, names, order=None):
    rows = encode_atoms(vocab, space.atoms(state), space.goal, names)
    if order is not None:
        rows = rows[order]
    ids, mask = pad_batch([rows], vocab.width)
    return torch.from_numpy(ids), torch.from_numpy(mask)


def test_encoder_is_invariant_to_atom_order_but_not_by_construction_to_names(tiny):
    """No positional encoding + sum readout: permuting the atoms leaves h unchanged exactly; the
    object tokens are learned embeddings, so an untrained encoder's h depends on the renaming
    (the contrastive loss is what teaches it to ignore names)."""
    vocab, space = tiny
    torch.manual_seed(0)
    model = SATrEncoder(vocab.size, vocab.width, EncoderConfig(d=32, layers=2, heads=4, ff=64, k=8, token_dim=8)).eval()
    state = int(space.levels[3][0])
    names = renaming(space.objects, 6)
    ids, mask = _encode(vocab, space, state, names)
    perm = np.random.default_rng(1).permutation(ids.shape[1])
    ids_p, mask_p = _encode(vocab, space, state, names, perm)
    with torch.no_grad():
        h = model(ids, mask)[0]
        assert torch.allclose(h, model(ids_p, mask_p)[0], atol=1e-5)
        ids_r, _ = _encode(vocab, space, state, renaming(space.objects, 6, np.random.default_rng(5)))
        assert not torch.allclose(h, model(ids_r, mask)[0], atol=1e-5)
    # padding atoms change nothing
    padded, pmask = pad_batch([ids[0].numpy(), ids[0].numpy()[:3]], vocab.width)
    with torch.no_grad():
        assert torch.allclose(model(torch.from_numpy(padded), torch.from_numpy(pmask))[0][0], h[0], atol=1e-5)


def test_contrastive_loss_is_zero_for_equal_names_and_positive_otherwise(tiny):
    vocab, space = tiny
    torch.manual_seed(0)
    model = SATrEncoder(vocab.size, vocab.width, EncoderConfig(d=32, layers=2, heads=4, ff=64, k=8, token_dim=8))
    state = int(space.levels[1][0])
    ids, mask = _encode(vocab, space, state, renaming(space.objects, 6))
    ids_r, _ = _encode(vocab, space, state, renaming(space.objects, 6, np.random.default_rng(2)))
    same = contrastive_loss(model(ids, mask), model(ids, mask), mask, 8)
    assert float(same[0].detach()) == 0.0 and float(same[1].detach()) == 0.0
    l_att, l_hid = contrastive_loss(model(ids, mask), model(ids_r, mask), mask, 8)
    assert float(l_att.detach()) > 0 and float(l_hid.detach()) > 0
    (l_att + l_hid).backward()  # differentiable
    assert model.embed.tokens.weight.grad is not None


def test_contrastive_mean_reduction_is_the_sum_over_the_compared_elements(tiny):
    """``mean`` (Appendix E's MSE) divides the same squared differences by the number of compared
    elements (real query x key pairs x heads x layers; real tokens x k x layers), ``sum`` (the
    equations) by the batch size."""
    vocab, space = tiny
    torch.manual_seed(0)
    cfg = EncoderConfig(d=32, layers=2, heads=4, ff=64, k=8, token_dim=8)
    model = SATrEncoder(vocab.size, vocab.width, cfg)
    state = int(space.levels[1][0])
    ids, mask = _encode(vocab, space, state, renaming(space.objects, 6))
    ids_r, _ = _encode(vocab, space, state, renaming(space.objects, 6, np.random.default_rng(2)))
    with torch.no_grad():
        out_a, out_b = model(ids, mask), model(ids_r, mask)
    summed = contrastive_loss(out_a, out_b, mask, 8, "sum")
    mean = contrastive_loss(out_a, out_b, mask, 8, "mean")
    b, real = mask.shape[0], float(mask.sum())
    n_att = sum(float((mask[:, :, None] & mask[:, None, :]).sum()) * a.shape[1] for a in out_a[2])
    n_hid = real * 8 * len(out_a[1])
    assert float(mean[0]) == pytest.approx(float(summed[0]) * b / n_att, rel=1e-5)
    assert float(mean[1]) == pytest.approx(float(summed[1]) * b / n_hid, rel=1e-5)
    assert 0 < float(mean[0]) < float(summed[0]) and 0 < float(mean[1]) < float(summed[1])
    with pytest.raises(ValueError, match="contrastive_reduction"):
        contrastive_loss(out_a, out_b, mask, 8, "median")
    with pytest.raises(ValueError, match="contrastive_reduction"):
        TrainConfig(contrastive_reduction="avg")


def test_state_space_sampling_is_uniform_over_goal_distances(tiny):
    _, space = tiny
    assert space.distance.min() >= 0 and set(space.levels) == set(range(int(space.distance.max()) + 1))
    draws = sample_heuristic([space], 4000, np.random.default_rng(0))
    dists = np.array([d for _, _, d in draws])
    counts = np.bincount(dists, minlength=len(space.levels))
    assert all(space.distance[s] == d for _, s, d in draws)
    # uniform over distances (not over states): every level about 4000 / levels
    assert counts.min() > 0.7 * 4000 / len(space.levels)


def test_learning_rate_warms_up_then_decays():
    cfg = TrainConfig(steps=100, warmup=10, lr=1e-3, min_lr=1e-5)
    lrs = [learning_rate(s, cfg) for s in range(100)]
    assert lrs[0] < lrs[9] == pytest.approx(1e-3) and lrs[-1] == pytest.approx(1e-5, rel=0.05)
    assert all(a >= b for a, b in zip(lrs[10:], lrs[11:]))


def test_warmup_and_divergence_window_scale_with_the_run():
    """Warm-up and divergence window: a fraction below 1 scales with the run; 1 or more is a step
    count."""
    short = TrainConfig(steps=30, warmup=0.05, window=0.02, lr=1e-3)
    assert short.warmup_steps == 2 and short.window_steps == 1
    assert learning_rate(0, short) == pytest.approx(5e-4) and learning_rate(1, short) == pytest.approx(1e-3)
    assert TrainConfig(steps=160, warmup=0.05, window=0.02).window_steps == 3
    # the paper profile's absolute warm-up, against a schedule longer than the run
    paper = TrainConfig(steps=109_375, schedule_steps=500_000, warmup=2000)
    assert paper.warmup_steps == 2000 and TrainConfig(steps=100, schedule_steps=1000, warmup=0.1).warmup_steps == 100
    with pytest.raises(ValueError, match="transformers.train.warmup"):
        TrainConfig(warmup=-0.1)


def test_a_spike_that_stays_is_detected_in_a_short_run():
    """With the old fixed window (25 steps x plateau 4) a 160-step run could only diverge on a NaN;
    with ``window: 0.02`` a loss that jumps 100-fold at step 80 and stays is a divergence there."""
    model = torch.nn.Linear(2, 1)
    calls = []

    def step_loss(rng):
        calls.append(1)
        base = (model.weight ** 2).sum() * 0 + 1.0
        return base * (100.0 if len(calls) > 81 else 1.0 / len(calls))

    res = fit(model, step_loss, TrainConfig(steps=160, warmup=0.05, window=0.02, plateau=4, eval_every=10**9), seed=0)
    assert res.status == "diverged" and 78 <= res.diverged_at <= 84 and res.steps_run < 160
    old = fit(torch.nn.Linear(2, 1), lambda rng: torch.tensor(1.0, requires_grad=True),
              TrainConfig(steps=160, window=25, plateau=4, eval_every=10**9), seed=0)
    assert old.status == "ok"


def test_divergence_is_a_spike_that_stays_or_a_nan():
    low = [1.0 / (1 + i / 10) for i in range(200)]
    assert divergence_step(low, 25, 10.0, 3) is None
    spike_back = low[:100] + [50.0] * 25 + low[125:]          # spikes, then returns: not diverged
    assert divergence_step(spike_back, 25, 10.0, 3) is None
    plateau = low[:100] + [50.0] * 100                          # spikes and stays: diverged at 100
    assert divergence_step(plateau, 25, 10.0, 3) == 100
    assert divergence_step(low[:40] + [float("nan")], 25, 10.0, 3) == 40


def test_contrastive_training_makes_renamed_predictions_agree(tiny):
    """A tiny end-to-end check of the objective: trained with L_att + L_hid (Rename-One), the
    encoder's h* predictions for two renamings of the same state end closer together than
    without them, from the same initial weights and the same sample stream."""
    vocab, space = tiny
    cfg_model = EncoderConfig(d=32, layers=2, heads=4, ff=64, k=8, token_dim=8)
    gaps = {}
    for cl in (True, False):
        torch.manual_seed(0)
        model = SATrEncoder(vocab.size, vocab.width, cfg_model)
        cfg = TrainConfig(steps=150, batch=16, lr=3e-3, warmup=10, contrastive=cl, eval_every=10**9)
        res = train_heuristic(model, PairBatches(vocab, [space]), cfg, seed=0)
        assert res.status == "ok" and res.steps_run == 150 and res.state is not None
        model.eval()
        rng = np.random.default_rng(9)
        diffs = []
        with torch.no_grad():
            for state in range(len(space.states)):
                a = _encode(vocab, space, state, renaming(space.objects, 6, rng))
                b = _encode(vocab, space, state, renaming(space.objects, 6, rng))
                diffs.append(abs(float(model(*a)[0]) - float(model(*b)[0])))
        gaps[cl] = float(np.mean(diffs))
    assert gaps[True] < 0.5 * gaps[False], gaps


def test_a_nan_loss_is_a_recorded_divergence_not_a_crash(tiny):
    vocab, space = tiny
    torch.manual_seed(0)
    model = SATrEncoder(vocab.size, vocab.width, EncoderConfig(d=16, layers=1, heads=2, ff=32, k=4, token_dim=4))
    with torch.no_grad():
        model.readout[-1].bias.fill_(float("nan"))
    res = train_heuristic(model, PairBatches(vocab, [space]), TrainConfig(steps=20, batch=4, warmup=2), seed=0)
    assert res.status == "diverged" and res.diverged_at == 0 and res.state is None


# ---------------------------------------------------------------------------------------------
# PlanGPT token sequences (the baseline's input: sorted atoms, type-based renaming)
# ---------------------------------------------------------------------------------------------


def _gripper():
    from planarena.methods.transformers.plangpt import object_types

    static = ["(room rooma)", "(room roomb)", "(ball ball1)", "(ball ball2)", "(gripper left)", "(gripper right)"]
    state = ["(at-robby rooma)", "(at ball1 rooma)", "(at ball2 rooma)", "(free left)", "(free right)"]
    goal = ["(at ball1 roomb)", "(at ball2 roomb)"]
    objects = ["rooma", "roomb", "ball1", "ball2", "left", "right"]
    return object_types(objects, static), static, state, goal


def test_plangpt_types_come_from_unary_static_atoms_and_renaming_keeps_them():
    from planarena.methods.transformers.plangpt import object_types, type_renaming

    types, *_ = _gripper()
    assert types == {"rooma": "room", "roomb": "room", "ball1": "ball", "ball2": "ball",
                     "left": "gripper", "right": "gripper"}
    assert object_types(["a", "c"], ["(airport a)", "(location a)"]) == {"a": "airport+location", "c": "object"}
    fixed = type_renaming(types, 4)
    assert fixed["ball1"] == "ball_0" and fixed["ball2"] == "ball_1" and fixed["rooma"] == "room_0"
    rnd = type_renaming(types, 4, np.random.default_rng(0))
    assert all(rnd[o].startswith(types[o] + "_") for o in types)      # renamed within its type
    assert len(set(rnd.values())) == len(rnd)                          # injective
    with pytest.raises(ValueError, match="type 'ball' has 2 objects but only 1 names"):
        type_renaming(types, 1)


def test_plangpt_sequence_sorts_atoms_and_is_not_renaming_invariant():
    """The prompt is <start> sorted state atoms <goal> sorted goal atoms <action>; a plan adds its
    actions and <EOS>. Atom order in the input does not matter (PlanGPT pre-sorts), but the object
    names do: another renaming gives another token sequence (Limitation 1), where the SATr
    encoder's atom set only changes its object ids and its output is order-free by construction."""
    from planarena.methods.transformers.plangpt import PlanGPTVocabulary, encode_sequence, type_renaming

    types, static, state, goal = _gripper()
    vocab = PlanGPTVocabulary(("at", "at-robby", "ball", "carry", "free", "gripper", "room"),
                              ("drop", "move", "pick"), tuple(sorted(set(types.values()))), 4)
    names = type_renaming(types, 4)
    seq = encode_sequence(vocab, state + static, goal, names, plan=["(pick ball1 rooma left)"])
    toks = [vocab.tokens[i] for i in seq]
    assert toks[0] == "<start>" and toks[-1] == "<EOS>" and toks.count("<goal>") == toks.count("<action>") == 1
    assert toks[toks.index("<action>") + 1:-1] == ["pick", "ball_0", "room_0", "gripper_0"]
    assert toks[toks.index("<goal>") + 1:toks.index("<action>")] == ["at", "ball_0", "room_1", "at", "ball_1", "room_1"]
    shuffled = list(reversed(state + static))
    assert np.array_equal(encode_sequence(vocab, shuffled, goal, names), encode_sequence(vocab, state + static, goal, names))
    other = type_renaming(types, 4, np.random.default_rng(7))
    assert other != names
    assert not np.array_equal(encode_sequence(vocab, state + static, goal, other),
                              encode_sequence(vocab, state + static, goal, names))
    with pytest.raises(ValueError, match="not in the PlanGPT vocabulary"):
        encode_sequence(vocab, ["(lifted ball1)"], goal, names)
