"""Malformed inputs: every entry point gives one line naming the user's file, what is wrong and
where, exits with status 1 and shows no traceback. The corpus is ``tests/fixtures/bad/`` (its README
lists what is wrong with each file)."""

import os
import re
import shutil
import subprocess
import sys

import pytest
import yaml
from conftest import ROOT, TINY

from planarena.cli import main

BAD = ROOT / "tests" / "fixtures" / "bad"
DOMAIN = TINY / "domain.pddl"
PROBLEM = TINY / "three.pddl"
PLAN = TINY / "three.plan"

#: (file, role, key words of the message)
PDDL_CASES = [
    ("unbalanced.pddl", "problem", ["unbalanced parentheses", "never closed"]),
    ("undeclared_predicate.pddl", "problem", ["ontablex", "undefined"]),
    ("undeclared_object.pddl", "problem", ["object", '"d"', "undefined"]),
    ("other_domain.pddl", "problem", ["gripper", "tinyblocks"]),
    ("durative_domain.pddl", "domain", ["declares :durative-actions, which planarena does not support", "temporal planning"]),
    ("empty.pddl", "domain", ["empty domain file"]),
    ("empty.pddl", "problem", ["empty problem file"]),
    ("binary.pddl", "problem", ["binary content"]),
    ("latin1.pddl", "problem", ["not UTF-8", "0xe9"]),
]

PLAN_CASES = [
    ("unknown_action.plan", ["step 4", "(fly a b)", "unknown action 'fly'"]),
    ("wrong_arity.plan", ["step 2", "(stack b)", "takes 2 arguments", "got 1"]),
    ("inapplicable.plan", ["step 2", "(pick-up a)", "precondition (handempty) does not hold"]),
    ("goal_not_reached.plan", ["goal not reached after 2 steps", "(on a b) does not hold"]),
    ("empty.plan", ["goal not reached after 0 steps", "(on a b), (on b c) do not hold"]),
]


def run_cli(args, capsys, monkeypatch) -> tuple[int, str]:
    """``planarena <args>`` in this process: (exit status, stdout + stderr)."""
    monkeypatch.setattr(sys, "argv", ["planarena", *map(str, args)])
    monkeypatch.delenv("PLANARENA_DEBUG", raising=False)
    code = 0
    try:
        main()
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    out = capsys.readouterr()
    return code, out.out + out.err


def assert_one_clear_line(code: int, output: str, path, words: list[str]) -> None:
    assert code == 1, output
    assert "Traceback" not in output
    lines = [ln for ln in output.splitlines() if str(path) in ln]
    assert len(lines) == 1, output
    for w in words:
        assert w in lines[0], (w, lines[0])


@pytest.mark.parametrize("name,role,words", PDDL_CASES, ids=[f"{c[0]}-{c[1]}" for c in PDDL_CASES])
@pytest.mark.parametrize("command", ["validate", "plan-problem"])
def test_malformed_pddl_through_the_cli(name, role, words, command, capsys, monkeypatch):
    bad = BAD / name
    files = [bad, PROBLEM] if role == "domain" else [DOMAIN, bad]
    args = [command, *files, PLAN] if command == "validate" else [command, *files, "--time-limit", "5"]
    code, output = run_cli(args, capsys, monkeypatch)
    assert_one_clear_line(code, output, bad, words)
    assert output.startswith("error: ")


@pytest.mark.parametrize("name,words", PLAN_CASES, ids=[c[0] for c in PLAN_CASES])
def test_bad_plans_through_the_cli(name, words, capsys, monkeypatch):
    plan = BAD / name
    code, output = run_cli(["validate", DOMAIN, PROBLEM, plan], capsys, monkeypatch)
    assert_one_clear_line(code, output, plan, ["invalid", *words])


def test_valid_plan_prints_its_cost(capsys, monkeypatch):
    code, output = run_cli(["validate", DOMAIN, PROBLEM, PLAN], capsys, monkeypatch)
    assert code == 0
    assert output.strip() == f"valid: {PLAN}: 4 steps, cost 4"


def test_directory_and_missing_file_through_the_cli(tmp_path, capsys, monkeypatch):
    code, output = run_cli(["validate", DOMAIN, PROBLEM, tmp_path], capsys, monkeypatch)
    assert_one_clear_line(code, output, tmp_path, ["is a directory", "plan file"])
    missing = tmp_path / "nope.pddl"
    code, output = run_cli(["plan-problem", DOMAIN, missing], capsys, monkeypatch)
    assert_one_clear_line(code, output, missing, ["problem file not found"])


def test_debug_shows_the_traceback(capsys, monkeypatch):
    monkeypatch.setenv("PLANARENA_DEBUG", "0")  # restored after the test (--debug sets it to 1)
    monkeypatch.setattr(sys, "argv", ["planarena", "--debug", "validate", str(DOMAIN), str(BAD / "binary.pddl"), str(PLAN)])
    with pytest.raises(ValueError, match="binary content"):
        main()


def test_console_script_exits_1_without_traceback():
    """The installed entry point (not only ``main`` in-process) and ``--help``'s exit codes."""
    exe = shutil.which("planarena", path=str(ROOT / ".venv" / "bin")) or shutil.which("planarena")
    if exe is None:
        pytest.skip("the planarena console script is not installed")
    env = {k: v for k, v in os.environ.items() if k != "PLANARENA_DEBUG"}
    proc = subprocess.run([exe, "validate", DOMAIN, BAD / "latin1.pddl", PLAN], capture_output=True, text=True,
                          env=env)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert proc.stderr.startswith(f"error: {BAD / 'latin1.pddl'}:1:")
    helptext = subprocess.run([exe, "--help"], capture_output=True, text=True).stdout
    assert "Exit codes" in " ".join(helptext.split())


# ------------------------------------------------------------------------------ the generate stage


def _suite(root, problems: dict, domain_text: str | None = None, splits=("train", "validation",
                                                                          "interpolation", "extrapolation")):
    """A SATr-layout suite with one domain ``tiny``: ``problems`` maps split/file name -> bytes."""
    d = root / "tiny"
    d.mkdir(parents=True)
    for split in splits:
        (d / split).mkdir()
    (d / "domain.pddl").write_text(domain_text if domain_text is not None else DOMAIN.read_text())
    for rel, data in problems.items():
        (d / rel).write_bytes(data)
    return root


def _generate(tmp_path, suite_root, capsys, monkeypatch) -> tuple[int, str]:
    """``planarena stage generate`` on the SATr suite at ``suite_root``, in a workspace in ``tmp_path``."""
    doc = yaml.safe_load((ROOT / "params.yaml").read_text())
    doc["profile"] = "smoke"
    doc["suite"] = "satr"
    doc["suites"]["satr"].update(path=str(suite_root), domains=["tiny"], max_per_split=None)
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    (ws / "params.yaml").write_text(yaml.safe_dump(doc))
    monkeypatch.chdir(ws)
    return run_cli(["stage", "generate"], capsys, monkeypatch)


@pytest.mark.parametrize("name,role,words", PDDL_CASES, ids=[f"{c[0]}-{c[1]}" for c in PDDL_CASES])
def test_malformed_pddl_through_generate(name, role, words, tmp_path, capsys, monkeypatch):
    data = (BAD / name).read_bytes()
    if role == "domain":
        root = _suite(tmp_path / "suite", {"train/p1.pddl": PROBLEM.read_bytes()}, data.decode())
        user_file = root / "tiny" / "domain.pddl"
    else:
        root = _suite(tmp_path / "suite", {f"train/{name}": data})
        user_file = root / "tiny" / "train" / name
    code, output = _generate(tmp_path, root, capsys, monkeypatch)
    assert_one_clear_line(code, output, user_file, words)
    assert "problems.partial" not in output and "data/problems/tiny" not in output  # the user's file


def test_generate_reports_every_bad_file_and_keeps_the_last_good_suite(tmp_path, capsys, monkeypatch):
    good = _suite(tmp_path / "good", {"train/p1.pddl": PROBLEM.read_bytes()})
    code, _ = _generate(tmp_path, good, capsys, monkeypatch)
    assert code == 0
    manifest = (tmp_path / "ws" / "data" / "problems" / "manifest.jsonl").read_bytes()

    bad = _suite(tmp_path / "bad", {"train/p1.pddl": PROBLEM.read_bytes(),
                                    "train/b.pddl": (BAD / "binary.pddl").read_bytes(),
                                    "validation/u.pddl": (BAD / "undeclared_object.pddl").read_bytes(),
                                    "extrapolation/x.pddl": (BAD / "unbalanced.pddl").read_bytes()},
                 splits=("train", "validation", "extrapolation"))
    (bad / "tiny" / "train" / "dir.pddl").mkdir()
    code, output = _generate(tmp_path, bad, capsys, monkeypatch)
    assert code == 1 and "Traceback" not in output
    errors = [ln for ln in output.splitlines() if ln.startswith("error: ")]
    for what in ["tiny/interpolation: missing split folder", "b.pddl:1:", "dir.pddl: is a directory",
                 "u.pddl:6:", "x.pddl:"]:
        assert sum(what in ln for ln in errors) == 1, (what, errors)
    assert len(errors) == 6 and "5 bad input(s)" in errors[-1]
    # nothing already computed is lost: the last good suite is still there
    assert (tmp_path / "ws" / "data" / "problems" / "manifest.jsonl").read_bytes() == manifest


def test_untyped_domain_with_typed_objects_is_read_as_typed(tmp_path, capsys, monkeypatch):
    """IPC 2023 Blocksworld: ``:strips`` only, objects ``- object``; copied with ``:typing`` added
    and a warning naming the user's domain file."""
    typed = PROBLEM.read_text().replace("(:objects a b c)", "(:objects a b c - object)")
    root = _suite(tmp_path / "suite", {"train/p1.pddl": typed.encode()})
    code, output = _generate(tmp_path, root, capsys, monkeypatch)
    assert code == 0, output
    assert f"warning: {root / 'tiny' / 'domain.pddl'}: declares no :typing" in output
    copy = (tmp_path / "ws" / "data" / "problems" / "tiny" / "domain.pddl").read_text()
    assert re.search(r"\(:requirements[^)]*:typing", copy) and ":strips" in copy
    # the CLI reads such files leniently too
    code, output = run_cli(["validate", DOMAIN, root / "tiny" / "train" / "p1.pddl", PLAN], capsys, monkeypatch)
    assert code == 0 and any(ln.startswith("valid: ") for ln in output.splitlines()), output
    assert f"warning: {DOMAIN}: declares no :typing" in output
