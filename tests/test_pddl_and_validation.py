import pytest
from conftest import TINY

from planarena.core.pddl import (
    PDDLError,
    atoms_of,
    count_objects,
    goal_atoms,
    load_problem,
    normalise_action,
    parse_domain,
    read_plan_file,
    read_problem_text,
    replay,
    split_atom,
)
from planarena.core.validation import validate_plan

DOMAIN = str(TINY / "domain.pddl")
THREE = str(TINY / "three.pddl")


def test_malformed_problem_error_names_file_and_reason():
    with pytest.raises(PDDLError) as err:
        load_problem(DOMAIN, str(TINY / "malformed_problem.pddl"))
    assert "malformed_problem.pddl" in str(err.value)
    assert "ontablex" in str(err.value)


def test_malformed_domain_error_names_file():
    with pytest.raises(PDDLError, match="malformed_domain.pddl"):
        load_problem(str(TINY / "malformed_domain.pddl"), THREE)


def test_missing_file_error():
    with pytest.raises(PDDLError, match="not found"):
        load_problem(DOMAIN, str(TINY / "nope.pddl"))


def test_count_objects_ignores_types():
    assert count_objects("(define (problem p) (:objects a b - block c - ball) (:init))") == 3
    assert count_objects((TINY / "three.pddl").read_text()) == 3


def test_text_reader_agrees_with_pymimir(tmp_path):
    """The domain-free problem reader (FSF) and pymimir see the same objects, initial atoms and goal."""
    text = read_problem_text(THREE)
    problem = load_problem(DOMAIN, THREE)
    assert text.name == "tiny-three" and text.objects == {"a": None, "b": None, "c": None}
    typed = {f"(object {o})" for o in text.objects}  # pymimir adds a type atom per object
    assert sorted(text.init) == sorted(str(a) for a in problem.get_initial_atoms() if str(a) not in typed)
    assert sorted(text.goal) == goal_atoms(problem)
    assert split_atom("(On  A B)") == ("on", ("a", "b")) and split_atom("handempty") == ("handempty", ())
    with pytest.raises(PDDLError, match="empty atom"):
        split_atom("()")
    bad = tmp_path / "unbalanced.pddl"
    bad.write_text("(define (problem p) (:objects a)")
    with pytest.raises(PDDLError, match="unbalanced.pddl: unbalanced"):
        read_problem_text(bad)


def test_parse_domain_is_uncached_and_names_the_file():
    assert parse_domain(DOMAIN) is not parse_domain(DOMAIN)
    assert str(parse_domain(DOMAIN).get_name()) == "tinyblocks"
    with pytest.raises(PDDLError, match="malformed_domain.pddl"):
        parse_domain(TINY / "malformed_domain.pddl")


def test_replay_reaches_goal_with_sorted_atoms():
    problem = load_problem(DOMAIN, THREE)
    states, ground = replay(problem, read_plan_file(TINY / "three.plan"))
    assert len(states) == 5 and len(ground) == 4
    assert problem.get_goal_condition().holds(states[-1])
    first = atoms_of(states[0])
    assert first == sorted(first)
    assert "(on b a)" in first
    assert goal_atoms(problem) == ["(on a b)", "(on b c)"]


def test_replay_rejects_inapplicable_action_with_step():
    problem = load_problem(DOMAIN, THREE)
    with pytest.raises(PDDLError, match="step 0: action \\(pick-up a\\) is not applicable"):
        replay(problem, ["(pick-up a)"])


def test_replay_matches_a_0_ary_action(tmp_path):
    """pymimir prints a parameterless ground action as "(clear-all )"; a plan file says "(clear-all)"
    (found by benchmarks/requirements_matrix.py: the trajectories stage refused Fast Downward's plan)."""
    (tmp_path / "d.pddl").write_text(
        "(define (domain reset) (:requirements :strips :conditional-effects) (:predicates (item ?x) (marked ?x) (cleared))\n"
        " (:action mark :parameters (?x) :precondition (and (item ?x) (cleared)) :effect (marked ?x))\n"
        " (:action clear-all :parameters () :precondition (and) :effect (and (cleared) (forall (?x) (not (marked ?x))))))\n")
    (tmp_path / "p.pddl").write_text("(define (problem p) (:domain reset) (:objects x1) (:init (item x1) (marked x1))"
                                     " (:goal (and (cleared) (marked x1))))\n")
    problem = load_problem(tmp_path / "d.pddl", tmp_path / "p.pddl")
    states, _ = replay(problem, ["(clear-all)", "(mark x1)"])
    assert "(marked x1)" not in atoms_of(states[1]) and problem.get_goal_condition().holds(states[-1])


def test_normalise_action():
    assert normalise_action(" (Pick-Up  B1) ") == "(pick-up b1)"
    assert normalise_action("stack a b") == "(stack a b)"


def test_validator_accepts_and_rejects_with_reasons():
    plan = read_plan_file(TINY / "three.plan")
    ok = validate_plan(DOMAIN, THREE, plan)
    assert ok.valid and ok.cost == 4.0
    short = validate_plan(DOMAIN, THREE, plan[:-1])
    assert not short.valid and short.reason == "goal not reached after 3 steps: (on a b) does not hold"
    bad = validate_plan(DOMAIN, THREE, ["(pick-up a)"])
    assert not bad.valid and bad.step == 1
    assert bad.reason == "step 1: (pick-up a): precondition (clear a) does not hold"  # b is on a
    unknown = validate_plan(DOMAIN, THREE, ["(fly a)"])
    assert not unknown.valid and unknown.step == 1 and "unknown action 'fly'" in unknown.reason
