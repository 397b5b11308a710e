"""The ``dir`` suite: a user's domain folders as published (flat or in split folders)."""

import pytest
from conftest import TINY

from planarena.config import ConfigError, resolve_profile
from planarena.core.io import read_jsonl
from planarena.core.pddl import PDDLError, domain_requirements
from planarena.core.problemset import ProblemSet
from planarena.datasets.folders import read_folders, split_by_size
from planarena.datasets.suites import _domain_text, generator_module, run_stage
from planarena.methods.random_walk import RandomWalk


def zenotravel_folder(root, n=10, name="zenotravel"):
    """A flat folder as the field publishes one: domain.pddl and pfile1 ... pfileN (IPC Zenotravel
    problems of growing size from pypddl-datasets' generator)."""
    folder = root / name
    folder.mkdir(parents=True)
    (folder / "domain.pddl").write_text(_domain_text("zenotravel/domain.pddl"))
    gen = generator_module("zenotravel")
    for i in range(1, n + 1):
        text = gen.make_problem(num_cities=2 + i // 4, num_planes=1, num_people=1 + i, seed=i)
        (folder / f"pfile{i}.pddl").write_text(text)
    return folder


def test_split_by_size_mirrors_the_satr_splits():
    # 20 problems, sizes 1..20 given in reverse: order by size, never by the order given
    problems = [(size, f"p{size}") for size in range(20, 0, -1)]
    splits = dict(zip((s for s, _ in problems), split_by_size(problems)))
    assert [s for s in range(1, 13) if splits[s] == "interpolation"] == [5, 10]   # every 5th inside the range
    assert [s for s in range(1, 13) if splits[s] == "train"] == [1, 2, 3, 4, 6, 7, 8, 9, 11, 12]
    assert sorted(s for s in splits if splits[s] == "validation") == [13, 14]
    assert sorted(s for s in splits if splits[s] == "extrapolation") == list(range(15, 21))


def test_split_by_size_breaks_ties_by_natural_name_order():
    problems = [(5, "p10"), (5, "p2"), (5, "p1")]
    assert split_by_size(problems, train_range=0.34, interpolation_every=0, validation=0.33) == \
        ["extrapolation", "validation", "train"]


@pytest.mark.parametrize("rule", [{"train_range": 0}, {"train_range": 0.95, "validation": 0.1},
                                  {"interpolation_every": -1}])
def test_bad_split_rule_names_the_param(rule):
    with pytest.raises(ConfigError, match="suites.dir.split"):
        split_by_size([(1, "a"), (2, "b")], **{"train_range": 0.6, "validation": 0.1, "interpolation_every": 5, **rule})


def test_a_folder_path_as_suite_is_the_dir_suite():
    params = resolve_profile({"profile": "default", "profiles": {"default": {}}, "suite": "/data/mine",
                              "suites": {"dir": {"split": {"validation": 0.2}}}})
    assert params["suite"] == "dir"
    assert params["suites"]["dir"] == {"split": {"validation": 0.2}, "path": "/data/mine"}
    assert resolve_profile({"profiles": {"default": {}}, "suite": "satr"})["suite"] == "satr"


def test_flat_folder_runs_the_generate_stage(smoke_params, layout, tmp_path):
    folder = zenotravel_folder(tmp_path / "mine")
    smoke_params["suite"] = str(folder)
    # the smoke profile's caps: the 4 smallest training problems, 2 per evaluation split
    assert smoke_params["suites"]["dir"]["max_train"] == 4 and smoke_params["suites"]["dir"]["max_per_split"] == 2
    capped = run_stage(resolve_profile({**smoke_params, "profiles": {"default": {}}, "profile": "default"}), layout)
    assert {s: sum(e.split == s for e in capped) for s in ("train", "interpolation", "validation", "extrapolation")} \
        == {"train": 4, "interpolation": 1, "validation": 1, "extrapolation": 2}
    smoke_params["suites"]["dir"].update(max_train=None, max_per_split=None)
    entries = run_stage(resolve_profile({**smoke_params, "profiles": {"default": {}}, "profile": "default"}), layout)
    ps = ProblemSet(layout.problems)
    assert ps.domains == ["zenotravel"]
    by_split = {s: [e for e in entries if e.split == s] for s in ("train", "interpolation", "validation", "extrapolation")}
    assert {s: len(v) for s, v in by_split.items()} == {"train": 5, "interpolation": 1, "validation": 1,
                                                        "extrapolation": 3}
    # the largest problems are the extrapolation split; every problem keeps its own name and origin
    assert min(e.objects for e in by_split["extrapolation"]) >= max(e.objects for e in by_split["train"])
    assert {e.origin for e in entries} == {f"zenotravel/pfile{i}.pddl" for i in range(1, 11)}
    assert all(e.size == e.objects and e.size_param == "objects" for e in entries)
    assert (layout.problems / "zenotravel" / "domain.pddl").read_text() == (folder / "domain.pddl").read_text()


def test_folder_of_domain_folders_and_split_folders(smoke_params, layout, tmp_path):
    zenotravel_folder(tmp_path / "mine", n=6)
    tiny = tmp_path / "mine" / "Tiny Domain"
    for split in ("train", "extrapolation"):
        (tiny / split).mkdir(parents=True)
        (tiny / split / "three.pddl").write_text((TINY / "three.pddl").read_text())
    (tiny / "domain.pddl").write_text((TINY / "domain.pddl").read_text())
    smoke_params.update(suite="dir")
    smoke_params["suites"]["dir"] = {"path": [str(tmp_path / "mine")]}
    run_stage(smoke_params, layout)
    ps = ProblemSet(layout.problems)
    assert ps.domains == ["tiny-domain", "zenotravel"]
    assert sorted(e.split for e in ps.select(domain="tiny-domain")) == ["extrapolation", "train"]


def test_bad_folders_give_one_line_each(smoke_params, tmp_path):
    errors: list[str] = []
    two = tmp_path / "two"
    two.mkdir()
    (two / "domain-p01.pddl").write_text("(define)")
    (two / "domain-p02.pddl").write_text("(define)")
    empty = tmp_path / "empty"
    empty.mkdir()
    smoke_params["suites"]["dir"] = {"path": [str(tmp_path / "absent"), str(two), str(empty)]}
    assert read_folders(smoke_params, errors) == []
    assert len(errors) == 3
    assert errors[0].startswith(f"{tmp_path / 'absent'}: not a folder")
    assert errors[1].startswith(f"{two}: 2 domain files (domain-p01.pddl, domain-p02.pddl)")
    assert errors[2].startswith(f"{empty}: no domain file")
    smoke_params["suites"]["dir"] = {"path": None}
    with pytest.raises(ConfigError, match="suites.dir.path"):
        read_folders(smoke_params, [])


def test_a_malformed_problem_names_the_users_file_and_keeps_the_last_suite(smoke_params, layout, tmp_path):
    folder = zenotravel_folder(tmp_path / "mine", n=5)
    smoke_params.update(suite="dir")
    smoke_params["suites"]["dir"] = {"path": str(folder)}
    run_stage(smoke_params, layout)
    before = (layout.problems / "manifest.jsonl").read_bytes()
    (folder / "pfile3.pddl").write_text((TINY / "malformed_problem.pddl").read_text())
    with pytest.raises(PDDLError) as info:
        run_stage(smoke_params, layout)
    assert str(folder / "pfile3.pddl") in str(info.value)
    assert (layout.problems / "manifest.jsonl").read_bytes() == before


def test_domain_requirements_expand_composites():
    reqs = domain_requirements("(define (domain d) (:requirements :adl :action-costs) (:predicates (p)))")
    assert {":conditional-effects", ":negative-preconditions", ":action-costs"} <= reqs
    assert domain_requirements("(define (domain d) (:predicates (p)))") == frozenset({":strips"})


class StripsOnlyWalk(RandomWalk):
    """A random walk that declares it handles plain STRIPS only (for the requirement check)."""

    requirements = frozenset({":strips"})


def test_a_domain_a_method_cannot_read_is_dropped_with_its_reason(smoke_params, layout, tmp_path, monkeypatch):
    from planarena.methods import REGISTRY
    from planarena.report.leaderboard import analyse
    from planarena.report.pages import render_front
    from planarena.report.records import load_inputs
    from planarena.runner.stages import build_method, run_evaluate_stage, run_train_stage

    zenotravel_folder(tmp_path / "mine", n=5)
    neg = tmp_path / "mine" / "negtiny"
    neg.mkdir()
    (neg / "domain.pddl").write_text((TINY / "domain.pddl").read_text().replace(
        "(:requirements :strips)", "(:requirements :strips :negative-preconditions)"))
    for i in range(3):
        (neg / f"p{i}.pddl").write_text((TINY / "three.pddl").read_text())
    monkeypatch.setitem(REGISTRY, "strips_walk", "test_user_folders:StripsOnlyWalk")
    smoke_params.update(suite="dir", jobs=1)
    smoke_params["suites"]["dir"] = {"path": str(tmp_path / "mine")}
    smoke_params["methods"] = {"strips_walk": {"method": "strips_walk", "max_steps": 5},
                               "fsf_xgb_delta": {"method": "state_centric", "encoding": "fsf", "model": "xgb",
                                                 "mode": "delta"}}
    smoke_params["evaluation"]["seeds"] = [13]
    run_stage(smoke_params, layout)
    fsf = build_method("fsf_xgb_delta", smoke_params, layout)
    assert fsf.ps.domains == []
    assert set(fsf.dropped_domains) == {"negtiny", "zenotravel"}
    assert "FSF features are hand-designed per domain" in fsf.dropped_domains["zenotravel"]

    run_train_stage(smoke_params, layout, "strips_walk")
    run_evaluate_stage(smoke_params, layout, "strips_walk")
    recs = read_jsonl(layout.results / "strips_walk.jsonl")
    dropped = [r for r in recs if r["outcome"] == "not_applicable"]
    assert [(r["domain"], r["extra"]["task"]) for r in dropped] == [("negtiny", "not_applicable")]
    assert ":negative-preconditions" in dropped[0]["failure_reason"]
    assert {r["domain"] for r in recs if r["outcome"] != "not_applicable"} == {"zenotravel"}
    # a rerun keeps the record and adds none
    run_evaluate_stage(smoke_params, layout, "strips_walk")
    assert len(read_jsonl(layout.results / "strips_walk.jsonl")) == len(recs)
    a = analyse(load_inputs(layout))
    assert a.not_applicable == [("strips_walk", "negtiny", dropped[0]["failure_reason"])]
    front = render_front(a, {"profile": "smoke", "suite": "dir"})
    assert "`strips_walk` on `negtiny`: negtiny declares :negative-preconditions" in front


def test_an_unsupported_requirement_is_named_up_front(smoke_params, layout, tmp_path):
    """A temporal domain is refused with one line naming the user's file, the requirement and why,
    not with the parser's "malformed domain" at its first `:durative-action`."""
    from planarena.core.pddl import requirement_refusal

    folder = tmp_path / "mine" / "rovers-temporal"
    folder.mkdir(parents=True)
    (folder / "domain.pddl").write_text(
        "(define (domain d) (:requirements :strips :durative-actions)\n (:predicates (p))\n"
        " (:durative-action a :parameters () :duration (= ?duration 1) :condition (and)"
        " :effect (and (at end (p)))))\n")
    for i in range(3):
        (folder / f"p{i}.pddl").write_text("(define (problem q) (:domain d) (:init) (:goal (p)))\n")
    smoke_params.update(suite="dir")
    smoke_params["suites"]["dir"] = {"path": str(tmp_path / "mine")}
    with pytest.raises(PDDLError) as info:
        run_stage(smoke_params, layout)
    message = str(info.value)
    assert f"{folder / 'domain.pddl'}: declares :durative-actions, which planarena does not support" in message
    assert "temporal planning" in message and "malformed" not in message
    # through a composite too, and nothing for what is supported
    numeric = ("(define (domain d) (:requirements :fluents) (:functions (fuel ?t))"
               " (:action a :parameters (?t) :precondition (> (fuel ?t) 0) :effect (decrease (fuel ?t) 1)))")
    assert ":numeric-fluents" in requirement_refusal(numeric, "f")
    # declared for action costs only, static cost functions included (IPC Cave Diving does): not refused
    costs = ("(define (domain d) (:requirements :numeric-fluents) (:functions (hire ?d) (total-cost))"
             " (:action a :parameters (?d) :precondition (and) :effect (increase (total-cost) (hire ?d))))")
    assert requirement_refusal(costs, "f") is None
    assert requirement_refusal("(define (domain d) (:requirements :adl :action-costs))", "f") is None


def test_astar_lmcut_is_not_applicable_on_conditional_effects(smoke_params, layout, tmp_path):
    """Fast Downward's LM-cut refuses conditional effects on every problem (the requirements matrix's
    only error): the row says so once per domain instead of erring per problem."""
    from planarena.runner.stages import build_method

    domain = tmp_path / "briefcase.pddl"
    domain.write_text("(define (domain b) (:requirements :strips :conditional-effects) (:predicates (p)))")
    plain = tmp_path / "plain.pddl"
    plain.write_text("(define (domain b) (:requirements :strips) (:predicates (p)))")
    smoke_params["methods"] = {"fd_astar_lmcut": {}, "fd_lama": {}}
    lmcut = build_method("fd_astar_lmcut", smoke_params, layout)
    assert "declares :conditional-effects, which Fast Downward's lmcut() does not support" in \
        lmcut.not_applicable("briefcase", domain)
    assert lmcut.not_applicable("plain", plain) is None
    assert build_method("fd_lama", smoke_params, layout).not_applicable("briefcase", domain) is None
