"""A claim's workspace keeps the code its run began with: a resumed run does not copy the working
tree's code again (which changed the training units' keys and retrained them), a run begun on
another machine takes its commit's code out of git, and --fresh-code copies anew."""

import json
import os
import subprocess

import pytest

from planarena.claims import partial, workspace
from planarena.claims.spec import load_claim

CLAIM = """
id: pinned
paper: state-centric-transition-models
where: Table 1
claim: Delta beats the random walk.
experiment:
  suite: generated
  methods: [wl_xgb_delta, random_walk]
  seeds: [13]
cost: {cpu_minutes: 5}
gate:
  - {at_least: [wl_xgb_delta, 0.5], split: validation}
confirm:
  - {better: [wl_xgb_delta, random_walk], split: extrapolation}
refute:
  - {not_better: [wl_xgb_delta, random_walk], split: extrapolation}
"""


@pytest.fixture
def claim(tmp_path):
    path = tmp_path / "pinned.yaml"
    path.write_text(CLAIM)
    return load_claim(path)


def _work(tmp_path):
    work = tmp_path / "ws"
    (work / ".git").mkdir(parents=True)   # git and DVC are initialised once; the test skips that part
    (work / ".dvc").mkdir()
    return work


def _commit(rev: str) -> str:
    out = subprocess.run(["git", "rev-parse", "--short", rev], cwd=workspace.REPO, capture_output=True, text=True)
    if out.returncode:
        pytest.skip(f"this clone has no {rev} (a shallow clone)")
    return out.stdout.strip()


def test_a_resumed_run_keeps_its_code_and_fresh_code_copies_anew(tmp_path, claim, monkeypatch):
    monkeypatch.setattr(workspace, "git_head", lambda: "aaaaaaa")
    work, said = _work(tmp_path), []
    assert workspace.prepare(claim, work, echo=said.append) == "aaaaaaa"
    assert json.loads((work / workspace.CODE).read_text())["commit"] == "aaaaaaa"
    assert (work / "src" / "planarena" / "cli.py").read_text() == (workspace.REPO / "src/planarena/cli.py").read_text()
    ours = work / "src" / "planarena" / "cli.py"
    ours.write_text("# the code this run began with\n")
    params = (work / "params.yaml").read_text()
    monkeypatch.setattr(workspace, "git_head", lambda: "bbbbbbb")   # the project moved on
    assert workspace.prepare(claim, work, echo=said.append) == "aaaaaaa"
    assert ours.read_text() == "# the code this run began with\n" and (work / "params.yaml").read_text() == params
    assert "resuming with the code of commit aaaaaaa" in said[-1]
    assert workspace.prepare(claim, work, fresh_code=True, echo=said.append) == "bbbbbbb"
    assert ours.read_text() != "# the code this run began with\n"


def test_a_run_begun_elsewhere_takes_its_commits_code_out_of_git(tmp_path, claim):
    old = _commit("HEAD~1")
    work, said = _work(tmp_path), []
    assert workspace.prepare(claim, work, carried=old, echo=said.append) == old
    shown = subprocess.run(["git", "show", f"{old}:src/planarena/claims/spec.py"], cwd=workspace.REPO,
                           capture_output=True, text=True, check=True).stdout
    assert (work / "src" / "planarena" / "claims" / "spec.py").read_text() == shown
    assert f"began at commit {old}" in said[-1]
    # a commit git does not know: a warning, and the working tree's code
    other, said = _work(tmp_path / "b"), []
    head = workspace.prepare(claim, other, carried="0000000", echo=said.append)
    assert head == workspace.git_head() and "not in this repository's history" in said[-1]
    # a dirty commit cannot be given back: the working tree's code, silently
    third = _work(tmp_path / "c")
    assert workspace.prepare(claim, third, carried="abc1234-dirty", echo=lambda line: None) == workspace.git_head()


def test_a_partial_run_carries_its_commit(tmp_path):
    work, page = tmp_path / "ws", tmp_path / "page"
    work.mkdir()
    (work / workspace.CODE).write_text(json.dumps({"commit": "abc1234", "copied": "2026-11-29T01:00:00"}))
    unit = work / "data" / "cache" / "transformers" / "k.units" / "gripper" / "seed13"
    unit.mkdir(parents=True)
    (unit / "unit.json").write_text("{}")                     # trained after the code was copied
    partial.save(work, page)
    assert partial.commit(page) == "abc1234"
    assert "run with the code of commit abc1234" in partial.describe(page)
    assert partial.commit(tmp_path / "nothing") is None


def test_a_niced_claim_run_gives_its_new_session_the_same_niceness(tmp_path):
    """`nice -n 10 planarena claims run ...` starts `dvc repro` in a new session, which Linux puts in
    a new autogroup; the run gives that group its own nice value, or the scheduler would share the
    cores equally between it and the work beside it."""
    import subprocess
    import sys
    from pathlib import Path

    if not Path("/proc/self/autogroup").exists():
        pytest.skip("no autogroup scheduling on this kernel (/proc/self/autogroup missing)")
    code = ("import subprocess, sys\n"
            "from planarena.claims.run import inherit_niceness\n"
            "p = subprocess.Popen(['sleep', '5'], start_new_session=True)\n"
            "ok = inherit_niceness(p.pid)\n"
            "print(ok, open(f'/proc/{p.pid}/autogroup').read().split()[-1])\n"
            "p.kill()\n")
    out = subprocess.run(["nice", "-n", "7", sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["True", str(min(os.nice(0) + 7, 19))]  # nice adds to the caller's
    plain = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert plain.stdout.split()[0] == ("False" if os.nice(0) == 0 else "True")  # not niced: nothing to give
