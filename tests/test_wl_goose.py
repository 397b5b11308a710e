"""WL-GOOSE (``wl_goose``): ridge heuristic on the ``embed_wl`` features, eager GBFS in pymimir.

A tiny Blocksworld suite from ``tests/fixtures/wl``: three 3-block train problems with optimal
plans (pymimir breadth-first search) replayed into trajectories, one 4-block held-out problem; the
real ``embed_wl`` stage writes the WL cache the method trains on. The method gets a
:class:`~planarena.config.DeclaredLayout` limited to its ``data_deps``, as the runner gives it.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pymimir
import pytest

from planarena.config import DeclaredLayout, Layout
from planarena.core.io import write_jsonl
from planarena.core.pddl import load_problem
from planarena.core.problemset import ProblemEntry
from planarena.core.validation import validate_plan
from planarena.features.wl import WLEmbedder
from planarena.features.wl import run_stage as embed_wl
from planarena.methods.base import PlanningTask
from planarena.methods.wl_goose.method import WLGoose, fit_ridge, plan_labels

FIX = Path(__file__).parent / "fixtures" / "wl"
DOMAIN = "blocksworld"
SPLITS = {"train": ["bw-p-3-0", "bw-p-3-1", "bw-p-3-2"], "extrapolation": ["bw-p-4-0"]}
PARAMS = {"embed_wl": {"graph": "ilg", "iterations": 2, "feature_algorithm": "wl"},
          "evaluation": {"splits": ["extrapolation"], "seeds": [13], "time_limit": 10}}


def _entry(split: str, name: str, blocks: int) -> ProblemEntry:
    return ProblemEntry(DOMAIN, split, name, f"{DOMAIN}/{split}/{name}.pddl", "blocks", blocks, blocks, 0, "tests")


def _optimal_trajectory(domain_file: Path, problem_file: Path, entry: ProblemEntry) -> dict:
    """An optimal plan (breadth-first search) replayed into the trajectories format."""
    problem = load_problem(str(domain_file), str(problem_file))
    result = pymimir.brfs(problem, problem.get_initial_state())
    assert result.status == "solved"
    state = problem.get_initial_state()
    states = [sorted(str(a) for a in state.get_atoms(ignore_static=True))]
    for action in result.solution:
        state = action.apply(state)
        states.append(sorted(str(a) for a in state.get_atoms(ignore_static=True)))
    goal = sorted(str(lit.get_atom()) for lit in problem.get_goal_condition().get_literals())
    return {"domain": DOMAIN, "split": entry.split, "problem": entry.problem, "problem_file": entry.path,
            "plan_source": "brfs", "optimal": True, "actions": [str(a) for a in result.solution],
            "states": states, "static": [], "goal": goal}


@pytest.fixture(scope="module")
def suite(tmp_path_factory) -> Layout:
    """problems + train trajectories + the embed_wl cache, in a fresh data folder."""
    layout = Layout(tmp_path_factory.mktemp("goose") / "data")
    domain_file = layout.problems / DOMAIN / "domain.pddl"
    domain_file.parent.mkdir(parents=True)
    shutil.copy(FIX / "blocksworld-domain.pddl", domain_file)
    manifest, trajectories = [], []
    for split, names in SPLITS.items():
        for name in names:
            entry = _entry(split, name, 4 if "-4-" in name else 3)
            target = layout.problems / entry.path
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(FIX / f"{name}.pddl", target)
            manifest.append(entry.to_dict())
            if split == "train":
                trajectories.append(_optimal_trajectory(domain_file, target, entry))
    write_jsonl(layout.problems / "manifest.jsonl", manifest)
    write_jsonl(layout.trajectories / DOMAIN / "train.jsonl", trajectories)
    embed_wl(PARAMS, layout)
    return layout


def _method(layout: Layout, **config) -> WLGoose:
    declared = DeclaredLayout(root=layout.root, allowed=frozenset(WLGoose.data_deps), owner="method wl_goose")
    return WLGoose("wl_goose", {"method": "wl_goose", **config}, PARAMS, declared)


@pytest.fixture(scope="module")
def trained(suite) -> tuple[Layout, dict]:
    method = _method(suite)
    info = method.train(suite.models / "wl_goose")
    return suite, info


def _task(layout: Layout, name: str, time_limit: float = 10.0, split: str = "extrapolation",
          blocks: int = 4) -> PlanningTask:
    entry = _entry(split, name, blocks)
    return PlanningTask(entry, layout.problems / DOMAIN / "domain.pddl", layout.problems / entry.path, time_limit)


def _loaded(layout: Layout, **config) -> WLGoose:
    method = _method(layout, **config)
    method.load(layout.models / "wl_goose")
    return method


def test_ridge_and_labels():
    # labels: goal distance along each plan (plans of 2 and 1 actions)
    assert plan_labels(np.array([0, 0, 0, 1, 1]), np.array([0, 1, 2, 0, 1])).tolist() == [2, 1, 0, 1, 0]
    # an exactly linear target with a small penalty is recovered (primal N >= D and dual N < D)
    rng = np.random.default_rng(0)
    x = rng.integers(0, 5, size=(40, 6)).astype(float)
    y = x @ np.array([1.0, -2.0, 0.5, 0.0, 3.0, 1.0]) + 7.0
    w, b = fit_ridge(x, y, 1e-9)
    assert np.allclose(x @ w + b, y, atol=1e-5)
    w2, b2 = fit_ridge(x[:4], y[:4], 1e-9)
    assert np.allclose(x[:4] @ w2 + b2, y[:4], atol=1e-5)
    with pytest.raises(ValueError, match="alpha"):
        fit_ridge(x, y, 0.0)


def test_train_facts_and_files(trained):
    layout, info = trained
    assert info["trained"] and info["models"] == {DOMAIN: "ok"}
    facts = json.loads((layout.models / "wl_goose" / DOMAIN / "facts.json").read_text())
    dim = WLEmbedder.for_domain(layout, DOMAIN).dim
    n_states = sum(len(json.loads(line)["states"])
                   for line in (layout.trajectories / DOMAIN / "train.jsonl").read_text().splitlines())
    assert facts["dim"] == dim and facts["train_states"] == n_states and facts["train_plans"] == 3
    assert facts["optimal_plans"] == 3 and facts["alpha"] == 1.0 and info["parameters"] == dim + 1
    assert 0.9 < facts["train_r2"] <= 1.0 and facts["train_mae"] >= 0
    assert not any(k.endswith("_s") for k in facts) and set(info["domain_times_s"]) == {DOMAIN}
    # deterministic: retraining writes the same weights
    before = (layout.models / "wl_goose" / DOMAIN / "weights.json").read_bytes()
    _method(layout).train(layout.models / "wl_goose")
    assert (layout.models / "wl_goose" / DOMAIN / "weights.json").read_bytes() == before


def test_heuristic_orders_train_plan_states(trained):
    layout, _ = trained
    saved = json.loads((layout.models / "wl_goose" / DOMAIN / "weights.json").read_text())
    with np.load(layout.embeddings / "wl" / DOMAIN / "train.npz") as z:
        x, traj_index, step = z["states"], z["traj_index"], z["step"]
    h = x.astype(np.float64) @ np.array(saved["weights"]) + saved["bias"]
    labels = plan_labels(traj_index, step)
    # along every train plan the heuristic strictly decreases towards the goal
    for t in np.unique(traj_index):
        rows = np.flatnonzero(traj_index == t)
        assert np.all(np.diff(h[rows]) < 0), (t, h[rows])
    # and over all train states it ranks like the goal distance (Spearman rank correlation)
    rank = lambda v: np.argsort(np.argsort(v, kind="stable"), kind="stable")  # noqa: E731
    assert np.corrcoef(rank(h), rank(labels))[0, 1] > 0.9
    # it generalises: along the optimal plan of the held-out 4-block tower too (unseen size)
    entry = _entry("extrapolation", "bw-p-4-0", 4)
    held_out = _optimal_trajectory(layout.problems / DOMAIN / "domain.pddl", layout.problems / entry.path, entry)
    phi = WLEmbedder.for_domain(layout, DOMAIN).embed_states(layout.problems / entry.path, held_out["states"])
    h_held_out = phi.astype(np.float64) @ np.array(saved["weights"]) + saved["bias"]
    assert len(held_out["actions"]) == 6 and np.all(np.diff(h_held_out) < 0), h_held_out


def test_gbfs_solves_held_out_problem_valid_and_deterministic(trained):
    layout, _ = trained
    task = _task(layout, "bw-p-4-0")
    first = _loaded(layout).solve(task, seed=13)
    assert first.outcome == "solved", first.failure_reason
    verdict = validate_plan(task.domain_file, task.problem_file, first.plan)
    assert verdict.valid, verdict.reason
    assert first.extra["plan_length"] == len(first.plan) >= 6  # 4-block tower from the table: 6 moves
    assert first.extra["expansions"] >= len(first.plan) and first.extra["evaluations"] > 0
    # same params, same plan: in the same method after another search, and in a fresh instance
    method = _loaded(layout)
    method.solve(_task(layout, "bw-p-3-2", split="train", blocks=3), seed=13)
    again = method.solve(task, seed=14)
    assert again.plan == first.plan and again.extra == first.extra
    assert _loaded(layout).solve(task, seed=13).plan == first.plan


def test_learned_heuristic_beats_a_flat_one(trained, tmp_path):
    """The same search with the weights zeroed (every state h = b: uninformed) expands more."""
    layout, _ = trained
    task = _task(layout, "bw-p-4-0")
    learned = _loaded(layout).solve(task, seed=13)
    flat_dir = tmp_path / "flat"
    shutil.copytree(layout.models / "wl_goose", flat_dir)
    weights = json.loads((flat_dir / DOMAIN / "weights.json").read_text())
    weights["weights"] = [0.0] * len(weights["weights"])
    (flat_dir / DOMAIN / "weights.json").write_text(json.dumps(weights))
    flat = _method(layout)
    flat.load(flat_dir)
    uninformed = flat.solve(task, seed=13)
    assert uninformed.outcome == "solved"
    assert learned.extra["expansions"] < uninformed.extra["expansions"]


def test_time_limit_and_expansion_cap(trained, tmp_path):
    layout, _ = trained
    # far too little time: a timeout outcome, not a crash (before the search or inside pymimir's;
    # with 10 s this 16-block tower takes ~850 expansions, ~0.15 s)
    blocks = [f"b{i}" for i in range(1, 17)]
    tower = " ".join(f"(on {a} {b})" for a, b in zip(blocks, blocks[1:]))
    big = tmp_path / "bw-16.pddl"
    big.write_text(f"(define (problem bw-16) (:domain blocksworld) (:objects {' '.join(blocks)})\n"
                   f"  (:init (handempty) {' '.join(f'(ontable {b}) (clear {b})' for b in blocks)})\n"
                   f"  (:goal (and {tower})))\n")
    entry = _entry("extrapolation", "bw-16", 16)
    method = _loaded(layout)
    for limit in (1e-9, 0.003):
        res = method.solve(PlanningTask(entry, layout.problems / DOMAIN / "domain.pddl", big, limit), seed=13)
        assert res.outcome == "timeout" and res.plan is None, (limit, res)
        assert "time limit" in res.failure_reason
    capped = _loaded(layout, max_expansions=1).solve(_task(layout, "bw-p-4-0"), seed=13)
    assert capped.outcome == "unsolved" and "max_expansions=1" in capped.failure_reason
    assert capped.extra["expansions"] == 1


def test_config_errors_and_no_model(trained, tmp_path):
    layout, _ = trained
    with pytest.raises(ValueError, match="methods.wl_goose.alpha"):
        _method(layout, alpha=0)
    with pytest.raises(ValueError, match="methods.wl_goose.max_expansions"):
        _method(layout, max_expansions=-3)
    untrained = _method(layout)
    untrained.load(tmp_path / "nothing")
    res = untrained.solve(_task(layout, "bw-p-4-0"), seed=13)
    assert res.outcome == "error" and "run the train stage" in res.failure_reason
    traits = WLGoose.report_traits({"alpha": 1.0}, PARAMS)
    assert traits.role == "model" and traits.horizon is None and "alpha=1.0" in traits.info[0][1]
