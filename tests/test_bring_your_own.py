"""Outside planners (the IPC 2023 Learning Track's learn / plan contract) and methods from other
packages (entry-point group ``planarena.methods``), on a smoke-profile leaderboard."""

import os
import sys
import textwrap
import time
from pathlib import Path

import pytest
from conftest import ROOT, TINY, only_domains

from planarena.config import ConfigError, Layout
from planarena.core.io import read_jsonl
from planarena.core.limits import run_limited
from planarena.methods import ENTRY_POINT_GROUP, method_class, plugin_methods
from planarena.methods.base import PlanningTask
from planarena.methods.ipc_planner import IPCPlanner, contract_commands, plan_files

EXAMPLES = ROOT / "examples"
PY = sys.executable


def script(tmp_path: Path, name: str, body: str) -> Path:
    f = tmp_path / name
    f.write_text(textwrap.dedent(body))
    return f


def test_cpu_limit_sends_sigterm_to_the_group_then_sigkill(tmp_path):
    # a planner that burns CPU and writes its plan when SIGTERM comes (what the track allows)
    catcher = script(tmp_path, "catch.py", """
        import signal, sys
        def done(*_):
            open("plan", "w").write("(noop)\\n"); sys.exit(0)
        signal.signal(signal.SIGTERM, done)
        while True: pass
    """)
    run = run_limited([PY, str(catcher)], tmp_path, cpu_limit_s=1.0, grace_s=5)
    assert run.timed_out and run.returncode == 0 and run.cpu_s >= 1.0
    assert (tmp_path / "plan").read_text() == "(noop)\n"
    # one that ignores SIGTERM is killed after the grace period
    stubborn = script(tmp_path, "stubborn.py", """
        import signal
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        while True: pass
    """)
    start = time.perf_counter()
    run = run_limited([PY, str(stubborn)], tmp_path, cpu_limit_s=0.5, grace_s=0.5)
    assert run.timed_out and run.returncode == -9 and time.perf_counter() - start < 10


def test_sleeping_does_not_count_as_cpu_time(tmp_path):
    sleeper = script(tmp_path, "sleep.py", "import time; time.sleep(1.5)\n")
    run = run_limited([PY, str(sleeper)], tmp_path, cpu_limit_s=1.0)
    assert not run.timed_out and run.returncode == 0 and run.wall_s >= 1.5 and run.cpu_s < 1.0


def test_anytime_plan_files_are_read_in_the_ipc_order(tmp_path):
    for name in ("plan.10", "plan.2", "plan", "plan.1", "plan.txt"):
        (tmp_path / name).write_text("")
    assert [p.name for p in plan_files(tmp_path / "plan")] == ["plan", "plan.1", "plan.2", "plan.10"]


def test_contract_commands():
    assert contract_commands("x", {"image": "p.sif"}) == (["apptainer", "run", "--app", "learn", "p.sif"],
                                                          ["apptainer", "run", "--app", "plan", "p.sif"])
    assert contract_commands("x", {"plan": "python plan.py"}) == (None, ["python", "plan.py"])
    with pytest.raises(ConfigError, match="methods.x: set `plan`"):
        contract_commands("x", {"learn": "l"})
    with pytest.raises(ConfigError, match="not both"):
        contract_commands("x", {"image": "p.sif", "plan": "p"})


def test_the_cheapest_valid_plan_of_an_anytime_run_counts(tmp_path):
    # PLAN.1 valid (6 steps), PLAN.2 invalid, PLAN.3 valid (4 steps, optimal)
    planner = script(tmp_path, "plan.py", """
        import sys
        plan = sys.argv[4]
        long = ["(unstack b a)", "(put-down b)", "(pick-up b)", "(stack b c)", "(pick-up a)", "(stack a b)"]
        open(plan + ".1", "w").write("\\n".join(long))
        open(plan + ".2", "w").write("(stack a b)\\n")
        open(plan + ".3", "w").write("\\n".join(["(unstack b a)", "(stack b c)", "(pick-up a)", "(stack a b)"]))
    """)
    row = IPCPlanner("outside", {"method": "ipc_planner", "plan": [PY, str(planner)]}, {}, Layout(root=tmp_path))
    (tmp_path / "models" / "tiny").mkdir(parents=True)
    (tmp_path / "models" / "tiny" / "dk").write_text("")
    row.load(tmp_path / "models")
    task = PlanningTask(type("E", (), {"domain": "tiny"})(), TINY / "domain.pddl", TINY / "three.pddl", 10)
    attempt = row.solve(task, 13)
    assert attempt.outcome == "solved" and len(attempt.plan) == 4
    assert attempt.extra["plans_written"] == 3 and attempt.extra["cost"] == 4


def plugin_on_path(monkeypatch, tmp_path):
    """Install the example plugin package the way pip does for the entry point: its metadata
    (``entry_points.txt``) in a ``.dist-info`` folder on ``sys.path``, its sources importable."""
    site = tmp_path / "site"
    info = site / "planarena_example_plugin-0.1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: planarena-example-plugin\nVersion: 0.1.0\n")
    (info / "entry_points.txt").write_text(
        f"[{ENTRY_POINT_GROUP}]\ngoal_count_gbfs = planarena_example_plugin:GoalCountGBFS\n")
    monkeypatch.syspath_prepend(str(EXAMPLES / "plugin_method" / "src"))
    monkeypatch.syspath_prepend(str(site))
    return site


def test_a_method_from_another_package_is_found_by_its_entry_point(monkeypatch, tmp_path):
    assert "goal_count_gbfs" not in plugin_methods()
    with pytest.raises(KeyError, match="unknown method 'goal_count_gbfs'"):
        method_class("goal_count_gbfs")
    plugin_on_path(monkeypatch, tmp_path)
    assert plugin_methods()["goal_count_gbfs"] == "planarena_example_plugin:GoalCountGBFS"
    assert method_class("goal_count_gbfs").__name__ == "GoalCountGBFS"


def test_outside_planner_and_plugin_method_on_a_smoke_leaderboard(smoke_params, layout, tmp_path, monkeypatch):
    """The example outside planner (examples/ipc_planner) and the example plugin method
    (examples/plugin_method) run through the pipeline's stages and appear on the leaderboard."""
    from planarena.datasets.reference_plans import run_plan_stage
    from planarena.datasets.suites import run_stage as generate
    from planarena.report.leaderboard import run_stage as report
    from planarena.runner.inputs import method_inputs
    from planarena.runner.stages import run_evaluate_stage, run_train_stage

    plugin_on_path(monkeypatch, tmp_path)
    params = only_domains(smoke_params, "blocksworld")
    params["jobs"] = 1
    params["evaluation"]["seeds"] = [13]
    params["methods"] = {
        "random_walk": {"horizon": 50},
        "example_ipc": {"method": "ipc_planner", "learn": [PY, str(EXAMPLES / "ipc_planner" / "learn.py")],
                        "plan": [PY, str(EXAMPLES / "ipc_planner" / "plan.py")], "learn_time_limit": 60,
                        "memory_limit_mb": 4096},
        "example_plugin": {"method": "goal_count_gbfs", "max_expansions": 5000},
    }
    generate(params, layout)
    run_plan_stage(params, layout)
    for row in params["methods"]:
        run_train_stage(params, layout, row)
        run_evaluate_stage(params, layout, row)
    train = (layout.models / "example_ipc" / "train.json").read_text()
    assert '"learn": "ok"' in train and (layout.models / "example_ipc" / "blocksworld" / "dk").is_file()
    for row in ("example_ipc", "example_plugin"):
        recs = read_jsonl(layout.results / f"{row}.jsonl")
        assert recs and all(r["outcome"] == "solved" and r["validated"] for r in recs), row
    # the stage inputs hash the outside planner's programs and the plugin's sources
    ipc_inputs = method_inputs("evaluate", "example_ipc", params, layout)
    assert str(EXAMPLES / "ipc_planner" / "plan.py") in ipc_inputs["files"]
    plugin_inputs = method_inputs("evaluate", "example_plugin", params, layout)
    assert "plugin:planarena_example_plugin/__init__.py" in plugin_inputs["code"]
    report(params, layout, tmp_path / "reports")
    front = (tmp_path / "reports" / "leaderboard.md").read_text()
    assert "example_ipc" in front and "example_plugin" in front


def test_a_planarena_method_under_the_ipc_contract(tmp_path):
    """`planarena learn DK DOMAIN TASK...` then `planarena plan DK DOMAIN TASK PLAN`: the tiny
    domain's problem, learned by WL-GOOSE (GBFS with a learned WL heuristic), planned and validated."""
    import subprocess

    from planarena.core.validation import validate_plan
    from planarena.core.pddl import read_plan_file

    exe = [PY, "-m", "planarena.cli"]
    dk = tmp_path / "dk"
    domain, task = TINY / "domain.pddl", TINY / "three.pddl"
    learned = subprocess.run([*exe, "learn", str(dk), str(domain), str(task), "--method", "wl_goose",
                              "--params", str(ROOT / "params.yaml")], capture_output=True, text=True, cwd=tmp_path)
    assert learned.returncode == 0, learned.stderr[-2000:]
    assert (dk / "planarena-dk.json").is_file() and "learn: train wl_goose" in learned.stderr
    plan = tmp_path / "plan"
    planned = subprocess.run([*exe, "plan", str(dk), str(domain), str(task), str(plan)], capture_output=True,
                             text=True, cwd=tmp_path)
    assert planned.returncode == 0, planned.stderr[-2000:]
    assert validate_plan(domain, task, read_plan_file(plan)).valid
    missing = subprocess.run([*exe, "plan", str(tmp_path), str(domain), str(task), str(plan)], capture_output=True,
                             text=True, cwd=tmp_path)
    assert missing.returncode == 1 and "must be a folder written by `planarena learn`" in missing.stderr


def test_the_ipc2026_compile_and_run_form(tmp_path):
    """`ipc2026: {source, compile, run}`: the source is copied and compiled once in the copy; each
    problem runs `run DOMAIN PROBLEM PLANFILE` from a fresh folder; a failed compile is every
    attempt's reason. The "compiler" makes the planner executable, as a build step would."""
    src = tmp_path / "planner"
    src.mkdir()
    script(src, "compile", """\
        #!/bin/sh
        cp solve.in solve && chmod +x solve
    """).chmod(0o755)
    script(src, "solve.in", f"""\
        #!{PY}
        import sys
        plan = ["(unstack b a)", "(stack b c)", "(pick-up a)", "(stack a b)"]
        open(sys.argv[3], "w").write(chr(10).join(plan))
    """)
    row_block = {"method": "ipc_planner", "ipc2026": {"source": str(src), "compile": "./compile", "run": "./solve"}}
    row = IPCPlanner("outside26", row_block, {}, Layout(root=tmp_path / "data"))
    assert row.input_files == (src,)
    models = tmp_path / "data" / "models" / "outside26"
    facts = row.train(models)
    assert facts["compile"] == "ok" and (models / "build" / "solve").is_file()
    assert not (src / "solve").exists()   # the source folder is never written to
    (models / "train.json").write_text('{"status": "ok", "compile": "ok"}')
    row.load(models)
    task = PlanningTask(type("E", (), {"domain": "tiny"})(), TINY / "domain.pddl", TINY / "three.pddl", 10)
    attempt = row.solve(task, 13)
    assert attempt.outcome == "solved" and attempt.plan == ["(unstack b a)", "(stack b c)", "(pick-up a)", "(stack a b)"]

    (models / "train.json").write_text('{"status": "ok", "compile": "exit code 2"}')
    (models / "compile.log").write_text("make: *** no rule to make target\n")
    row.load(models)
    failed = row.solve(task, 13)
    assert failed.outcome == "error" and failed.failure_reason.startswith("compile: exit code 2: make: ***")

    with pytest.raises(ConfigError, match="methods.x.ipc2026: the IPC 2026 form replaces"):
        IPCPlanner("x", {**row_block, "plan": "p"}, {}, Layout(root=tmp_path))
    with pytest.raises(ConfigError, match=r"methods.x.ipc2026 has unknown key\(s\) \['comple'\]"):
        IPCPlanner("x", {"method": "ipc_planner", "ipc2026": {"source": str(src), "run": "r", "comple": "c"}}, {},
                   Layout(root=tmp_path))
    with pytest.raises(ConfigError, match="is not a folder"):
        IPCPlanner("x", {"method": "ipc_planner", "ipc2026": {"source": str(tmp_path / "nope"), "run": "r"}}, {},
                   Layout(root=tmp_path))
