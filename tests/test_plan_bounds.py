"""The plan-length lower bound from the PDDL (:mod:`planarena.core.plan_bounds`) and its use in the
horizon ceiling (:func:`planarena.report.sections.coverage.horizon_ceiling`): sound against optimal
plan lengths (breadth-first search on the tiny fixtures; the SATr plan files, which are upper bounds
on the optimum), the VisitAll count of unvisited goal cells, ``None`` where the PDDL makes the bound
unsound, and the sentence on a synthetic index."""

from pathlib import Path

import pytest
from conftest import FIXTURES, needs_shared

from planarena.core.pddl import read_plan_file
from planarena.core.plan_bounds import plan_length_lower_bound
from planarena.report.sections.coverage import horizon_ceiling, problem_files

TINY, WL = FIXTURES / "tiny", FIXTURES / "wl"

#: (domain file, problem file) of the hand-written fixtures with a solvable goal
SOLVABLE = [
    (TINY / "domain.pddl", TINY / "three.pddl"),
    *[(WL / "blocksworld-domain.pddl", WL / f"bw-p-{n}.pddl") for n in ("3-0", "3-1", "3-2", "4-0")],
    (WL / "grid-domain.pddl", WL / "grid-line.pddl"),
    (WL / "grid-domain.pddl", WL / "grid-ring.pddl"),
]


def optimal_length(domain_file: Path, problem_file: Path, limit: int = 20) -> int:
    """Length of a shortest plan, by breadth-first search on the validator's semantics."""
    from planarena.core.pddl_parsers import domain_parser, problem_parser
    from planarena.core.pddl_semantics import build_task, parse

    task = build_task(parse(domain_parser(), domain_file.read_text(), str(domain_file)),
                      parse(problem_parser(), problem_file.read_text(), str(problem_file)),
                      str(domain_file), str(problem_file))
    ground = [(a, b) for a in task.actions.values() for b in task.bindings(a.parameters, {})]
    layer, seen = [frozenset(task.init)], {frozenset(task.init)}
    for depth in range(limit + 1):
        if any(task.goal is None or task.holds(task.goal, set(s), dict(task.fluents), {}) for s in layer):
            return depth
        nxt = []
        for s in layer:
            for a, b in ground:
                if task.holds(a.precondition, set(s), dict(task.fluents), b):
                    state = set(s)
                    task.apply(a, b, state, dict(task.fluents))
                    if frozenset(state) not in seen:
                        seen.add(frozenset(state))
                        nxt.append(frozenset(state))
        layer = nxt
    raise AssertionError(f"{problem_file}: no plan within {limit} steps")


@pytest.mark.parametrize("domain_file,problem_file", SOLVABLE, ids=[p.stem for _, p in SOLVABLE])
def test_bound_never_exceeds_the_optimal_plan_length_of_the_fixtures(domain_file, problem_file):
    bound = plan_length_lower_bound(domain_file, problem_file)
    assert bound is not None and 0 < bound <= optimal_length(domain_file, problem_file)


def test_bound_values_on_the_fixtures():
    # tiny blocksworld: (on a b) and (on b c) false initially, `stack` adds one `on` atom
    assert plan_length_lower_bound(TINY / "domain.pddl", TINY / "three.pddl") == 2
    assert len(read_plan_file(TINY / "three.plan")) == 4
    # grid visit: one `visited` per move, two goal cells unvisited (tight: c1 -> c2 -> c3)
    assert plan_length_lower_bound(WL / "grid-domain.pddl", WL / "grid-line.pddl") == 2
    # paths are accepted as str too; unreadable files give None, never an exception
    assert plan_length_lower_bound(str(TINY / "domain.pddl"), str(TINY / "three.pddl")) == 2
    bad = FIXTURES / "bad"
    for domain in (TINY / "malformed_domain.pddl", bad / "durative_domain.pddl", bad / "empty.pddl"):
        assert plan_length_lower_bound(domain, TINY / "three.pddl") is None, domain
    for problem in ("unbalanced", "empty", "binary"):
        assert plan_length_lower_bound(TINY / "domain.pddl", bad / f"{problem}.pddl") is None, problem
    assert plan_length_lower_bound(TINY / "domain.pddl", TINY / "missing.pddl") is None


VISIT = """(define (domain visit)
  (:requirements :strips)
  (:predicates (at ?x) (visited ?x) (adj ?x ?y))
  (:action move :parameters (?x ?y)
    :precondition (and (at ?x) (adj ?x ?y))
    :effect (and (at ?y) (not (at ?x)) (visited ?y) %s)))
"""


def _line(n: int, visited: int = 1, goal: str = "") -> str:
    """A line of ``n`` cells, the robot at c1, cells c1..c<visited> visited, goal: all visited."""
    cells = [f"c{i}" for i in range(1, n + 1)]
    adj = " ".join(f"(adj {a} {b}) (adj {b} {a})" for a, b in zip(cells, cells[1:]))
    seen = " ".join(f"(visited {c})" for c in cells[:visited])
    goal = goal or " ".join(f"(visited {c})" for c in cells)
    return (f"(define (problem line{n}) (:domain visit) (:objects {' '.join(cells)})\n"
            f"  (:init (at c1) {seen} {adj})\n  (:goal (and {goal})))\n")


def test_bound_is_the_number_of_unvisited_goal_cells(tmp_path):
    (tmp_path / "domain.pddl").write_text(VISIT % "")
    for n, visited in ((5, 1), (8, 3), (3, 3)):
        (tmp_path / "p.pddl").write_text(_line(n, visited))
        assert plan_length_lower_bound(tmp_path / "domain.pddl", tmp_path / "p.pddl") == n - visited
    # an action adding two goal atoms halves the bound (rounded up)
    (tmp_path / "two.pddl").write_text(VISIT % "(visited ?x)")
    (tmp_path / "p.pddl").write_text(_line(6))
    assert plan_length_lower_bound(tmp_path / "two.pddl", tmp_path / "p.pddl") == 3


@pytest.mark.parametrize("effect", ["(when (adj ?y ?x) (visited ?x))",
                                    "(forall (?z) (when (adj ?y ?z) (visited ?z)))"])
def test_none_for_conditional_or_quantified_effects(tmp_path, effect):
    (tmp_path / "domain.pddl").write_text(VISIT.replace(":strips", ":strips :adl") % effect)
    (tmp_path / "p.pddl").write_text(_line(5))
    assert plan_length_lower_bound(tmp_path / "domain.pddl", tmp_path / "p.pddl") is None


def test_none_for_derived_predicates_negative_goals_and_unreachable_goals(tmp_path):
    derived = VISIT.replace(":strips", ":strips :derived-predicates").replace(
        "(:action", "(:derived (visited ?x) (at ?x))\n  (:action") % ""
    (tmp_path / "derived.pddl").write_text(derived)
    (tmp_path / "domain.pddl").write_text(VISIT % "")
    (tmp_path / "p.pddl").write_text(_line(4))
    assert plan_length_lower_bound(tmp_path / "derived.pddl", tmp_path / "p.pddl") is None
    (tmp_path / "neg.pddl").write_text(_line(4, goal="(visited c4) (not (at c1))"))
    assert plan_length_lower_bound(tmp_path / "domain.pddl", tmp_path / "neg.pddl") is None
    # a goal atom no action adds: the problem is unsolvable, no finite bound is stated
    (tmp_path / "adj.pddl").write_text(_line(4, goal="(adj c1 c4)"))
    assert plan_length_lower_bound(tmp_path / "domain.pddl", tmp_path / "adj.pddl") is None
    # a goal true initially needs no step
    (tmp_path / "done.pddl").write_text(_line(4, goal="(visited c1)"))
    assert plan_length_lower_bound(tmp_path / "domain.pddl", tmp_path / "done.pddl") == 0


@pytest.mark.shared
def test_bound_never_exceeds_the_satr_plans_and_counts_unvisited_cells():
    """Every SATr plan file (A*+LM-cut or LAMA: an upper bound on the optimum) is at least as long
    as the bound; in VisitAll the bound is the number of goal cells not visited initially, and 9 of
    the 219 extrapolation problems need more than 100 steps (each at least 109)."""
    from planarena.core.pddl import read_problem_text

    root = needs_shared("satr")
    checked = 0
    for domain in sorted(d for d in root.iterdir() if (d / "domain.pddl").exists()):
        for problem in sorted(domain.glob("*/*.pddl")):
            bound = plan_length_lower_bound(domain / "domain.pddl", problem)
            assert bound is not None, problem
            plan = problem.parent / "plans" / f"{problem.stem}.plan"
            if plan.exists():
                assert bound <= len(read_plan_file(plan)), problem
                checked += 1
            if domain.name == "visitall":
                text = read_problem_text(problem)
                assert bound == len(set(text.goal) - set(text.init)), problem
    assert checked > 500
    visitall = root / "visitall"
    bounds = [plan_length_lower_bound(visitall / "domain.pddl", p) for p in (visitall / "extrapolation").glob("*.pddl")]
    over = sorted(b for b in bounds if b > 100)
    assert len(bounds) == 219 and len(over) == 9 and over[0] >= 109


def test_horizon_ceiling_counts_problems_out_of_reach_by_the_pddl_bound(tmp_path):
    """A problem whose only plan is LAMA's (not optimal) is out of reach when its unvisited goal
    cells exceed the horizon; the sentence names the bound. Without the files it stays unknown."""
    root = tmp_path / "problems"
    (root / "visit" / "validation").mkdir(parents=True)
    (root / "visit" / "domain.pddl").write_text(VISIT % "")
    manifest = []
    for name, n in (("far", 8), ("near", 3), ("opt", 4), ("none", 9)):
        (root / "visit" / "validation" / f"{name}.pddl").write_text(_line(n))
        manifest.append(dict(domain="visit", split="validation", problem=name, path=f"visit/validation/{name}.pddl",
                             size_param="cells", size=n, objects=n, seed=None, origin="test"))
    index = {("visit", "validation"): {"far", "near", "opt", "none"}}

    def rec(problem, length, optimal):
        return {"domain": "visit", "split": "validation", "problem": problem, "outcome": "solved",
                "optimal": optimal, "plan_length": length}

    plans = [rec("far", 9, False),   # LAMA plan longer than the horizon; 7 unvisited cells > 5
             rec("near", 2, True),   # fits
             rec("opt", 6, True)]    # optimal plan longer than the horizon (bound 3 fits)
    files = problem_files(manifest, root)
    assert files[("visit", "validation", "far")] == (root / "visit" / "domain.pddl",
                                                      root / "visit" / "validation" / "far.pddl")
    [line] = horizon_ceiling(plans, index, {"walk": 5}, ["walk"], files)
    assert line == ("Horizon ceiling: with plans of at most 5 steps (`walk`), 3 of 4 held-out problems cannot be "
                    "solved (1 have optimal plans longer than that, 2 need more than 5 steps by the lower bound "
                    "from unsatisfied goal atoms).")
    # only the bound: "none" (no record, 8 unvisited cells) and "far"
    [line] = horizon_ceiling(plans[:2], index, {"walk": 5}, ["walk"], files)
    assert line.endswith("2 of 4 held-out problems cannot be solved (they need more than 5 steps by the lower "
                         "bound from unsatisfied goal atoms); 1 have no reference-plan record (not planned, see "
                         "`planners.splits`, or the records were not kept), so their ceiling is unknown.")
    # a horizon of 8: "far" (7 cells) is unknown (its LAMA plan has 9 steps), "none" has 8 cells: no record
    [line] = horizon_ceiling(plans, index, {"walk": 8}, ["walk"], files)
    assert line == ("Horizon ceiling: with plans of at most 8 steps (`walk`), 0 of 4 held-out problems cannot be "
                    "solved (their optimal plans are longer); for 1 more no optimal plan is known and no plan "
                    "within the horizon was found by the planners (nor does the lower bound from unsatisfied goal "
                    "atoms exceed it); 1 have no reference-plan record (not planned, see `planners.splits`, or the "
                    "records were not kept), so their ceiling is unknown.")
    # without the files only the optimal plans count, as before
    [line] = horizon_ceiling(plans, index, {"walk": 5}, ["walk"])
    assert ("1 of 4 held-out problems cannot be solved (their optimal plans are longer); for 1 more no optimal "
            "plan is known") in line
