"""Other people's planners through the IPC 2023 contract, unchanged: the params rows `bfgp`
(BFGP++, a generalized plan) and `pyperplan_gbfs_hff` (pyperplan, classical search), their
wrappers in examples/, and what a row says when its planner is not installed.

The runs need `make outside` (.venv-outside with up-bfgp, tarski and pyperplan); they skip with
that reason when it is absent. .ci/run installs it."""

import json
import shlex
import sys
from pathlib import Path

import pytest
import yaml
from conftest import ROOT, TINY

from planarena.config import Layout
from planarena.core.validation import validate_plan
from planarena.methods.base import PlanningTask
from planarena.methods.ipc_planner import IPCPlanner, contract_commands

OUTSIDE_PY = ROOT / ".venv-outside" / "bin" / "python"
VISITALL = ROOT / "tests" / "fixtures" / "visitall"
needs_outside = pytest.mark.skipif(not OUTSIDE_PY.exists(), reason="outside planners not installed (make outside)")


def params_rows() -> dict:
    return yaml.safe_load((ROOT / "params.yaml").read_text())["methods"]


def row_block(name: str) -> dict:
    """The committed params row with its commands made absolute (the tests run from any folder)."""
    block = dict(params_rows()[name])
    for key in ("learn", "plan"):
        if key in block:
            block[key] = [str(ROOT / w) if (ROOT / w).exists() else w for w in shlex.split(block[key])]
    return block


def entry(domain: str):
    return type("E", (), {"domain": domain})()


def test_outside_rows_are_declared_off_by_default_with_their_kinds():
    rows = params_rows()
    assert rows["bfgp"]["run"] is False and rows["pyperplan_gbfs_hff"]["run"] is False
    assert rows["bfgp"]["kind"] == "policy" and "kind" not in rows["pyperplan_gbfs_hff"]   # search
    assert IPCPlanner.report_traits(rows["bfgp"], {}).kind == "policy"
    assert IPCPlanner.report_traits(rows["pyperplan_gbfs_hff"], {}).kind == "search"
    assert "learn" not in rows["pyperplan_gbfs_hff"]       # nothing to learn: an empty DK


def test_relative_command_files_are_made_absolute_for_the_temporary_working_folder(monkeypatch):
    monkeypatch.chdir(ROOT)
    learn, plan = contract_commands("x", {"learn": "python examples/ipc_planner/learn.py",
                                          "plan": "python examples/ipc_planner/plan.py --flag"})
    assert learn == ["python", str(ROOT / "examples/ipc_planner/learn.py")]
    assert plan == ["python", str(ROOT / "examples/ipc_planner/plan.py"), "--flag"]


def test_a_planner_that_is_not_installed_is_a_recorded_outcome_not_a_crash(tmp_path):
    missing = str(tmp_path / "nowhere" / "python")
    row = IPCPlanner("ghost", {"method": "ipc_planner", "learn": [missing, "learn.py"], "plan": [missing, "plan.py"]},
                     {}, Layout(root=tmp_path))
    row._ps = type("PS", (), {"domains": ["tiny"], "domain_file": lambda self, d: TINY / "domain.pddl"})()
    row.training_problems = lambda domain: []
    facts = row.train(tmp_path / "models")
    assert facts["domains"]["tiny"]["learn"].startswith(f"cannot run {missing} (methods.ghost.learn)")
    assert "make outside" in facts["domains"]["tiny"]["learn"] and not facts["domains"]["tiny"]["dk_written"]
    (tmp_path / "models" / "tiny" / "dk").write_text("")
    row.load(tmp_path / "models")
    attempt = row.solve(PlanningTask(entry("tiny"), TINY / "domain.pddl", TINY / "three.pddl", 10), 13)
    assert attempt.outcome == "error" and "cannot run" in attempt.failure_reason and "methods.ghost.plan" in attempt.failure_reason


@needs_outside
def test_pyperplan_row_solves_the_tiny_problem_with_a_valid_plan(tmp_path):
    row = IPCPlanner("pyperplan_gbfs_hff", row_block("pyperplan_gbfs_hff"), {}, Layout(root=tmp_path))
    (tmp_path / "models" / "tiny").mkdir(parents=True)
    (tmp_path / "models" / "tiny" / "dk").write_text("")
    row.load(tmp_path / "models")
    attempt = row.solve(PlanningTask(entry("tiny"), TINY / "domain.pddl", TINY / "three.pddl", 30), 13)
    assert attempt.outcome == "solved", attempt.failure_reason
    assert validate_plan(TINY / "domain.pddl", TINY / "three.pddl", attempt.plan).valid
    unsolvable = row.solve(PlanningTask(entry("tiny"), TINY / "domain.pddl", TINY / "unsolvable.pddl", 30), 13)
    assert unsolvable.outcome == "unsolved" and unsolvable.plan is None


@needs_outside
def test_bfgp_row_synthesises_a_program_and_runs_it_on_each_task(tmp_path):
    """BFGP++ learns a VisitAll program from the 3 smallest tasks; on those its plans are valid;
    where the program does not reach the goal no plan is written (unsolved, never a wrong plan)."""
    block = row_block("bfgp")
    block["learn"] = [w if w != "5" else "3" for w in block["learn"]]    # --tasks 3: the three smallest
    row = IPCPlanner("bfgp", block, {}, Layout(root=tmp_path))
    tasks = sorted(VISITALL.glob("visitall-cells*.pddl"))
    row._ps = type("PS", (), {"domains": ["visitall"], "domain_file": lambda self, d: VISITALL / "domain.pddl",
                             "problem_file": lambda self, e: e.path})()
    row.training_problems = lambda domain: [type("P", (), {"objects": i, "problem": t.stem, "path": t})()
                                            for i, t in enumerate(tasks[:3])]
    facts = row.train(tmp_path / "models")
    assert facts["domains"]["visitall"]["learn"] == "ok" and facts["domains"]["visitall"]["dk_written"]
    assert "for(" in (tmp_path / "models" / "visitall" / "dk").read_text()    # a program with a loop
    row.load(tmp_path / "models")
    outcomes = {}
    for task in tasks:
        attempt = row.solve(PlanningTask(entry("visitall"), VISITALL / "domain.pddl", task, 30), 13)
        outcomes[task.stem] = attempt.outcome
        if attempt.outcome == "solved":
            assert validate_plan(VISITALL / "domain.pddl", task, attempt.plan).valid, task.stem
    assert all(outcomes[t.stem] == "solved" for t in tasks[:3]), outcomes
    assert set(outcomes.values()) <= {"solved", "unsolved"}


def test_a_learner_that_reaches_its_time_limit_leaves_budget_stops_not_errors(tmp_path):
    learner = tmp_path / "learn.py"
    learner.write_text("while True: pass\n")
    row = IPCPlanner("slow", {"method": "ipc_planner", "learn": [sys.executable, str(learner)],
                              "plan": [sys.executable, "-c", "pass"], "learn_time_limit": 0.5, "kill_grace": 0.5},
                     {}, Layout(root=tmp_path))
    row._ps = type("PS", (), {"domains": ["tiny"], "domain_file": lambda self, d: TINY / "domain.pddl"})()
    row.training_problems = lambda domain: []
    facts = row.train(tmp_path / "models")
    assert facts["domains"]["tiny"]["learn"] == "timeout"
    (tmp_path / "models" / "train.json").write_text(json.dumps(facts))
    row.load(tmp_path / "models")
    attempt = row.solve(PlanningTask(entry("tiny"), TINY / "domain.pddl", TINY / "three.pddl", 10), 13)
    assert attempt.outcome == "unsolved" and attempt.extra["stop"] == "budget"
    assert "learn reached its CPU time limit (0.5 s)" in attempt.failure_reason
