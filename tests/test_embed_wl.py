"""Tests of the ``embed_wl`` stage (wlplan ILG WL histograms) on a tiny Blocksworld problem set.

Trajectories are produced by replaying hand-written valid plans with pymimir, in the contract
format of :mod:`planarena.core.trajectories`, so the stage sees exactly what it sees in the pipeline.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pymimir
import pytest

from planarena.config import Layout
from planarena.core.io import write_jsonl
from planarena.core.problemset import ProblemEntry
from planarena.features.wl import (
    PDDLCache,
    WLEmbedder,
    WLEmbeddingError,
    run_stage,
    wl_settings,
)

FIX = Path(__file__).parent / "fixtures" / "wl"
DOMAIN = "blocksworld"
PARAMS = {"embed_wl": {"graph": "ilg", "iterations": 2, "feature_algorithm": "wl"}}

# (split, problem fixture, plan). p-3-0's plan revisits its initial state (s2 == s0) on purpose.
PLANS = {
    "train": [
        ("bw-p-3-0", ["(pick-up b1)", "(put-down b1)", "(pick-up b2)", "(stack b2 b3)",
                      "(pick-up b1)", "(stack b1 b2)"]),
        ("bw-p-3-1", ["(unstack b3 b1)", "(put-down b3)", "(pick-up b1)", "(stack b1 b3)"]),
    ],
    # a 4-block tower and a 4-block "holding" state never occur in train: unseen colours
    "extrapolation": [
        ("bw-p-4-0", ["(pick-up b3)", "(stack b3 b4)", "(pick-up b2)", "(stack b2 b3)",
                      "(pick-up b1)", "(stack b1 b2)"]),
    ],
}
# in the manifest but without trajectories: must give empty arrays
MANIFEST_ONLY = {"validation": ["bw-p-3-2"]}


def replay(domain_file: Path, problem_file: Path, plan: list[str]) -> tuple[list, list, list]:
    """Replay ``plan`` with pymimir: (states as sorted fluent atoms, sorted statics, goal atoms)."""
    domain = pymimir.Domain(str(domain_file))
    problem = pymimir.Problem(domain, str(problem_file))
    state = problem.get_initial_state()
    states = [sorted(str(a) for a in state.get_atoms(ignore_static=True))]
    for name in plan:
        actions = {str(a): a for a in state.generate_applicable_actions()}
        assert name in actions, f"{name} not applicable in {states[-1]}"
        state = actions[name].apply(state)
        states.append(sorted(str(a) for a in state.get_atoms(ignore_static=True)))
    static = sorted({str(a) for a in state.get_atoms()} - set(states[-1]))
    goal = sorted(str(lit.get_atom()) for lit in problem.get_goal_condition().get_literals())
    return states, static, goal


def build_dataset(root: Path, plans: dict = PLANS, manifest_only: dict = MANIFEST_ONLY) -> Layout:
    """Write ``root/problems`` (domain, problems, manifest) and ``root/trajectories``."""
    layout = Layout(root)
    pdir = layout.problems / DOMAIN
    pdir.mkdir(parents=True)
    shutil.copy(FIX / "blocksworld-domain.pddl", pdir / "domain.pddl")
    manifest, trajectories = [], {}
    listed = [(s, name, plan) for s, items in plans.items() for name, plan in items]
    listed += [(s, name, None) for s, names in manifest_only.items() for name in names]
    for split, name, plan in listed:
        rel = f"{DOMAIN}/{split}/{name}.pddl"
        (layout.problems / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(FIX / f"{name}.pddl", layout.problems / rel)
        n_obj = 4 if "-4-" in name else 3
        manifest.append(
            ProblemEntry(DOMAIN, split, name, rel, "blocks", n_obj, n_obj, 0, "tests").to_dict()
        )
        if plan is None:
            continue
        states, static, goal = replay(pdir / "domain.pddl", layout.problems / rel, plan)
        trajectories.setdefault(split, []).append(
            {"domain": DOMAIN, "split": split, "problem": name, "problem_file": rel,
             "plan_source": "hand", "optimal": False, "actions": plan, "states": states,
             "static": static, "goal": goal}
        )
    write_jsonl(layout.problems / "manifest.jsonl", manifest)
    for split, rows in trajectories.items():
        write_jsonl(layout.trajectories / DOMAIN / f"{split}.jsonl", rows)
    return layout


def load_split(layout: Layout, split: str) -> dict:
    with np.load(layout.embeddings / "wl" / DOMAIN / f"{split}.npz") as z:
        return {k: z[k] for k in z.files}


def traj_rows(layout: Layout, split: str) -> list[dict]:
    path = layout.trajectories / DOMAIN / f"{split}.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Layout:
    layout = build_dataset(tmp_path_factory.mktemp("wl") / "data")
    run_stage(PARAMS, layout)
    return layout


def test_outputs_and_shapes(built):
    out = built.embeddings / "wl" / DOMAIN
    meta = json.loads((out / "meta.json").read_text())
    embedder = WLEmbedder.for_domain(built, DOMAIN)
    D = embedder.dim
    assert meta["D"] == D > 0
    assert meta["iterations"] == 2 and meta["graph"] == "ilg"
    assert meta["vocabulary_size"] == D  # no pruning
    for split, items in PLANS.items():
        z = load_split(built, split)
        rows = traj_rows(built, split)
        n = sum(len(r["actions"]) + 1 for r in rows)
        assert z["states"].shape == (n, D)
        assert z["goals"].shape == (len(rows), D)
        assert list(z["problems"]) == [name for name, _ in items]
        assert list(z["traj_index"]) == [i for i, r in enumerate(rows) for _ in r["states"]]
        assert list(z["step"]) == [t for r in rows for t in range(len(r["states"]))]
        assert np.all(z["states"] >= 0) and np.all(z["states"] == np.round(z["states"]))
    assert meta["train_states"] == sum(len(p) + 1 for _, p in PLANS["train"])


def test_split_without_trajectories_gives_empty_arrays(built):
    z = load_split(built, "validation")
    D = WLEmbedder.for_domain(built, DOMAIN).dim
    assert z["states"].shape == (0, D) and z["goals"].shape == (0, D)
    assert z["traj_index"].shape == z["step"].shape == z["problems"].shape == (0,)


def test_identical_states_identical_rows_different_states_differ(built):
    z = load_split(built, "train")
    rows = traj_rows(built, "train")
    first = z["states"][z["traj_index"] == 0]
    # p-3-0: pick-up b1; put-down b1 returns to s0
    assert rows[0]["states"][0] == rows[0]["states"][2]
    np.testing.assert_array_equal(first[0], first[2])
    for i, r in enumerate(rows):
        block = z["states"][z["traj_index"] == i]
        distinct_states = {tuple(s) for s in r["states"]}
        distinct_rows = {tuple(row) for row in block}
        assert len(distinct_rows) == len(distinct_states)


def test_histogram_counts_ilg_nodes(built):
    """Every node gets one colour per WL round: on train (all colours known) a row sums to
    (iterations + 1) * (objects + true atoms + unachieved goal atoms)."""
    z = load_split(built, "train")
    rows = traj_rows(built, "train")
    k = 2
    for i, r in enumerate(rows):
        block = z["states"][z["traj_index"] == i]
        n_obj = 3
        for t, state in enumerate(r["states"]):
            unachieved = [g for g in r["goal"] if g not in state]
            assert block[t].sum() == (k + 1) * (n_obj + len(state) + len(unachieved))


def test_vocabulary_from_train_only(built, tmp_path):
    """Test splits never change the vocabulary; larger unseen states still embed with the same D."""
    meta = json.loads((built.embeddings / "wl" / DOMAIN / "meta.json").read_text())
    assert sum(meta["splits"]["extrapolation"]["unseen_colour_occurrences"]) > 0
    assert sum(meta["splits"]["train"]["unseen_colour_occurrences"]) == 0
    other = build_dataset(tmp_path / "data", plans={"train": PLANS["train"]}, manifest_only={})
    run_stage(PARAMS, other)
    fg_a = (built.embeddings / "wl" / DOMAIN / "feature_generator.json").read_text()
    fg_b = (other.embeddings / "wl" / DOMAIN / "feature_generator.json").read_text()
    assert fg_a == fg_b
    z = load_split(built, "extrapolation")
    D = WLEmbedder.for_domain(built, DOMAIN).dim
    assert z["states"].shape[1] == D
    # the 4-tower final state has colours the 3-block train set never produced: they are dropped,
    # so its row sums to less than (k+1) * nodes
    n_nodes = 4 + len(traj_rows(built, "extrapolation")[0]["states"][-1])
    assert z["states"][-1].sum() < 3 * n_nodes


def test_deterministic(built, tmp_path):
    again = Layout(tmp_path / "data")
    shutil.copytree(built.problems, again.problems)
    shutil.copytree(built.trajectories, again.trajectories)
    run_stage(PARAMS, again)
    for split in ("train", "validation", "extrapolation"):
        a, b = load_split(built, split), load_split(again, split)
        assert a.keys() == b.keys()
        for key in a:
            np.testing.assert_array_equal(a[key], b[key])
    fg = "wl/blocksworld/feature_generator.json"
    assert (built.embeddings / fg).read_text() == (again.embeddings / fg).read_text()


def test_embedder_reproduces_stage_rows(built):
    embedder = WLEmbedder.for_domain(built, DOMAIN)
    for split in PLANS:
        z = load_split(built, split)
        for i, r in enumerate(traj_rows(built, split)):
            pf = built.problems / r["problem_file"]
            np.testing.assert_array_equal(
                embedder.embed_states(pf, r["states"]), z["states"][z["traj_index"] == i]
            )
            np.testing.assert_array_equal(embedder.embed_goal(pf), z["goals"][i])
    assert embedder.embed_states(built.problems / r["problem_file"], []).shape == (0, embedder.dim)


def test_goal_embedding_is_goal_state_ilg(built):
    """phi(g) = phi(G_{g,g}): equal to embedding the state made of the goal atoms."""
    embedder = WLEmbedder.for_domain(built, DOMAIN)
    r = traj_rows(built, "train")[0]
    pf = built.problems / r["problem_file"]
    np.testing.assert_array_equal(embedder.embed_goal(pf), embedder.embed_states(pf, [r["goal"]])[0])
    assert embedder.embed_goal(pf).sum() > 0


def test_missing_or_empty_train_split_raises(tmp_path):
    layout = build_dataset(tmp_path / "data")
    train = layout.trajectories / DOMAIN / "train.jsonl"
    train.write_text("")
    with pytest.raises(WLEmbeddingError, match=r"blocksworld.*train\.jsonl"):
        run_stage(PARAMS, layout)
    train.unlink()
    with pytest.raises(WLEmbeddingError, match=r"blocksworld.*train\.jsonl"):
        run_stage(PARAMS, layout)


def test_train_not_planned_skips_the_domain_with_a_reason(tmp_path):
    """`planners.splits` without train (e.g. a claim of R-GNN policies, which learn without
    reference plans): no vocabulary to collect, so the domain is skipped and says why; with train
    planned, the same empty train split is still an error (test above)."""
    layout = build_dataset(tmp_path / "data")
    (layout.trajectories / DOMAIN / "train.jsonl").write_text("")
    run_stage({**PARAMS, "planners": {"splits": ["test"]}}, layout)
    meta = json.loads((layout.embeddings / "wl" / DOMAIN / "meta.json").read_text())
    assert "excludes train" in meta["skipped"]
    assert not (layout.embeddings / "wl" / DOMAIN / "feature_generator.json").exists()
    with pytest.raises(WLEmbeddingError, match=r"train\.jsonl"):
        run_stage({**PARAMS, "planners": {"splits": ["train", "test"]}}, layout)


def test_bad_inputs_name_the_file(built, tmp_path):
    bad = tmp_path / "broken.pddl"
    bad.write_text("(define (problem broken) (:domain blocksworld) (:objects b1 (:init")
    embedder = WLEmbedder.for_domain(built, DOMAIN)
    with pytest.raises(WLEmbeddingError, match="broken.pddl"):
        embedder.embed_states(bad, [["(handempty)"]])
    pf = built.problems / traj_rows(built, "train")[0]["problem_file"]
    with pytest.raises(WLEmbeddingError, match="floating"):
        embedder.embed_states(pf, [["(floating b1)"]])
    with pytest.raises(WLEmbeddingError, match="b9"):
        embedder.embed_states(pf, [["(clear b9)"]])


def test_static_atoms_enter_the_graph(tmp_path):
    """Same fluent state, different static connectivity: different embeddings."""
    dom = FIX / "grid-domain.pddl"
    line, ring = FIX / "grid-line.pddl", FIX / "grid-ring.pddl"
    assert PDDLCache(dom).static_predicates == {"connected"}
    state = ["(at-robot c1)", "(visited c1)"]
    emb = WLEmbedder.fit(dom, [(line, [state]), (ring, [state])], wl_settings(PARAMS))
    x_line = emb.embed_states(line, [state])[0]
    x_ring = emb.embed_states(ring, [state])[0]
    assert not np.array_equal(x_line, x_ring)
    # 3 objects + 2 fluent atoms + 4 or 6 static atoms + 2 unachieved goals, 3 colourings each
    assert x_line.sum() == 3 * (3 + 2 + 4 + 2) and x_ring.sum() == 3 * (3 + 2 + 6 + 2)
    emb.save(tmp_path / "fg.json")
    again = WLEmbedder.load(tmp_path / "fg.json", dom)
    np.testing.assert_array_equal(again.embed_states(ring, [state, state]), np.stack([x_ring] * 2))


def test_bad_params_raise_clear_errors(tmp_path):
    from planarena.config import ConfigError

    layout = build_dataset(tmp_path / "data", plans={"train": PLANS["train"]}, manifest_only={})
    with pytest.raises(WLEmbeddingError, match="embed_wl"):
        run_stage({"embed_wl": {"graph": "no-such-graph"}}, layout)
    with pytest.raises(ConfigError, match="embed_wl.iterations"):
        wl_settings({"embed_wl": {"iterations": -1}})
    assert wl_settings({}) == wl_settings({"embed_wl": {}})  # every key has a default


def test_mimir_states_of_a_reparsed_problem(built):
    """pymimir numbers atoms per parsed problem, in the order it meets them: the same file parsed
    twice and explored in different orders gives different indices. The index cache of a problem
    file follows the pymimir problem it was filled from, so a re-parse (e.g. after
    ``load_problem``'s cache evicted the file) still embeds each state as its atoms say."""
    from planarena.core.pddl import atoms_of, load_domain

    embedder = WLEmbedder.for_domain(built, DOMAIN)
    r = traj_rows(built, "train")[0]
    pf = built.problems / r["problem_file"]
    domain = load_domain(str(built.problems / DOMAIN / "domain.pddl"))

    def explore(reverse: bool) -> list:
        problem = pymimir.Problem(domain, str(pf))
        frontier, seen = [problem.get_initial_state()], []
        while frontier and len(seen) < 40:
            s = frontier.pop(0)
            seen.append(s)
            actions = sorted(s.generate_applicable_actions(), key=str, reverse=reverse)
            frontier.extend(a.apply(s) for a in actions)
        return problem, seen

    for reverse in (False, True):
        problem, states = explore(reverse)
        got = embedder.embed_mimir_states([(pf, problem, states)])
        want = embedder.embed_states(pf, [atoms_of(s) for s in states])
        np.testing.assert_array_equal(got, want)


def test_max_features_reduces_wl_iterations_to_the_deepest_that_fits(built, tmp_path):
    """embed_wl.max_features: a vocabulary over the cap is collected again at the most iterations
    whose vocabulary fits; the rows are the exact WL histograms of that depth, and meta.json says so."""
    from planarena.config import ConfigError
    from planarena.features.wl import fewer_iterations

    full = json.loads((built.embeddings / "wl" / DOMAIN / "meta.json").read_text())
    counts = full["colours_per_iteration"]
    assert len(counts) == 3 and sum(counts) == full["D"] and full["iterations_reduced"] is None
    assert fewer_iterations(counts, None) == (2, None)
    assert fewer_iterations(counts, sum(counts)) == (2, None)
    used, reason = fewer_iterations(counts, counts[0] + counts[1])
    assert used == 1 and f"{sum(counts):,}" in reason and "embed_wl.max_features" in reason
    assert fewer_iterations(counts, 1)[0] == 0  # iteration 0 is kept even over the cap

    layout = build_dataset(tmp_path / "data")
    run_stage({"embed_wl": {**PARAMS["embed_wl"], "max_features": counts[0] + counts[1]}}, layout)
    meta = json.loads((layout.embeddings / "wl" / DOMAIN / "meta.json").read_text())
    assert (meta["iterations"], meta["iterations_requested"]) == (1, 2)
    assert meta["D"] == counts[0] + counts[1] and meta["iterations_reduced"] == reason
    one = build_dataset(tmp_path / "one")
    run_stage({"embed_wl": {**PARAMS["embed_wl"], "iterations": 1}}, one)
    assert np.array_equal(load_split(layout, "train")["states"], load_split(one, "train")["states"])
    with pytest.raises(ConfigError, match="embed_wl.max_features"):
        wl_settings({"embed_wl": {"max_features": 0}})
