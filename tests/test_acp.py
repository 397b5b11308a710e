"""The ACPBench transition datasets of EmbedPlan (planarena.datasets.acp): state spaces, optimal-plan counts
and sampling, file format, skips, resume, loaders, params."""

from __future__ import annotations

import copy
import gzip
import json
from pathlib import Path

import pytest
import yaml
from conftest import ROOT, needs_shared

from planarena.config import ConfigError, Layout, resolve_profile
from planarena.core.pddl import atoms_of, goal_atoms, replay
from planarena.datasets import acp


def _params(profile: str = "default") -> dict:
    doc = yaml.safe_load((ROOT / "params.yaml").read_text())
    doc["profile"] = profile
    return copy.deepcopy(resolve_profile(doc))


def _tiny_params(**acp_overrides) -> dict:
    """Two domains, two small problems each: fast."""
    params = _params("default")
    params["acp"].update({
        "domains": ["blocksworld", "ferry"], "problems": 2, "max_attempts": 6, "max_states": 1000,
        "min_states": 0, "max_plans": 5,
    })
    params["acp"]["generators"]["blocksworld"] = {"configs": [{"num_blocks": 4}]}
    params["acp"]["generators"]["ferry"] = {"configs": [{"num_cars": 3, "num_locations": 3}]}
    params["acp"].update(acp_overrides)
    return params


def _write_problem(tmp_path: Path, domain: str, kwargs: dict, seed: int, name: str = "p") -> tuple[Path, Path]:
    dom = tmp_path / f"{domain}-domain.pddl"
    dom.write_text(acp.domain_text(domain))
    prob = tmp_path / f"{domain}-{name}.pddl"
    prob.write_text(acp.generate_problem_text(domain, kwargs, seed))
    return dom, prob


def _record(tmp_path, domain, kwargs, seed, max_states=5000, max_plans=100, name="p"):
    dom, prob = _write_problem(tmp_path, domain, kwargs, seed, name)
    problem = acp.parse_problem(dom, prob)
    rec = acp.build_problem_record(problem, domain=domain, name=name, seed=seed, generator=kwargs,
                                   max_states=max_states, max_plans=max_plans)
    return problem, rec


# --------------------------------------------------------------------------------------------
# State spaces and optimal plans
# --------------------------------------------------------------------------------------------


def test_blocksworld_three_blocks_has_22_states(tmp_path):
    """The 4-operator Blocksworld with 3 blocks: 13 arm-empty states + 9 holding states = 22."""
    dom, prob = _write_problem(tmp_path, "blocksworld", {"num_blocks": 3}, 1)
    space = acp.expand_state_space(acp.parse_problem(dom, prob), max_states=1000)
    assert space.n_states == 22
    assert space.n_transitions == 42
    assert space.initial == 0
    assert min(space.goal_distance) == 0 and -1 not in space.goal_distance  # no dead ends
    assert len({tuple(s) for s in space.states}) == 22  # distinct fluent atom sets
    assert all(s == sorted(s) for s in space.states)


def _brute_force_optimal_plans(problem) -> tuple[int, set[tuple[str, ...]]]:
    """Iterative deepening over action sequences from the initial state, with pymimir's successor
    generator only (no state space, no goal distances); sequences memoised per (state, depth)."""
    goal = problem.get_goal_condition().get_literals()
    memo: dict = {}

    def sequences(state, depth):
        key = (tuple(atoms_of(state)), depth)
        if key not in memo:
            if depth == 0:
                memo[key] = {()} if state.literals_hold(goal) else set()
            else:
                memo[key] = {(str(ga),) + rest for ga in state.generate_applicable_actions()
                             for rest in sequences(ga.apply(state), depth - 1)}
        return memo[key]

    for length in range(0, 16):
        found = sequences(problem.get_initial_state(), length)
        if found:
            return length, found
    raise AssertionError("no plan of length < 16")


@pytest.mark.parametrize("domain,kwargs,seed", [
    ("blocksworld", {"num_blocks": 3}, 1),
    ("blocksworld", {"num_blocks": 3}, 4),
    ("ferry", {"num_cars": 2, "num_locations": 3}, 0),
    ("ferry", {"num_cars": 2, "num_locations": 3}, 3),
    ("logistics", {"num_cities": 2, "city_size": 2, "num_packages": 1, "num_airplanes": 1}, 2),
])
def test_optimal_plan_count_and_plans_equal_brute_force(tmp_path, domain, kwargs, seed):
    problem, rec = _record(tmp_path, domain, kwargs, seed, max_plans=10_000)
    length, plans = _brute_force_optimal_plans(problem)
    assert rec["optimal_cost"] == length
    assert rec["n_optimal_plans"] == len(plans)
    stored = {tuple(rec["actions"][a] for _, a, _ in plan) for plan in rec["plans"]}
    assert stored == plans  # count <= max_plans: all optimal plans, each once
    assert len(rec["plans"]) == len(plans)


def test_some_brute_force_case_has_several_optimal_plans(tmp_path):
    _, rec = _record(tmp_path, "ferry", {"num_cars": 2, "num_locations": 3}, 3, max_plans=10_000)
    assert rec["n_optimal_plans"] > 1


def test_stored_plans_replay_to_goal_and_match_states_and_applicable(tmp_path):
    problem, rec = _record(tmp_path, "logistics",
                           {"num_cities": 2, "city_size": 2, "num_packages": 2, "num_airplanes": 1}, 2,
                           max_plans=20)
    assert len(rec["plans"]) == min(20, rec["n_optimal_plans"]) > 1
    state_id = {tuple(s): i for i, s in enumerate(rec["states"])}
    assert len(state_id) == len(rec["states"])
    assert atoms_of(problem.get_initial_state()) == rec["states"][rec["initial"]]
    assert rec["optimal_cost"] == rec["goal_distance"][rec["initial"]]
    for plan in rec["plans"]:
        assert len(plan) == rec["optimal_cost"]
        states, _ = replay(problem, [rec["actions"][a] for _, a, _ in plan], source="stored plan")
        ids = [state_id[tuple(atoms_of(s))] for s in states]
        assert ids == [plan[0][0]] + [t for _, _, t in plan]
        assert ids[0] == rec["initial"]
        assert set(rec["goal"]) <= set(rec["states"][ids[-1]])  # ends in a goal state
        assert rec["goal_distance"][ids[-1]] == 0
        for (s, a, t), state in zip(plan, states):
            assert rec["goal_distance"][t] == rec["goal_distance"][s] - 1
            edges = rec["applicable"][str(s)]
            assert [a, t] in edges
            # every applicable ground action of the state, with its successor
            expected = sorted([rec["actions"].index(str(ga)), state_id[tuple(atoms_of(ga.apply(state)))]]
                              for ga in state.generate_applicable_actions())
            assert edges == expected
    on_plan = {str(s) for plan in rec["plans"] for s, _, _ in plan}
    assert set(rec["applicable"]) == on_plan
    used = {a for edges in rec["applicable"].values() for a, _ in edges}
    assert used == set(range(len(rec["actions"]))) and rec["actions"] == sorted(rec["actions"])


def test_goal_distances_match_backward_bfs_and_dead_ends_are_minus_one(tmp_path):
    """Floortile has dead ends (painted tiles block robots)."""
    dom, prob = _write_problem(tmp_path, "floortile", {"num_rows": 1, "num_columns": 3, "num_robots": 1}, 0)
    problem = acp.parse_problem(dom, prob)
    space = acp.expand_state_space(problem, max_states=2000)
    goal = set(goal_atoms(problem))
    preds: dict[int, set[int]] = {i: set() for i in range(space.n_states)}
    for s in range(space.n_states):
        for _, t in space.successors(s):
            preds[t].add(s)
    dist = {s: 0 for s in range(space.n_states) if goal <= set(space.states[s])}
    frontier = list(dist)
    while frontier:
        nxt = []
        for t in frontier:
            for s in preds[t]:
                if s not in dist:
                    dist[s] = dist[t] + 1
                    nxt.append(s)
        frontier = nxt
    assert space.goal_distance == [dist.get(s, -1) for s in range(space.n_states)]
    assert -1 in space.goal_distance


def test_sampling_is_uniform_distinct_and_deterministic(tmp_path):
    kwargs = {"num_cities": 2, "city_size": 2, "num_packages": 2, "num_airplanes": 1}
    _, a = _record(tmp_path, "logistics", kwargs, 2, max_plans=7)
    _, b = _record(tmp_path, "logistics", kwargs, 2, max_plans=7, name="q")
    _, c = _record(tmp_path, "logistics", kwargs, 2, max_plans=10_000, name="all")
    assert a["n_optimal_plans"] == c["n_optimal_plans"] == len(c["plans"]) == 624
    assert len(a["plans"]) == 7 and len({json.dumps(p) for p in a["plans"]}) == 7
    assert a["plans"] == b["plans"] and a["actions"] == b["actions"]
    every = {tuple(c["actions"][x] for _, x, _ in p) for p in c["plans"]}
    sampled = {tuple(a["actions"][x] for _, x, _ in p) for p in a["plans"]}
    assert sampled <= every
    # the plan ranks depend on the seed; duplicates never drawn
    assert acp.select_plan_ranks(10**40, 5, 1) == acp.select_plan_ranks(10**40, 5, 1)
    assert acp.select_plan_ranks(10**40, 5, 1) != acp.select_plan_ranks(10**40, 5, 2)
    ranks = acp.select_plan_ranks(101, 100, 0)
    assert ranks == sorted(set(ranks)) and len(ranks) == 100
    assert acp.select_plan_ranks(4, 100, 0) == [0, 1, 2, 3]


def test_unranking_is_a_bijection_onto_optimal_plans(tmp_path):
    dom, prob = _write_problem(tmp_path, "ferry", {"num_cars": 2, "num_locations": 3}, 3)
    space = acp.expand_state_space(acp.parse_problem(dom, prob), max_states=1000)
    dag = acp.optimal_plan_dag(space.initial, space.goal_distance, space.successors)
    counts = acp.count_optimal_plans(space.initial, space.goal_distance, dag)
    total = counts[space.initial]
    plans = [tuple(acp.unrank_plan(r, space.initial, space.goal_distance, dag, counts)) for r in range(total)]
    assert len(set(plans)) == total
    assert plans == sorted(plans, key=lambda p: [(a, t) for _, a, t in p])  # rank order = lexicographic


def test_too_large_state_space_is_skipped_quickly(tmp_path):
    import time

    dom, prob = _write_problem(tmp_path, "blocksworld", {"num_blocks": 9}, 0)  # ~ 10^8 states
    start = time.perf_counter()
    with pytest.raises(acp.SkipProblem, match="max_states=200"):
        acp.expand_state_space(acp.parse_problem(dom, prob), max_states=200)
    assert time.perf_counter() - start < 5  # stops early instead of expanding everything


def test_unsolvable_problem_is_skipped(tmp_path):
    dom = tmp_path / "domain.pddl"
    dom.write_text(acp.domain_text("blocksworld"))
    prob = tmp_path / "cycle.pddl"
    prob.write_text("""(define (problem cycle) (:domain blocks)
      (:objects b1 b2)
      (:init (clear b1) (clear b2) (ontable b1) (ontable b2) (handempty))
      (:goal (and (on b1 b2) (on b2 b1))))""")
    with pytest.raises(acp.SkipProblem, match="no goal state is reachable"):
        acp.expand_state_space(acp.parse_problem(dom, prob), max_states=100)


def test_malformed_problem_names_the_file(tmp_path):
    dom = tmp_path / "domain.pddl"
    dom.write_text(acp.domain_text("ferry"))
    bad = tmp_path / "bad.pddl"
    bad.write_text("(define (problem x) (:domain ferry) (:init (")
    with pytest.raises(ValueError, match="bad.pddl"):
        acp.parse_problem(dom, bad)


# --------------------------------------------------------------------------------------------
# The stage
# --------------------------------------------------------------------------------------------


def test_stage_writes_format_summary_and_manifest(tmp_path):
    layout = Layout(root=tmp_path / "data")
    manifest_path = acp.run_stage(_tiny_params(), layout)
    manifest = json.loads(manifest_path.read_text())
    assert manifest["domains"] == ["blocksworld", "ferry"]
    for domain in manifest["domains"]:
        ddir = layout.acp / domain
        assert (ddir / "domain.pddl").exists()
        names = manifest["problems"][domain]
        assert len(names) == 2 and len(set(names)) == 2
        summary = json.loads((ddir / "summary.json").read_text())
        assert summary["problems"] == 2
        assert summary["actions"] == {"blocksworld": 4, "ferry": 3}[domain]
        total_states = total_tr = total_space = total_plans = 0
        for name in names:
            with gzip.open(ddir / f"{name}.json.gz", "rt") as fh:
                rec = json.load(fh)
            assert set(rec) == set(acp.FILE_KEYS)
            assert (ddir / rec["problem_file"]).exists() and rec["problem_file"] == f"problems/{name}.pddl"
            assert rec["domain"] == domain and rec["problem"] == name
            assert len(rec["goal_distance"]) == len(rec["states"]) == rec["n_states_space"]
            total_states += rec["n_states_space"]
            total_tr += len({tuple(t) for p in rec["plans"] for t in p} | {tuple(t) for t in rec["space_transitions"]})
            total_space += rec["n_transitions_space"]
            total_plans += len(rec["plans"])
        assert (summary["states"], summary["transitions"], summary["transitions_space"], summary["plans"]) == (
            total_states, total_tr, total_space, total_plans)
        assert "wall_time_s" not in summary and isinstance(summary["skipped"], list)
    assert acp.domains_available(layout.acp) == ["blocksworld", "ferry"]


def test_stage_skips_over_max_states_with_reason_and_keeps_going(tmp_path):
    params = _tiny_params(max_states=130, max_attempts=3)  # blocksworld-4: 125 states, ferry-3-3: 162
    layout = Layout(root=tmp_path / "data")
    acp.run_stage(params, layout)
    ferry = json.loads((layout.acp / "ferry" / "summary.json").read_text())
    assert ferry["problems"] == 0 and ferry["attempted"] == 3
    assert all("max_states=130" in s["reason"] for s in ferry["skipped"])
    assert [s["problem"] for s in ferry["skipped"]] == ["ferry-3-3-000", "ferry-3-3-001", "ferry-3-3-002"]
    assert json.loads((layout.acp / "blocksworld" / "summary.json").read_text())["problems"] == 2
    assert acp.domains_available(layout.acp) == ["blocksworld"]
    with pytest.raises(FileNotFoundError, match="ferry"):
        acp.load_domain_dataset(layout.acp, "ferry")


def test_min_states_skips_small_state_spaces(tmp_path):
    layout = Layout(root=tmp_path / "data")
    acp.run_stage(_tiny_params(min_states=150, domains=["blocksworld"], max_attempts=2), layout)
    summary = json.loads((layout.acp / "blocksworld" / "summary.json").read_text())
    assert summary["problems"] == 0 and "min_states=150" in summary["skipped"][0]["reason"]


def test_stage_resumes_without_recomputing(tmp_path, monkeypatch):
    params = _tiny_params(max_states=130, max_attempts=3)  # ferry problems are skipped: resumed too
    layout = Layout(root=tmp_path / "data")
    acp.run_stage(params, layout)
    before = {p: p.read_bytes() for p in sorted(layout.acp.rglob("*.json.gz"))}
    summaries = {d: (layout.acp / d / "summary.json").read_bytes() for d in ("blocksworld", "ferry")}

    def boom(*args, **kwargs):
        raise AssertionError("state space expanded again on resume")

    monkeypatch.setattr(acp.space, "expand_state_space", boom)  # where build_problem_record looks it up
    acp.run_stage(params, layout)
    assert {p: p.read_bytes() for p in sorted(layout.acp.rglob("*.json.gz"))} == before
    for d, old in summaries.items():  # byte for byte: the summaries hold no wall times
        assert (layout.acp / d / "summary.json").read_bytes() == old
    # a changed limit recomputes
    params["acp"]["max_plans"] = 3
    with pytest.raises(AssertionError, match="expanded again"):
        acp.run_stage(params, layout)


def test_stage_is_deterministic_and_drops_stale_problems(tmp_path):
    a, b = Layout(root=tmp_path / "a"), Layout(root=tmp_path / "b")
    acp.run_stage(_tiny_params(), a)
    acp.run_stage(_tiny_params(), b)
    files_a = sorted(p.relative_to(a.acp) for p in a.acp.rglob("*.json.gz"))
    assert files_a == sorted(p.relative_to(b.acp) for p in b.acp.rglob("*.json.gz"))
    for rel in files_a:
        assert (a.acp / rel).read_bytes() == (b.acp / rel).read_bytes()
    acp.run_stage(_tiny_params(problems=1, domains=["ferry"]), a)
    assert acp.domains_available(a.acp) == ["ferry"]
    assert len(list((a.acp / "ferry").glob("*.json.gz"))) == 1
    assert len(list((a.acp / "ferry" / "problems").glob("*.pddl"))) == 1


def test_unknown_domain_and_missing_configs_raise_config_error(tmp_path):
    with pytest.raises(ConfigError, match="unknown"):
        acp.run_stage(_tiny_params(domains=["sokoban"]), Layout(root=tmp_path))
    params = _tiny_params()
    del params["acp"]["generators"]["ferry"]
    with pytest.raises(ConfigError, match="acp.generators.ferry.configs"):
        acp.run_stage(params, Layout(root=tmp_path))


# --------------------------------------------------------------------------------------------
# Loaders
# --------------------------------------------------------------------------------------------


def test_loaders_round_trip_and_sort(tmp_path):
    layout = Layout(root=tmp_path / "data")
    acp.run_stage(_tiny_params(), layout)
    probs = acp.load_domain_dataset(layout.acp, "ferry")
    assert [p.problem for p in probs] == sorted(p.problem for p in probs)
    p = probs[0]
    assert isinstance(p, acp.ProblemTransitions)
    assert p.n_states == p.n_states_space and p.goal_distance[p.initial] == p.optimal_cost
    assert all(isinstance(k, int) for k in p.applicable)
    assert all(isinstance(t, tuple) and len(t) == 3 for plan in p.plans for t in plan)
    assert p.transitions() == sorted({t for plan in p.plans for t in plan})
    assert all(p.goal_distance[s] == 0 for s in p.goal_states())
    with gzip.open(layout.acp / "ferry" / f"{p.problem}.json.gz", "rt") as fh:
        assert p.to_dict() == json.load(fh)


def test_loader_errors_name_the_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="nope.json.gz"):
        acp.load_problem(tmp_path / "nope.json.gz")
    bad = tmp_path / "bad.json.gz"
    bad.write_bytes(b"not gzip")
    with pytest.raises(ValueError, match="bad.json.gz"):
        acp.load_problem(bad)
    partial = tmp_path / "partial.json.gz"
    partial.write_bytes(gzip.compress(json.dumps({"domain": "x"}).encode()))
    with pytest.raises(ValueError, match="partial.json.gz.*missing keys"):
        acp.load_problem(partial)
    with pytest.raises(FileNotFoundError, match="available"):
        acp.load_domain_dataset(tmp_path, "ferry")
    assert acp.domains_available(tmp_path / "absent") == []


def test_loader_rejects_out_of_range_ids(tmp_path):
    _, rec = _record(tmp_path, "ferry", {"num_cars": 2, "num_locations": 3}, 3)
    rec["plans"][0][0][2] = len(rec["states"]) + 5
    path = tmp_path / "broken.json.gz"
    acp.write_problem_record(path, rec)
    with pytest.raises(ValueError, match="broken.json.gz.*out-of-range"):
        acp.load_problem(path)


# --------------------------------------------------------------------------------------------
# Params and real ACPBench PDDL
# --------------------------------------------------------------------------------------------


def test_default_profile_problems_are_within_limits(tmp_path):
    """The default profile's data stage: every domain keeps its problems within its state bounds,
    and has two or more object sets, so Extrapolation (which splits object sets) runs on every
    domain and no test problem shares a state space with a training problem."""
    from planarena.protocols.pool import build_corpus, protocol_tasks

    params = _params("default")
    layout = Layout(root=tmp_path / "data")
    acp.run_stage(params, layout)
    for domain in params["acp"]["domains"]:
        summary = json.loads((layout.acp / domain / "summary.json").read_text())
        settings = acp.domain_settings(params, domain)
        assert summary["problems"] == params["acp"]["problems"], summary["skipped"]
        assert all(settings["min_states"] <= p["states"] <= settings["max_states"] for p in summary["per_problem"])
    corpus = build_corpus(layout.acp, None, params["acp"]["domains"])
    for seed in params["evaluation"]["seeds"]:
        for task in protocol_tasks(corpus, "extrapolation", seed):
            assert task.skipped is None, task.skipped
            train_objects = {corpus.object_set(p) for p in set(corpus.trans_problem[task.train_rows].tolist())}
            test_objects = {corpus.object_set(p) for p in set(corpus.trans_problem[task.tests[0].rows].tolist())}
            assert train_objects and test_objects and not train_objects & test_objects


@pytest.mark.parametrize("profile", ["default", "smoke", "paper"])
def test_every_profile_config_generates_problems(profile):
    params = _params(profile)
    for domain in params["acp"]["domains"]:
        settings = acp.domain_settings(params, domain)
        assert settings["problems"] >= 1
        for i, kwargs in enumerate(settings["configs"]):
            assert acp.generate_problem_text(domain, kwargs, acp.problem_seed(0, domain, i))
    if profile == "paper":
        assert sorted(params["acp"]["domains"]) == sorted(acp.DOMAINS)
        assert params["acp"]["max_states"] >= 20000


def test_top_level_generators_cover_all_nine_domains():
    params = _params("default")
    assert sorted(params["acp"]["generators"]) == sorted(acp.DOMAINS)


@pytest.mark.parametrize("domain", sorted(acp.DOMAINS))
def test_acpbench_problem_expands(domain):
    """One ACPBench problem per domain (the smallest file) parses and expands with the same code."""
    root = needs_shared("acpbench/pddl")
    ddir = root / domain  # ACPBench folder names are the keys of acp.DOMAINS
    if not (ddir / "domain.pddl").exists():
        pytest.skip(f"{ddir / 'domain.pddl'} not present")
    problems = sorted((p for p in ddir.glob("*.pddl") if p.name != "domain.pddl"),
                      key=lambda p: (p.stat().st_size, p.name))
    problem = acp.parse_problem(ddir / "domain.pddl", problems[0])
    try:
        space = acp.expand_state_space(problem, max_states=3000, timeout_s=10)
    except acp.SkipProblem as exc:
        assert "max_states" in str(exc) or "timed out" in str(exc)
        return
    assert space.goal_distance[space.initial] >= 0
    assert atoms_of(problem.get_initial_state()) == space.states[space.initial]


def test_space_transitions_are_valid_sampled_edges_with_applicable_entries(tmp_path):
    kwargs = {"num_cities": 2, "city_size": 2, "num_packages": 2, "num_airplanes": 1}
    dom, prob = _write_problem(tmp_path, "logistics", kwargs, 2)
    problem = acp.parse_problem(dom, prob)
    recs = [acp.build_problem_record(problem, domain="logistics", name="p", seed=2, generator=kwargs,
                                     max_states=5000, max_plans=5, space_transitions=40) for _ in range(2)]
    rec = recs[0]
    assert rec["space_transitions"] == recs[1]["space_transitions"]  # seeded
    edges = {tuple(e) for e in rec["space_transitions"]}
    assert len(edges) == 40 == len(rec["space_transitions"]) and rec["max_space_transitions"] == 40
    for s, a, t in edges:
        assert [a, t] in rec["applicable"][str(s)]  # a real edge, and its source has every applicable action
    loaded = acp.ProblemTransitions.from_dict(rec, "rec")
    assert len(loaded.space_transitions) == 40
    # -1: every edge of the state space
    full = acp.build_problem_record(problem, domain="logistics", name="p", seed=2, generator=kwargs,
                                    max_states=5000, max_plans=5, space_transitions=-1)
    assert len(full["space_transitions"]) == full["n_transitions_space"]


# --------------------------------------------------------------------------------------------
# acp.source: acpbench (ACPBench's published problem files)
# --------------------------------------------------------------------------------------------


def _fake_acpbench(tmp_path: Path) -> Path:
    """An ACPBench-shaped folder: blocksworld/domain.pddl and base problems ``bwthree`` (3 blocks,
    22 states: two variants) and ``bwfour`` (4 blocks, 125 states: one)."""
    root = tmp_path / "acpbench"
    ddir = root / "blocksworld"
    ddir.mkdir(parents=True)
    (ddir / "domain.pddl").write_text(acp.domain_text("blocksworld"))
    for name, blocks, seed in (("bwthree__b1", 3, 1), ("bwthree__a2", 3, 2), ("bwfour__c3", 4, 3)):
        (ddir / f"{name}.pddl").write_text(acp.generate_problem_text("blocksworld", {"num_blocks": blocks}, seed))
    return root


def test_acpbench_candidates_interleave_base_problems(tmp_path):
    from planarena.datasets.acp.acpbench import candidates

    folder = _fake_acpbench(tmp_path) / "blocksworld"
    assert [p.stem for p in candidates(folder)] == ["bwfour__c3", "bwthree__a2", "bwthree__b1"]


def test_acpbench_source_keeps_published_problems_within_bounds(tmp_path):
    params = _tiny_params(domains=["blocksworld"], source="acpbench", max_states=100, min_states=0, problems=2,
                          acpbench={"path": str(_fake_acpbench(tmp_path))})
    layout = Layout(root=tmp_path / "data")
    manifest = json.loads(acp.run_stage(params, layout).read_text())
    assert manifest["problems"]["blocksworld"] == ["bwthree__a2", "bwthree__b1"]
    summary = json.loads((layout.acp / "blocksworld" / "summary.json").read_text())
    assert summary["source"] == "acpbench" and summary["domain_file"] == "blocksworld/domain.pddl"
    assert [s["problem"] for s in summary["skipped"]] == ["bwfour__c3"]
    assert "exceeds max_states=100" in summary["skipped"][0]["reason"]
    assert [p["states"] for p in summary["per_problem"]] == [22, 22]
    rec = acp.load_problem(layout.acp / "blocksworld" / "bwthree__a2.json.gz")
    assert rec.generator["acpbench"] == "blocksworld/bwthree__a2.pddl" and len(rec.generator["sha256"]) == 16
    # the published file is what was expanded, byte for byte
    assert (layout.acp / "blocksworld" / "problems" / "bwthree__a2.pddl").read_text() == (
        tmp_path / "acpbench" / "blocksworld" / "bwthree__a2.pddl").read_text()


@pytest.mark.parametrize("acp_params, message", [
    ({"source": "acpbench", "acpbench": {"path": "/no/such/acpbench"}}, r"acp\.acpbench\.path: /no/such/acpbench is not a folder"),
    ({"source": "elsewhere"}, "acp.source must be one of generated, acpbench"),
])
def test_acpbench_source_bad_params_are_one_line(tmp_path, acp_params, message):
    with pytest.raises(ConfigError, match=message) as info:
        acp.run_stage(_tiny_params(**acp_params), Layout(root=tmp_path / "data"))
    assert "\n" not in str(info.value)


def test_acpbench_source_names_a_missing_domain_folder(tmp_path):
    params = _tiny_params(domains=["ferry"], source="acpbench", acpbench={"path": str(_fake_acpbench(tmp_path))})
    with pytest.raises(ConfigError, match=r"'ferry' has no .*domain\.pddl.*\['blocksworld'\]"):
        acp.run_stage(params, Layout(root=tmp_path / "data"))


def test_acpbench_source_on_the_published_blocksworld(tmp_path):
    """ACPBench's own Blocksworld: the 3- and 5-block problems fit 1,000 states, the 10- and 20-block
    ones do not; the kept problems span both small object sets (Extrapolation needs two)."""
    root = needs_shared("acpbench/pddl")
    params = _tiny_params(domains=["blocksworld"], source="acpbench", max_states=1000, min_states=16, problems=4,
                          acpbench={"path": str(root)})
    params["acp"]["generators"]["blocksworld"] = {}
    layout = Layout(root=tmp_path / "data")
    acp.run_stage(params, layout)
    summary = json.loads((layout.acp / "blocksworld" / "summary.json").read_text())
    assert summary["problems"] == 4
    assert {p["states"] for p in summary["per_problem"]} == {22, 866}
