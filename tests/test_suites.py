import gzip

import pytest
from conftest import TINY, needs_shared, only_domains

from planarena.config import ConfigError
from planarena.core.pddl import PDDLError
from planarena.core.problemset import ProblemSet
from planarena.datasets.suites import run_stage


def test_generated_suite_is_deterministic_and_has_manifest(smoke_params, layout, tmp_path):
    entries = run_stage(smoke_params, layout)
    first = (layout.problems / "manifest.jsonl").read_bytes()
    texts = {e.path: (layout.problems / e.path).read_text() for e in entries}
    run_stage(smoke_params, layout)
    assert (layout.problems / "manifest.jsonl").read_bytes() == first
    assert {e.path: (layout.problems / e.path).read_text() for e in entries} == texts

    ps = ProblemSet(layout.problems)
    assert ps.domains == ["blocksworld", "gripper", "logistics", "visitall"]
    cfg = smoke_params["suites"]["generated"]["domains"]
    for e in ps.entries:
        assert e.size in cfg[e.domain]["sizes"][e.split]
        assert e.objects > 0 and e.seed is not None and e.origin.startswith("pypddl_datasets")
    bw = [e for e in ps.entries if e.domain == "blocksworld"]
    assert {e.objects for e in bw} == {e.size for e in bw}  # blocks are the only objects


def test_another_seed_gives_other_problems(smoke_params, layout):
    only_domains(smoke_params, "blocksworld")
    a = run_stage(smoke_params, layout)
    text_a = (layout.problems / a[0].path).read_text()
    smoke_params["seed"] = 1
    b = run_stage(smoke_params, layout)
    assert (layout.problems / b[0].path).read_text() != text_a


def test_unknown_generated_domain_is_a_config_error(smoke_params, layout):
    smoke_params["suites"]["generated"]["domains"] = {"sokoban": {"sizes": {"train": [1]}}}
    with pytest.raises(ConfigError, match="suites.generated.domains.sokoban"):
        run_stage(smoke_params, layout)


def test_missing_external_suite_dir_names_the_param(smoke_params, layout, tmp_path):
    smoke_params["suite"] = "satr"
    smoke_params["suites"]["satr"]["path"] = str(tmp_path / "absent")
    with pytest.raises(ConfigError, match="suites.satr.path"):
        run_stage(smoke_params, layout)
    smoke_params["suites"]["satr"]["path"] = None
    with pytest.raises(ConfigError, match="set `suites.satr.path`"):
        run_stage(smoke_params, layout)


def _fake_suite(root, problem_name="three.pddl", problem_text=None, gz=False):
    d = root / "tiny"
    for split in ("train", "validation", "interpolation", "extrapolation"):
        (d / split).mkdir(parents=True)
    (d / "domain.pddl").write_text((TINY / "domain.pddl").read_text())
    text = problem_text or (TINY / "three.pddl").read_text()
    if gz:
        with gzip.open(d / "train" / (problem_name + ".gz"), "wt") as fh:
            fh.write(text)
    else:
        (d / "train" / problem_name).write_text(text)
    return root


def test_malformed_external_problem_stops_stage_naming_file(smoke_params, layout, tmp_path):
    root = _fake_suite(tmp_path / "suite", "bad.pddl", (TINY / "malformed_problem.pddl").read_text())
    smoke_params.update(suite="satr")
    smoke_params["suites"]["satr"].update(path=str(root), domains=["tiny"])
    with pytest.raises(PDDLError, match="bad.pddl"):
        run_stage(smoke_params, layout)


def test_ipc_layout_with_gzipped_problem(smoke_params, layout, tmp_path):
    root = tmp_path / "ipc"
    d = root / "tiny"
    (d / "training" / "easy").mkdir(parents=True)
    for folder in ("testing/easy", "testing/medium", "testing/hard"):
        (d / folder).mkdir(parents=True)
    (d / "domain.pddl").write_text((TINY / "domain.pddl").read_text())
    (d / "training" / "easy" / "p01.pddl").write_text((TINY / "three.pddl").read_text())
    with gzip.open(d / "testing" / "hard" / "p02.pddl.gz", "wt") as fh:
        fh.write((TINY / "three.pddl").read_text())
    smoke_params.update(suite="ipc2023")
    smoke_params["suites"]["ipc2023"].update(path=str(root), domains=["tiny"], max_per_split=None)
    entries = run_stage(smoke_params, layout)
    assert sorted((e.split, e.problem) for e in entries) == [("test-hard", "p02"), ("train", "p01")]
    assert (layout.problems / "tiny/test-hard/p02.pddl").read_text().startswith("; a on table")


def test_max_per_split_never_cuts_the_training_split(smoke_params, layout, tmp_path):
    # max_per_split once cut training/easy to its smallest problems too (and the R-GNN
    # policies then moved half of those to validation)
    root = tmp_path / "ipc"
    d = root / "tiny"
    for folder in ("training/easy", "testing/easy", "testing/medium", "testing/hard"):
        (d / folder).mkdir(parents=True)
        for i in (1, 2, 3):
            (d / folder / f"p0{i}.pddl").write_text((TINY / "three.pddl").read_text())
    (d / "domain.pddl").write_text((TINY / "domain.pddl").read_text())
    smoke_params.update(suite="ipc2023")
    smoke_params["suites"]["ipc2023"].update(path=str(root), domains=["tiny"], max_per_split=1)
    entries = run_stage(smoke_params, layout)
    by_split = {}
    for e in entries:
        by_split.setdefault(e.split, []).append(e.problem)
    assert by_split == {"train": ["p01", "p02", "p03"], "test-easy": ["p01"], "test-medium": ["p01"],
                        "test-hard": ["p01"]}
    # a mapping caps each evaluation split on its own: unnamed or None keeps all, 0 keeps none
    smoke_params["suites"]["ipc2023"]["max_per_split"] = {"test-medium": 2, "test-hard": 0, "test-easy": None}
    by_split = {}
    for e in run_stage(smoke_params, layout):
        by_split.setdefault(e.split, []).append(e.problem)
    assert by_split == {"train": ["p01", "p02", "p03"], "test-easy": ["p01", "p02", "p03"],
                        "test-medium": ["p01", "p02"]}
    # {spread: n}: n problems evenly spaced over the split's size order, smallest and largest kept
    smoke_params["suites"]["ipc2023"]["max_per_split"] = {"test-medium": {"spread": 2}, "test-easy": {"spread": 1},
                                                          "test-hard": 0}
    by_split = {}
    for e in run_stage(smoke_params, layout):
        by_split.setdefault(e.split, []).append(e.problem)
    assert by_split == {"train": ["p01", "p02", "p03"], "test-easy": ["p02"], "test-medium": ["p01", "p03"]}


def test_spread_cut_keeps_the_ends_and_spaces_the_rest():
    from planarena.config import ConfigError
    from planarena.datasets.suites import spread_cut

    items = list(range(30))
    picked = spread_cut(items, {"spread": 15}, "x")
    assert len(picked) == 15 and picked[0] == 0 and picked[-1] == 29 and picked == sorted(set(picked))
    assert max(b - a for a, b in zip(picked, picked[1:])) <= 3
    assert spread_cut(items[:4], {"spread": 9}, "x") == [0, 1, 2, 3]
    for bad in ({"spread": 0}, {"spread": "3"}, {"even": 3}):
        with pytest.raises(ConfigError, match="x="):
            spread_cut(items, bad, "x")


@pytest.mark.shared
def test_real_satr_suite_imports(smoke_params, layout):
    path = needs_shared("satr")
    smoke_params.update(suite="satr")
    smoke_params["suites"]["satr"].update(path=str(path), max_per_split=2)
    entries = run_stage(smoke_params, layout)
    ps = ProblemSet(layout.problems)
    assert ps.domains == ["blocksworld", "gripper", "logistics", "visitall"]
    assert {e.split for e in entries} == {"train", "validation", "interpolation", "extrapolation"}
    assert all(e.objects > 0 for e in entries)


@pytest.mark.shared
def test_real_ipc2023_suite_imports_gzipped_rovers(smoke_params, layout):
    path = needs_shared("ipc2023-learning")
    smoke_params.update(suite="ipc2023")
    smoke_params["suites"]["ipc2023"].update(path=str(path), domains=["rovers"], max_per_split=1)
    entries = run_stage(smoke_params, layout)
    assert {e.split for e in entries} == {"train", "test-easy", "test-medium", "test-hard"}


#: VisitAll as the SATr splits write it: no types, cells as `(place c)` facts (the generator's
#: domain types them instead)
UNTYPED_VISITALL = """(define (domain grid-visit-all)
  (:requirements :strips)
  (:predicates (place ?x) (connected ?x ?y) (at-robot ?x) (visited ?x))
  (:action move :parameters (?from ?to)
    :precondition (and (place ?from) (place ?to) (at-robot ?from) (connected ?from ?to))
    :effect (and (at-robot ?to) (not (at-robot ?from)) (visited ?to))))
"""
SMALL_GRID = """(define (problem g) (:domain grid-visit-all) (:objects a b)
  (:init (place a) (place b) (connected a b) (connected b a) (at-robot a) (visited a))
  (:goal (and (visited a) (visited b))))
"""


def _untyped_visitall_suite(root):
    d = root / "visitall"
    for split in ("train", "validation", "interpolation"):   # no extrapolation folder: generated
        (d / split).mkdir(parents=True)
        (d / split / "w01h02-01.pddl").write_text(SMALL_GRID)
    (d / "domain.pddl").write_text(UNTYPED_VISITALL)
    return root


def test_fresh_split_of_an_external_suite_is_generated_in_its_dialect(smoke_params, layout, tmp_path):
    """`suites.satr.generate` replaces a split by new generator instances (seeded by its own seed),
    written as the suite's domain reads them: the generator's typed cells become `(place c)` facts."""
    from planarena.datasets.suites import planned_problems

    root = _untyped_visitall_suite(tmp_path / "suite")
    smoke_params.update(suite="satr")
    gen = {"seed": 5, "domains": {"visitall": {"sizes": {"extrapolation": [6, 9]}, "count": {"extrapolation": 2}}}}
    smoke_params["suites"]["satr"].update(path=str(root), domains=["visitall"], generate=gen)
    entries = run_stage(smoke_params, layout)
    fresh = [e for e in entries if e.split == "extrapolation"]
    assert [e.size for e in fresh] == [6, 6, 9, 9] and len({e.seed for e in fresh}) == 4
    assert all(e.origin.startswith("generated:") for e in fresh)
    assert sorted(e.split for e in entries if e.split != "extrapolation") == ["interpolation", "train", "validation"]
    text = (layout.problems / fresh[0].path).read_text()
    assert " - place" not in text and text.count("(place ") == 6 and text.count("(visited ") == 7  # 6 goals + start
    planned = planned_problems(smoke_params)
    assert len(planned[("visitall", "extrapolation")]) == 4 and len(planned[("visitall", "train")]) == 1
    # the run's seed does not move them; generate.seed does
    texts = lambda: [(layout.problems / e.path).read_text() for e in run_stage(smoke_params, layout)  # noqa: E731
                     if e.split == "extrapolation"]
    first = texts()
    smoke_params["seed"] += 1
    assert texts() == first
    gen["seed"] = 6
    assert texts() != first


def test_fresh_split_needs_the_generators_vocabulary(smoke_params, layout, tmp_path):
    root = _fake_suite(tmp_path / "suite")
    (root / "tiny").rename(root / "blocksworld")   # a domain named blocksworld that is not Blocksworld
    smoke_params.update(suite="satr")
    smoke_params["suites"]["satr"].update(path=str(root), domains=["blocksworld"], generate={
        "seed": 1, "domains": {"blocksworld": {"sizes": {"extrapolation": [4]}}}})
    # the same vocabulary under another domain name: the problems name the suite's domain
    fresh = [e for e in run_stage(smoke_params, layout) if e.split == "extrapolation"]
    assert len(fresh) == 1 and "(:domain tinyblocks)" in (layout.problems / fresh[0].path).read_text()
    domain = root / "blocksworld" / "domain.pddl"
    domain.write_text(domain.read_text().replace("holding", "in-hand"))
    with pytest.raises(PDDLError, match=r"blocksworld/domain.pddl: suites.satr.generate.domains.blocksworld"):
        run_stage(smoke_params, layout)
    smoke_params["suites"]["satr"]["generate"] = {"domains": {}}
    with pytest.raises(ConfigError, match="suites.satr.generate: expected"):
        run_stage(smoke_params, layout)
    smoke_params["suites"]["satr"]["generate"] = {"seed": 1, "domains": {"blocksworld": {"sizes": {"test": [4]}}}}
    with pytest.raises(ConfigError, match="splits are"):
        run_stage(smoke_params, layout)


@pytest.mark.shared
def test_real_satr_with_fresh_extrapolation(smoke_params, layout):
    """The SATr splits for training, fresh Blocksworld and VisitAll extrapolation problems that
    parse against SATr's own domain files."""
    path = needs_shared("satr")
    smoke_params.update(suite="satr")
    smoke_params["suites"]["satr"].update(path=str(path), max_per_split=1, domains=["blocksworld", "visitall"], generate={
        "seed": 3, "domains": {"blocksworld": {"sizes": {"extrapolation": [9]}},
                               "visitall": {"sizes": {"extrapolation": [24]}}}})
    entries = run_stage(smoke_params, layout)
    fresh = sorted((e.domain, e.size) for e in entries if e.split == "extrapolation")
    assert fresh == [("blocksworld", 9), ("visitall", 24)]
