"""planarena's plan validator (``validate_plan``: the ``pddl`` package's parser and
``planarena.core.pddl_semantics``) against the unified-planning oracle (``validate_plan_up``): they
agree on valid/invalid, the first bad step and the cost, on the fixture plans, on malformed variants
of real plans, on an ADL domain and on a sample of the IPC 2023 Learning Track and SATr reference
plans (skipped when ``../shared/benchmarks`` is absent). ``benchmarks/bench_validate.py`` runs every
reference plan and times both at IPC size."""

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import FIXTURES, ROOT, TINY, needs_shared

from planarena.core import validation
from planarena.core.validation import VALIDATOR_NAME, validate_plan, validate_plan_up

BAD = FIXTURES / "bad"
DOMAIN, THREE = TINY / "domain.pddl", TINY / "three.pddl"

_spec = importlib.util.spec_from_file_location("bench_validate", ROOT / "benchmarks" / "bench_validate.py")
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)


def both(domain, problem, actions):
    """The new validator's verdict, after checking the oracle agrees on (valid, step, cost)."""
    new, up = validate_plan(domain, problem, actions), validate_plan_up(domain, problem, actions)
    assert bench.key(new) == bench.key(up), (actions, new, up)
    return new


# ------------------------------------------------------------------------------------------ fixtures


@pytest.mark.parametrize("plan", [TINY / "three.plan", *sorted(BAD.glob("*.plan"))], ids=lambda p: p.name)
def test_fixture_plans_agree_with_the_oracle(plan):
    actions = bench.read_plan(plan)
    verdict = both(DOMAIN, THREE, actions)
    assert verdict.valid == (plan.name == "three.plan")
    for name, variant in bench.variants(actions).items():
        assert not both(DOMAIN, THREE, variant).valid, name  # the tiny plan is optimal: every variant fails


@pytest.mark.parametrize("name,role,words", [
    ("unbalanced.pddl", "problem", ["could not parse"]),
    ("undeclared_predicate.pddl", "problem", ["undefined predicate 'ontablex'"]),
    ("undeclared_object.pddl", "problem", ["undefined object 'd'", "goal"]),
    ("other_domain.pddl", "problem", ["'gripper'", "'tinyblocks'"]),
    ("durative_domain.pddl", "domain", ["could not parse"]),
    ("empty.pddl", "domain", ["could not parse"]),
    ("empty.pddl", "problem", ["could not parse"]),
    ("binary.pddl", "problem", ["cannot read"]),
    ("latin1.pddl", "problem", ["cannot read", "utf-8"]),
])
def test_malformed_pddl_raises_a_value_error_naming_the_file(name, role, words):
    files = (BAD / name, THREE) if role == "domain" else (DOMAIN, BAD / name)
    with pytest.raises(ValueError) as err:
        validate_plan(*files, [])
    assert str(err.value).startswith(f"{BAD / name}: ")
    for w in words:
        assert w in str(err.value)


def test_validator_name_and_independence():
    """The validator imports neither pymimir (the methods' successor generator) nor unified-planning."""
    assert "pddl" in VALIDATOR_NAME and "unified-planning" not in VALIDATOR_NAME
    code = ("import sys; from planarena.core.validation import validate_plan; "
            f"v = validate_plan({str(DOMAIN)!r}, {str(THREE)!r}, ['(unstack b a)', '(stack b c)', '(pick-up a)', "
            "'(stack a b)']); assert v.valid and v.cost == 4.0, v; "
            "print(sorted(m for m in ('pymimir', 'unified_planning', 'planarena.methods') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_each_problem_is_parsed_once_until_it_changes(tmp_path):
    domain, problem = tmp_path / "d.pddl", tmp_path / "p.pddl"
    domain.write_text(DOMAIN.read_text())
    problem.write_text(THREE.read_text())
    validation._task.cache_clear()
    validation._domain.cache_clear()
    plan = bench.read_plan(TINY / "three.plan")
    assert validate_plan(domain, problem, plan).valid and validate_plan(domain, problem, plan[:1]).step is None
    assert (validation._task.cache_info().misses, validation._domain.cache_info().misses) == (1, 1)
    problem.write_text(THREE.read_text().replace("(on a b) (on b c)", "(on b c)"))
    os.utime(problem, ns=(1, 1))  # a new modification time, whatever the clock's resolution
    assert validate_plan(domain, problem, plan[:2]).valid  # the edited goal is read
    assert (validation._task.cache_info().misses, validation._domain.cache_info().misses) == (2, 1)


# ------------------------------------------------------------------------------------- semantics

ADL_DOMAIN = """; features for the cross-check: type hierarchy, constants, equality, or/imply/exists/forall
; preconditions, conditional and universal effects, action costs read from numeric fluents
(define (domain adl-rooms)
  (:requirements :adl :action-costs)
  (:types room item - object box ball - item)
  (:constants hall - room)
  (:predicates (at ?i - item ?r - room) (robot-at ?r - room) (door ?a ?b - room)
               (holding ?i - item) (lit ?r - room) (painted ?i - item))
  (:functions (total-cost) - number (distance ?a ?b - room) - number)
  (:action move
    :parameters (?from ?to - room)
    :precondition (and (robot-at ?from) (not (= ?from ?to)) (or (door ?from ?to) (door ?to ?from)))
    :effect (and (not (robot-at ?from)) (robot-at ?to) (when (not (lit ?to)) (lit ?to))
                 (increase (total-cost) (distance ?from ?to))))
  (:action pick
    :parameters (?i - item ?r - room)
    :precondition (and (robot-at ?r) (at ?i ?r) (forall (?j - item) (not (holding ?j))))
    :effect (and (holding ?i) (not (at ?i ?r)) (increase (total-cost) 1)))
  (:action drop
    :parameters (?i - item ?r - room)
    :precondition (and (holding ?i) (robot-at ?r) (imply (= ?r hall) (lit hall)))
    :effect (and (not (holding ?i)) (at ?i ?r) (increase (total-cost) 1)))
  (:action paint-all
    :parameters (?r - room)
    :precondition (and (robot-at ?r) (exists (?b - ball) (at ?b ?r)))
    :effect (and (forall (?i - item) (when (at ?i ?r) (painted ?i))) (increase (total-cost) 2))))
"""
_DIST = {("hall", "kitchen"): 3, ("kitchen", "attic"): 5, ("hall", "attic"): 8}
ADL_PROBLEM = f"""(define (problem adl-p1)
  (:domain adl-rooms)
  (:objects kitchen attic - room b1 - box ba1 ba2 - ball)
  (:init (robot-at kitchen) (door hall kitchen) (door kitchen attic)
         (at b1 kitchen) (at ba1 kitchen) (at ba2 attic) (= (total-cost) 0)
         {" ".join(f"(= (distance {a} {b}) {_DIST.get((a, b)) or _DIST.get((b, a)) or 0})"
                   for a in ("hall", "kitchen", "attic") for b in ("hall", "kitchen", "attic"))})
  (:goal (and (at b1 hall) (painted ba1) (not (holding ba2)) (<= (total-cost) 20)))
  (:metric minimize (total-cost)))
"""
ADL_PLAN = ["(paint-all kitchen)", "(pick b1 kitchen)", "(move kitchen hall)", "(drop b1 hall)"]
DETOUR = ["(move kitchen attic)", "(paint-all attic)", "(move attic kitchen)"]


@pytest.fixture(scope="module")
def adl(tmp_path_factory):
    d = tmp_path_factory.mktemp("adl")
    (d / "domain.pddl").write_text(ADL_DOMAIN)
    (d / "p1.pddl").write_text(ADL_PROBLEM)
    return d / "domain.pddl", d / "p1.pddl"


@pytest.mark.parametrize("actions,cost,step", [
    (ADL_PLAN, 7.0, None),                                           # distance 3 + 1 + 1 + 2
    (ADL_PLAN[1:2] + ADL_PLAN[:1] + ADL_PLAN[2:], 7.0, None),        # paint-all after pick: still painted
    (DETOUR + ADL_PLAN, 19.0, None),
    (DETOUR + DETOUR[:1] + DETOUR[2:] + ADL_PLAN, None, None),       # 27 > 20: numeric goal fails
    (ADL_PLAN[:3], None, None),                                      # goal not reached
    (["(pick ba1 kitchen)", "(pick b1 kitchen)"], None, 2),          # forall: already holding
    (["(move kitchen kitchen)"], None, 1),                           # equality
    (["(move kitchen attic)", "(move attic hall)"], None, 2),        # or: no door
    (["(pick kitchen kitchen)"], None, 1),                           # type: kitchen is no item
    (["(paint-all hall)"], None, 1),                                 # robot not there
    (["(move kitchen attic)", "(paint-all attic)"], None, None),     # exists: ba2 is in the attic
])
def test_adl_features_agree_with_the_oracle(adl, actions, cost, step):
    verdict = both(*adl, actions)
    assert (verdict.valid, verdict.cost, verdict.step) == (cost is not None, cost, step), verdict


def test_reasons_name_the_step_and_the_unmet_conjuncts(adl):
    r = validate_plan(*adl, ["(pick ba1 kitchen)", "(pick b1 kitchen)"]).reason
    assert r == "step 2: (pick b1 kitchen): precondition (forall (?j - item) (not (holding ?j))) does not hold"
    r = validate_plan(*adl, ["(move kitchen kitchen)"]).reason
    assert r.startswith("step 1: (move kitchen kitchen): preconditions (not (= kitchen kitchen)), (or ")
    assert validate_plan(*adl, ["(pick kitchen kitchen)"]).reason == \
        "step 1: (pick kitchen kitchen): ?i must be of type item, 'kitchen' is of type room"
    assert validate_plan(*adl, ADL_PLAN[:3]).reason == "goal not reached after 3 steps: (at b1 hall) does not hold"
    assert validate_plan(*adl, ["(PAINT-ALL  Kitchen)"]).reason.startswith("goal not reached")  # it applies


def test_delete_before_add_and_unit_cost(tmp_path):
    """PDDL 2.1: an atom both deleted and added by one action stays true; no metric: unit cost."""
    (tmp_path / "d.pddl").write_text("(define (domain t) (:requirements :strips) (:predicates (q ?x)) (:action a"
                                     " :parameters (?x ?y) :precondition (q ?x) :effect (and (q ?y) (not (q ?x)))))")
    (tmp_path / "p.pddl").write_text("(define (problem t1) (:domain t) (:objects o1 o2) (:init (q o1)) (:goal (q o1)))")
    d, p = tmp_path / "d.pddl", tmp_path / "p.pddl"
    assert bench.key(both(d, p, ["(a o1 o1)", "(a o1 o1)"])) == (True, None, 2.0)
    assert bench.key(both(d, p, ["(a o1 o2)"])) == (False, None, None)


def test_either_types(tmp_path):
    """``(either t1 t2)`` parameters (unified-planning 1.3.0 cannot parse them: no oracle here)."""
    (tmp_path / "d.pddl").write_text(
        "(define (domain e) (:requirements :typing) (:types a b c) (:predicates (done ?x))"
        " (:action do :parameters (?x - (either a b)) :precondition (and) :effect (done ?x)))")
    (tmp_path / "p.pddl").write_text("(define (problem e1) (:domain e) (:objects xa - a xb - b xc - c)"
                                     " (:init) (:goal (and (done xa) (done xb))))")
    d, p = tmp_path / "d.pddl", tmp_path / "p.pddl"
    assert validate_plan(d, p, ["(do xa)", "(do xb)"]).valid
    assert validate_plan(d, p, ["(do xc)"]).reason == "step 1: (do xc): ?x must be of type a or b, 'xc' is of type c"


# ------------------------------------------------------------------------- real reference plans


def _reference_sample(root: Path, suite: str):
    if suite == "ipc2023-learning":
        for d in sorted(p for p in root.iterdir() if (p / "domain.pddl").is_file()):
            for name in ("p01", "p02", "p03"):
                plan = d / "plans" / "training" / "easy" / f"{name}.plan"
                if plan.is_file():
                    yield d / "domain.pddl", d / "training" / "easy" / f"{name}.pddl", plan
    else:
        for d in sorted(p for p in root.iterdir() if (p / "domain.pddl").is_file()):
            plan = sorted((d / "train" / "plans").glob("*.plan"))[-1]
            yield d / "domain.pddl", d / "train" / f"{plan.stem}.pddl", plan


@pytest.mark.parametrize("suite", ["ipc2023-learning", "satr"])
def test_reference_plans_and_their_variants_agree_with_the_oracle(suite):
    """IPC 2023 training/easy p01-p03 of every domain (variants of p03), the last SATr train plan of
    every domain (and its variants): all reference plans valid, every verdict as the oracle's."""
    root = needs_shared(suite)
    n = 0
    for domain, problem, plan in _reference_sample(root, suite):
        actions = bench.read_plan(plan)
        verdict = both(domain, problem, actions)
        assert verdict.valid and verdict.cost == len(actions), (plan, verdict)
        if suite == "satr" or plan.stem == "p03":
            for variant in bench.variants(actions).values():
                both(domain, problem, variant)
        n += 1
    assert n >= 4


EDGE_DOMAIN = """(define (domain t) (:requirements :strips :typing :action-costs)
 (:types thing) (:constants c1 - thing)
 (:predicates (p ?x - thing) (q))
 (:functions (total-cost) - number (w ?x - thing) - number)
 (:action a :parameters (?x - thing) :precondition () :effect (and (p ?x) (increase (total-cost) (w c1))))
 (:action nop :parameters () :precondition (q) :effect ()))"""


@pytest.mark.parametrize("metric,cost", [("(total-cost)", 3.0), ("(total-time)", 2.0)])
def test_empty_precondition_empty_effect_constant_fluent_and_total_time(tmp_path, metric, cost):
    """``()`` as a precondition (no condition) and as an effect (none), a domain constant as a
    numeric fluent's argument, and ``total-time`` (one unit a step) in the metric."""
    (tmp_path / "d.pddl").write_text(EDGE_DOMAIN)
    (tmp_path / "p.pddl").write_text(f"""(define (problem t1) (:domain t) (:objects o1 - thing)
 (:init (= (total-cost) 0) (= (w c1) 3) (= (w o1) 1) (q)) (:goal (and (p o1))) (:metric minimize {metric}))""")
    verdict = validate_plan(tmp_path / "d.pddl", tmp_path / "p.pddl", ["(nop)", "(a o1)"])
    assert verdict.valid and verdict.cost == cost
    if metric == "(total-cost)":  # unified-planning's simulator has no makespan metric
        assert bench.key(validate_plan_up(tmp_path / "d.pddl", tmp_path / "p.pddl", ["(nop)", "(a o1)"])) == bench.key(verdict)


def test_reasons_do_not_depend_on_the_hash_seed(tmp_path):
    """A failed quantified precondition is printed the same way in every process (records are
    compared byte for byte): variables sorted, ``either`` types sorted."""
    (tmp_path / "d.pddl").write_text("""(define (domain f) (:requirements :adl)
 (:types a b c) (:predicates (r ?x ?y ?z) (done))
 (:action go :parameters () :precondition (forall (?z - c ?y - (either b a) ?x - a) (r ?x ?y ?z)) :effect (done)))""")
    (tmp_path / "p.pddl").write_text("""(define (problem f1) (:domain f) (:objects x1 - a y1 - b z1 - c)
 (:init) (:goal (done)))""")
    code = ("import sys; from planarena.core.validation import validate_plan; "
            "print(validate_plan(sys.argv[1], sys.argv[2], ['(go)']).reason)")
    reasons = {subprocess.run([sys.executable, "-c", code, str(tmp_path / "d.pddl"), str(tmp_path / "p.pddl")],
                              capture_output=True, text=True, check=True,
                              env={**os.environ, "PYTHONHASHSEED": str(seed)}).stdout for seed in range(4)}
    assert len(reasons) == 1, reasons
    assert "(forall (?x - a ?y - (either a b) ?z - c) (r ?x ?y ?z))" in reasons.pop()


def test_conditional_effect_reads_the_state_before_the_action(tmp_path):
    """A `when` whose condition the same action deletes is read in the state before the action
    (PDDL 2.1), and an atom both deleted and added stays true: agreement with the oracle."""
    (tmp_path / "d.pddl").write_text("""(define (domain c) (:requirements :adl)
 (:predicates (a) (b) (c) (d))
 (:action go :parameters () :precondition (a)
  :effect (and (not (a)) (when (a) (b)) (when (not (a)) (c)) (not (d)) (d))))""")
    for k, (goal, valid) in enumerate((("(and (b) (d))", True), ("(c)", False), ("(not (a))", True))):
        problem = tmp_path / f"p{k}.pddl"  # one file per goal: the oracle caches its parse by path
        problem.write_text(f"(define (problem c1) (:domain c) (:init (a) (d)) (:goal {goal}))")
        assert both(tmp_path / "d.pddl", problem, ["(go)"]).valid is valid, goal


def test_a_construct_the_semantics_do_not_execute_is_a_verdict_not_a_crash(monkeypatch, tmp_path):
    """An effect the semantics cannot execute makes the plan not validated, with the construct
    named in the reason (a stage records it; it never crashes on it)."""
    from planarena.core import pddl_semantics

    def unsupported(self, e, *args):
        raise pddl_semantics.Unsupported(f"effect {e}")

    monkeypatch.setattr(pddl_semantics.Task, "effects", unsupported)
    verdict = validate_plan(DOMAIN, THREE, bench.read_plan(TINY / "three.plan"))
    assert not verdict.valid and verdict.reason.startswith("not validated: the validator does not execute this effect")
